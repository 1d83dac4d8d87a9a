"""How an analyst-style answer reads in the submission (answer.style analyst), apart from how it is
asked (analyst.py), so the vote stage writes it without importing the reader."""
from __future__ import annotations

from collections.abc import Sequence

REFUSAL = "Not answered: the retrieved passages of the filings do not state what this question asks."


def cited(text: str, refs: Sequence[str]) -> str:
    """The text followed by the filings it comes from: "... (3M_2018_10K)"."""
    return f"{text} ({', '.join(refs)})" if refs else text
