"""What a caption's first words look like ("Figure 3", "Fig. 2:", "Table 1", "Exhibit 4").

Extract uses it to find the caption next to an image; the tree builder to keep captions
out of headings and paragraphs, and (without tables, which have their own stricter pattern
in tree/tables/find.py) to end a table at the next figure's caption.
"""
from __future__ import annotations

import re

_FIGURE_WORDS = r"fig(?:ure)?s?|chart|exhibit|plate"
_NUMBER = r"\.?\s*([A-Z]?\d+|[IVXL]+)\b"

CAPTION = re.compile(rf"^\s*(fig(?:ure)?s?|tab(?:le)?|chart|exhibit|plate){_NUMBER}", re.I)
FIGURE_CAPTION = re.compile(rf"^\s*(?:{_FIGURE_WORDS}){_NUMBER}", re.I)
