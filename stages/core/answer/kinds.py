"""The kind of answer a question wants, decided in code from the question and its answer unit."""
from __future__ import annotations

import re
from typing import Literal, get_args

from stages.core.common.values import BLANK

Kind = Literal["true_false", "numeric", "range", "text"]
KINDS: tuple[str, ...] = get_args(Kind)

TRUE_FALSE = re.compile(r"\s*true\s+or\s+false\b", re.IGNORECASE)
# "between 2019 and 2023" is a period, not a range answer: only "range" or "between (roughly) what"
_RANGE = re.compile(r"\brange\b|\bbetween\s+(?:roughly\s+|about\s+)?what\b", re.IGNORECASE)
# wording that asks for a value computed from stated ones (a difference, ratio, sum, percent change or
# conversion) rather than one the context states: "how many more", "by what factor", "combined", ...
_COMPUTE = re.compile(
    r"\bhow (?:many|much) (?:more|less|fewer|cheaper|larger|smaller|higher|lower|greater|longer|shorter)\b"
    r"|\bhow many times\b|\bby how (?:many|much)\b|\bby what (?:factor|percentage|percent|multiple)\b"
    r"|\bpercent(?:age)? change\b|\bdifference\b|\bratio\b|\bcombined\b|\badding\b|\bsum of\b"
    r"|\bconverted to\b", re.IGNORECASE)


def question_kind(question: str, unit: str) -> Kind:
    """The answer's type, from the question and its answer unit (never from the model)."""
    if TRUE_FALSE.match(question):
        return "true_false"
    if not unit or unit == BLANK:
        return "text"
    if _RANGE.search(question):
        return "range"
    return "numeric"


def asks_to_compute(question: str) -> bool:
    """Whether a numeric question's wording asks for a computed value (difference, ratio, sum,
    percent change, conversion): about half of the numeric answers the 1.5B missed are stated
    nowhere in the context, so no copied number can be right."""
    return bool(_COMPUTE.search(question))
