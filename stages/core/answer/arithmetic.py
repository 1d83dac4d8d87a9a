"""Arithmetic done by code: the model names the operation and copies its operands.

Asked to write "a - b" itself, the 1.5B reader subtracts the wrong way, divides by the
wrong base for a percent change, forgets to convert "1.3 GW" before taking 445 MW from
it, and prints 2.1666666 where the label says 2.17. Here its
reply is `{"operation": "difference", "a": 5.50, "b": 2.79}`: two numbers copied from the
context units and one word. Code reads each operand back as the context writes it (its
magnitude and unit, `restate.py`, so "1.3" of "1.3 GW" counts 1300 in an answer in MW),
computes, takes the direction a question's wording implies ("fall", "how many times
larger": the magnitude, the larger over the smaller) and rounds like a person writing the
answer down (`COMPUTE_DECIMALS`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal, get_args

from stages.core.answer.restate import mentions, restate, significant_digits

Operation = Literal["none", "difference", "sum", "ratio", "percent_change", "product"]
OPERATIONS: tuple[str, ...] = get_args(Operation)
# a computed answer keeps 2 decimals (3 significant digits below 1), as a person writes a result down and as
# the labels do: 2.17, not 2.1666666
COMPUTE_DECIMALS = 2
RUNAWAY_MIN = 1e12  # an operand this large written as one or two digits and zeros is a runaway (`runaway`)
_SYMBOL = {"difference": "-", "sum": "+", "ratio": "/", "product": "*"}
# an answer unit that is a pure number: operands keep their own unit (a ratio of two energies)
_UNITLESS = re.compile(r"percent|%|fraction|share|ratio|multiplier|times|factor|fold|x\b", re.IGNORECASE)
_TIMES = re.compile(r"multiplier|times|factor|fold|\bx\b", re.IGNORECASE)
_GROWTH = re.compile(r"\b(?:increase|increased|grow|grew|grown|growth|rise|rose|risen|more|higher|larger|greater)\b",
                     re.IGNORECASE)


# the operation a question's wording names; the 1.5B often answers "difference" to "how many times more"
# or to "by what percentage did it fall"
_ASKS_POINTS = re.compile(r"\bpercentage points?\b", re.IGNORECASE)
_ASKS_PERCENT_CHANGE = re.compile(
    r"\bby (?:what|how many) (?:percent|percentage)\b|\bpercent(?:age)? (?:increase|decrease|reduction|drop|fall|"
    r"decline|rise|growth|change|saving|savings)\b|\bby how much\b.*\b(?:percent|percentage|%)", re.IGNORECASE)
_ASKS_RATIO = re.compile(r"\bhow many times\b|\bby what factor\b|\bwhat factor\b|\bhow many-?fold\b", re.IGNORECASE)
_ASKS_DIFFERENCE = re.compile(
    r"\bhow (?:many|much) (?:more|fewer|less|cheaper|lower|higher|larger|smaller|greater|longer|shorter|faster|"
    r"slower)\b|\bby how (?:many|much)\b", re.IGNORECASE)




def operation_asked(question: str, unit: str) -> str | None:
    """The operation the question's wording names (percent change, ratio or difference), or None
    when it names none or several could be meant."""
    if _ASKS_POINTS.search(question):
        return "difference"
    percent = re.search(r"percent|%", unit or "", re.IGNORECASE) is not None
    if _ASKS_PERCENT_CHANGE.search(question) and (percent or not unit):
        return "percent_change"
    if _ASKS_RATIO.search(question) or (_TIMES.search(unit or "") and not _ASKS_DIFFERENCE.search(question)):
        return "ratio"
    if _ASKS_DIFFERENCE.search(question) and not percent:
        return "difference"
    return None


def operand_value(x: float, unit: str, pointed: Sequence[str], others: Sequence[str]) -> float:
    """An operand as the context states it: in the answer unit when it is a quantity (restated from
    its mention), else with its own magnitude put back ("$800M" copied as 800 stays 800 next to 40)."""
    return restate(x, pointed, others, "" if _UNITLESS.search(unit or "") else unit)


def runaway(x: float) -> bool:
    """An operand the model ran away on: a digit or two, then zeros up to the JSON grammar's 16-digit
    limit ("b": 4000000000000000.0000000000000000e-0 for the "40" of "$40M")."""
    return math.isfinite(x) and abs(x) >= RUNAWAY_MIN and len(significant_digits(x)) <= 2


def unrunaway(x: float, other: float, pointed: Sequence[str], others: Sequence[str]) -> float:
    """A runaway operand as the number the context writes with the same leading digits, the one
    nearest the other operand in magnitude ("40" next to 800, not "4"); x when none does."""
    if not runaway(x):
        return x
    lead = significant_digits(x)
    for texts in (pointed, others):
        found = [m.digits for t in texts for m in mentions(t)
                 if m.digits and significant_digits(m.digits) == lead and not runaway(m.digits)]
        if found:
            ref = abs(other) if other else 1.0
            return min(found, key=lambda d: abs(math.log10(abs(d)) - math.log10(ref)))
    return x


def rounded(v: float, decimals: int) -> float:
    """v with ``decimals`` decimals (at least 3 significant digits for |v| < 1); negative: unrounded."""
    if decimals < 0 or v == 0 or not math.isfinite(v):
        return v
    if abs(v) < 1:
        return round(v, max(decimals, 2 - math.floor(math.log10(abs(v)))))
    return round(v, decimals)


def rounded_conversion(v: float, copied: float) -> float:
    """A copied number the reader converted (`restate`: "52 hours" read as 52 for days) rounded like
    a computed one: 2.1666 -> 2.17. A change by a power of ten (kWh -> MWh, "772 billion") is exact
    and stays as it is."""
    if v == copied or copied == 0 or not math.isfinite(v):
        return v
    ratio = abs(v / copied)
    if abs(math.log10(ratio) - round(math.log10(ratio))) < 1e-9:
        return v
    return rounded(v, COMPUTE_DECIMALS)


def compute(operation: str, a: float, b: float | None, question: str, unit: str,
            pointed: Sequence[str] = (), others: Sequence[str] = ()) -> tuple[float, str] | None:
    """(value, expression) of the operation on the operands read back from the context, or None when
    the operation is unknown, needs a b that is missing, or divides by zero. "none" is a in the answer
    unit (a number the context states); a difference is a magnitude; a ratio answered as a multiplier
    ("how many times larger") is at least 1; a percent change divides by the value it changed from:
    the larger of the two for a fall, the smaller for a growth (the model's order is not trusted).
    A difference, ratio or percent change of two numbers is the one the question's wording names
    (`operation_asked`), whichever of the three the model chose."""
    if operation not in OPERATIONS:
        return None
    if b is not None:  # the grammar lets the model write zeros up to 16 digits; one operand is then a runaway
        a, b = unrunaway(a, b, pointed, others), unrunaway(b, a, pointed, others)
    if operation in ("difference", "ratio", "percent_change") and b:
        operation = operation_asked(question, unit) or operation  # two numbers given: the wording decides how
    va = operand_value(a, unit, pointed, others)
    if operation == "none":  # copied; rounded only when converted ("52 hours" -> 2.17 days)
        return (va, f"{a:g}") if va == a else (rounded(va, COMPUTE_DECIMALS), f"{a:g} converted to {unit}")
    if b is None:
        return None
    vb = operand_value(b, unit, pointed, others)
    if operation == "difference":
        v, expr = abs(va - vb), f"{max(va, vb):g} - {min(va, vb):g}"
    elif operation == "sum":
        v, expr = va + vb, f"{va:g} + {vb:g}"
    elif operation == "product":
        v, expr = va * vb, f"{va:g} * {vb:g}"
    elif operation == "ratio":
        if _TIMES.search(unit or "") and abs(va) < abs(vb):
            va, vb = vb, va
        if vb == 0:
            return None
        v, expr = va / vb, f"{va:g} / {vb:g}"
    else:  # percent_change
        base = max(abs(va), abs(vb)) if not _GROWTH.search(question) else min(abs(va), abs(vb))
        if base == 0:
            return None
        v, expr = abs(va - vb) / base * 100, f"|{va:g} - {vb:g}| / {base:g} * 100"
    if not math.isfinite(v):
        return None
    return rounded(v, COMPUTE_DECIMALS), expr
