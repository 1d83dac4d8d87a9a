"""Answer values as the submission writes them: blanks, ref-id lists, numbers, closeness.

One definition of each, shared by the reader (normalising a model's reply), the vote,
the retrieval metrics and the scorer, so a value means the same thing everywhere.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

BLANK = "is_blank"

# what the competition host reads as "no answer" (DESIGN §3)
BLANK_TOKENS = frozenset({"", BLANK, "na", "n/a", "unable to answer with confidence based on the provided documents"})
# what a model also writes when it abstains (never a value we would submit)
_MODEL_ABSTENTIONS = frozenset({"nan"})
_UNABLE = "unable to answer"

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")
_BOOLEANS = {"true": 1.0, "false": 0.0}


def is_blank(value: object, *, lenient: bool = False) -> bool:
    """True for every spelling of "no answer" the host accepts (``is_blank``, empty, ``na``,
    ``n/a``, the "Unable to answer ..." sentence, one final period allowed).

    ``lenient`` (a model's reply, not a label): also ``nan``, any text starting "unable to
    answer" and any number of final periods."""
    if value is None:
        return True
    s = str(value).strip().lower()
    if lenient:
        low = s.rstrip(".")
        return low in BLANK_TOKENS or low in _MODEL_ABSTENTIONS or low.startswith(_UNABLE)
    return s.removesuffix(".").strip() in BLANK_TOKENS


_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_QUOTED_LIST = re.compile(r"""\s*(?:'[^']*'|"[^"]*")\s*(?:[,;]\s*(?:'[^']*'|"[^"]*")\s*)*""")


def parse_ref_ids(s: str | None) -> list[str]:
    """Ref ids in order, without repeats or blanks, from ``['a','b']``, ``["a"]``, ``a, b``,
    ``[a;b]``, ``a`` or ``is_blank``."""
    if is_blank(s):
        return []
    inner = str(s).strip().removeprefix("[").removesuffix("]")
    if _QUOTED_LIST.fullmatch(inner):  # every id quoted: a comma inside quotes is part of its id
        parts: list[str] = [a or b for a, b in _QUOTED.findall(inner)]
    else:
        parts = re.split(r"[,;]", inner)
    ids = (part.strip().strip("'\"").strip() for part in parts)
    return list(dict.fromkeys(i for i in ids if not is_blank(i, lenient=True)))


def ref_id_set(s: str | None) -> set[str]:
    """The lower-cased set of ref ids, as the metric compares them."""
    return {i.lower() for i in parse_ref_ids(s)}


def close(a: float, b: float, rel_tol: float = 1e-3, abs_tol: float = 1e-9) -> bool:
    """Equal within the metric's relative tolerance (0.1 %), so that what the reader, the vote and
    the grounding check call one value is one value to the metric (which adds abs_tol=1e-3)."""
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def parse_number(s: str | float | int | None) -> float | None:
    """A float from ``1438``, ``5,439,000``, ``1e6``, ``13.2%``, ``$2.5``; None if not a number.

    Submissions should carry bare numbers, but model output often keeps a
    thousands separator or a unit sign, which is not a wrong value.
    """
    if s is None or isinstance(s, bool):
        return None
    if isinstance(s, (int, float)):
        return float(s) if math.isfinite(s) else None
    t = s.strip().lstrip("~≈$").removesuffix("%").strip()
    if _THOUSANDS.fullmatch(t):
        t = t.replace(",", "")
    return float(t) if _NUMBER.fullmatch(t) else None


@dataclass(frozen=True)
class Range:
    """A two-number answer such as ``[0.02,0.1]`` (the bounds are sorted)."""

    low: float
    high: float


Scalar = float | str
Value = Scalar | Range | tuple[Scalar, ...] | None


def _parse_scalar(s: str) -> Scalar:
    t = s.strip().strip("'\"").strip()
    number = parse_number(t)
    if number is not None:
        return number
    return _BOOLEANS.get(t.lower(), t.lower())


def parse_value(s: str | None) -> Value:
    """An answer_value as None (blank), float, lower-cased text, Range or tuple (list).

    ``[x,y]`` of two numbers is a Range; ``[x]`` is the scalar x; other bracketed
    values are tuples. True/False read as 1/0.
    """
    if is_blank(s):
        return None
    t = str(s).strip()
    if not (t.startswith("[") and t.endswith("]")):
        return _parse_scalar(t)
    items = tuple(_parse_scalar(p) for p in re.split(r"[,;]", t[1:-1]) if p.strip())
    if len(items) == 1:
        return items[0]
    if len(items) == 2 and all(isinstance(i, float) for i in items):
        low, high = sorted(items)  # type: ignore[type-var]
        return Range(float(low), float(high))
    return items
