"""How an analyst-style answer reads in the submission (answer.style analyst), apart from how it is
asked (analyst.py), so the vote stage writes it without importing the reader."""
from __future__ import annotations

from collections.abc import Sequence

from stages.core.common.values import BLANK

REFUSAL = "Not answered: the retrieved passages of the filings do not state what this question asks."


def cited(text: str, refs: Sequence[str]) -> str:
    """The text followed by the filings it comes from: "... (3M_2018_10K)"."""
    return f"{text} ({', '.join(refs)})" if refs else text


def submission_unit(given: str, answered: str) -> str:
    """The unit column: the questions file's, else the answer's own; none (empty) for an answer in words."""
    unit = (given or "").strip() or (answered or "").strip()
    return "" if unit == BLANK else unit
