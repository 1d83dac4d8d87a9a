"""Turn a model's raw answer fields into WattBot submission strings.

The metric (stages/core/score/metric.py) compares numbers within 0.1 %, ranges element-wise and
text case-insensitively, so every spelling of one answer must come out as one
string: plain decimals, ``[low,high]``, ``1``/``0`` for True/False, or ``is_blank``.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import NamedTuple

from stages.core.common.values import BLANK, close, is_blank
from stages.core.common.vocab import UNIT_ALIASES

_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}
_MAGNITUDE = {"k": 3, "thousand": 3, "m": 6, "million": 6, "b": 9, "bn": 9, "billion": 9,
              "t": 12, "trillion": 12}

# One number as people write it: hedge, currency, digits (thousands commas,
# decimals, e-notation), "x 10^n", a magnitude suffix (2B, 3.2k) or word (1.5 million).
# Suffix letters must touch the digits and end the word: "5MW" is not 5 million W.
_NUMBER = re.compile(
    r"""(?P<hedge>(?:~|≈|(?i:about|approximately|approx\.?|around|roughly|nearly|almost
                    |up\ to|over|more\ than|less\ than|at\ least|at\ most))\s*)*
        (?P<cur>\$|US\$|€|£)?\s*
        (?<![\w.])(?P<num>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+)
        (?:\s*[x×*]\s*10\s*\^\s*(?P<exp>[-+]?\d+))?
        (?:(?P<suf>k|K|M|B|bn|T)\b|\s*(?P<word>(?i:thousand|million|billion|trillion))\b)?
    """,
    re.X,
)
_RANGE = re.compile(
    r"(?:between|from)\s+(?P<a>.+?)\s+(?:and|to)\s+(?P<b>.+)|(?P<c>.+?)\s*(?:-|–|—|\bto\b)\s*(?P<d>.+)",
    re.I,
)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class _Num(NamedTuple):
    value: Decimal
    scale: int  # power of ten that a magnitude suffix/word contributed
    rest: str  # text after the number


def _is_blank_text(s: str) -> bool:
    return is_blank(s, lenient=True)


def _fmt(d: Decimal) -> str:
    """Plain decimal: no exponent, no trailing zeros, no '.0', no '-0'."""
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _parse_number(s: str) -> _Num | None:
    m = _NUMBER.match(s)
    if not m:
        return None
    magnitude = m["suf"] or m["word"]
    scale = _MAGNITUDE[magnitude.lower()] if magnitude else 0
    value = Decimal(m["num"].replace(",", "")).scaleb(int(m["exp"] or 0) + scale)
    return _Num(value, scale, s[m.end():].strip())


def _parse_range(s: str) -> str | None:
    """'10-20', '10 to 20', 'between 10 and 20', '5 to 10 million' -> '[low,high]'."""
    m = _RANGE.fullmatch(s)
    if not m:
        return None
    low, high = (_parse_number(x) for x in (m["a"] or m["c"], m["b"] or m["d"]))
    if low is None or high is None or re.search(r"\d", low.rest + high.rest):
        return None
    low_value = low.value
    if low.scale == 0 and high.scale:  # "5 to 10 million": the magnitude applies to both
        low_value = low_value.scaleb(high.scale)
    return f"[{_fmt(low_value)},{_fmt(high.value)}]"


def _unit_spellings(answer_unit: str) -> list[str]:
    """The unit and, for percent and USD, its other spellings. Multiplier spellings
    ('x') stay: removing them would break '2 x 10^6'; a tail 'x' is ignored anyway."""
    unit = answer_unit.strip()
    canonical = UNIT_ALIASES.get(unit.lower())
    if canonical in ("percent", "usd"):
        return [unit] + [k for k, v in UNIT_ALIASES.items() if v == canonical]
    return [unit]


def _strip_unit(s: str, answer_unit: str) -> str:
    """Remove the question's unit ('64.7 GB', '55%'), so '4.2 billion cubic meters'
    with unit 'billion cubic meters' reads as 4.2, not 4.2e9."""
    for u in _unit_spellings(answer_unit):
        s = re.sub(rf"(?<![A-Za-z]){re.escape(u)}(?![A-Za-z])", " ", s, flags=re.I)
    return s.strip()


def _format_list(items: list[str]) -> str:
    kept = [i for i in items if i != BLANK]
    if not kept:
        return BLANK
    return kept[0] if len(kept) == 1 else "[" + ",".join(kept) + "]"


def _normalize_text(text: str, answer_unit: str) -> str:
    """A free-text value: a number, a range, or text kept as written.

    With a unit, a leading number wins ('28 samples per batch' -> 28); without one
    (categorical questions) only a short digit-free tail is allowed ('2 papers')."""
    has_unit = not _is_blank_text(answer_unit)
    s = _strip_unit(text.replace("−", "-"), answer_unit) if has_unit else text.replace("−", "-")
    num = _parse_number(s)
    if num and not re.search(r"\d", num.rest) and (has_unit or len(num.rest.split()) <= 3):
        return _fmt(num.value)
    rng = _parse_range(s)
    if rng:
        return rng
    if num and has_unit and re.match(r"[^\W\d_]", num.rest):
        return _fmt(num.value)
    return text


def normalize_value(raw: object, answer_unit: str) -> str:
    """The submission string for a model's raw ``answer_value`` (any JSON type)."""
    if raw is None:
        return BLANK
    if isinstance(raw, bool):
        return "1" if raw else "0"
    if isinstance(raw, int):
        return _fmt(Decimal(raw))
    if isinstance(raw, float):
        return _fmt(Decimal(format(raw, ".15g"))) if math.isfinite(raw) else BLANK
    if isinstance(raw, (list, tuple)):
        return _format_list([normalize_value(x, answer_unit) for x in raw])
    text = str(raw).strip()
    low = text.lower().rstrip(".")
    if _is_blank_text(text):
        return BLANK
    if low in _TRUE:
        return "1"
    if low in _FALSE:
        return "0"
    if text.startswith("[") and text.endswith("]"):
        parts = [p.strip().strip("'\"") for p in text[1:-1].split(",")]
        return _format_list([normalize_value(p, answer_unit) for p in parts])
    return _normalize_text(text, answer_unit)


def _elements(v: str) -> list[str]:
    v = v.strip()
    return v[1:-1].split(",") if v.startswith("[") and v.endswith("]") else [v]


def _element_equal(a: str, b: str, rel_tol: float) -> bool:
    a, b = a.strip(), b.strip()
    if _PLAIN_NUMBER.fullmatch(a) and _PLAIN_NUMBER.fullmatch(b):
        return close(float(a), float(b), rel_tol=rel_tol)
    return a.lower() == b.lower()


def values_equal(a: str, b: str, rel_tol: float = 1e-3) -> bool:
    """Whether two normalised values are the same answer for voting: numbers within
    ``rel_tol`` relative, ranges element-wise, text case-insensitively."""
    if _is_blank_text(a) or _is_blank_text(b):
        return _is_blank_text(a) and _is_blank_text(b)
    xa, xb = _elements(a), _elements(b)
    return len(xa) == len(xb) and all(_element_equal(p, q, rel_tol) for p, q in zip(xa, xb))


def _dedupe(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in ids if i and not _is_blank_text(i)))


def format_ref_ids(ids: list[str]) -> str:
    """``['a','b']`` as the submission writes it; ``is_blank`` for no ids."""
    clean = _dedupe([i.strip() for i in ids])
    return "[" + ",".join(f"'{i}'" for i in clean) + "]" if clean else BLANK
