"""Is a numeric answer stated in a text? Numbers in text, unit conversions, safe arithmetic.

Used to check hand-written labels (a dev answer must follow from its quote) and meant
for the reader (an answer must appear in the context units it points at): a number
counts as grounded when the text states it, up to the conversions its unit implies
(percent, thousand/million/billion, k/M/G prefixes, kWh/MWh/GWh, lbs/tons/kg,
hours/days), or when it is the value of an arithmetic expression over stated numbers.
Expressions are parsed with a whitelist walk of Python's AST, never ``eval``: they
come from labels or from a model's reply.
"""
from __future__ import annotations

import ast
import math
import operator
import re
import unicodedata

from stages.core.common.values import close
from stages.core.common.vocab import UNIT_FACTORS

# value = stated number * factor, whatever the unit: magnitudes and percent <-> fraction
MAGNITUDE_FACTORS = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9, 1e12, 1e-12, 100.0, 0.01)
# conversions between units of one kind, by the unit's spelling (lower case, substring match)
MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 300  # beyond a float's range: not a number written in scientific notation

MAGNITUDE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# a magnitude letter glued to the digits: "$100k", "8B parameters", "$40M", "1.25T tokens"
MAGNITUDE_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_NUM = re.compile(
    r"(?<![\w.])[-−]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s*[xX×]\s*10\^?\s*([-−]?\d+)|[eE]([+-−]?\d+))?"
    rf"(?:\s*((?i:{'|'.join(MAGNITUDE_WORDS)}))|([{''.join(MAGNITUDE_SUFFIXES)}])(?![A-Za-z]))?",
)
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow}


def numbers_in(text: str) -> list[float]:
    """Every number a text states, with thousands separators, exponents and magnitude words or
    suffixes ("5.6 billion" gives both 5.6 and 5.6e9, "$40M" both 40 and 4e7)."""
    out: list[float] = []
    t = unicodedata.normalize("NFKC", text).replace("−", "-")
    for m in _NUM.finditer(t):
        whole, frac, pow10, exp, word, suffix = m.groups()
        v = float(whole.replace(",", "") + (frac or ""))
        if m.group(0).lstrip().startswith("-"):
            v = -v
        if pow10 or exp:
            e = int((pow10 or exp).replace("−", "-"))
            if abs(e) > MAX_EXPONENT:  # "8 x 10 512" is a size and a count, not 8e512
                out.append(v)
                continue
            v *= 10.0 ** e
        out.append(v)
        if word:
            out.append(v * MAGNITUDE_WORDS[word.lower()])
        elif suffix:
            out.append(v * MAGNITUDE_SUFFIXES[suffix])
    return out


def unit_factors(unit: str | None) -> tuple[float, ...]:
    """The factors a value in this unit may differ from a stated number by."""
    u = (unit or "").lower()
    extra = tuple(f for keys, factors in UNIT_FACTORS if any(k in u for k in keys) for f in factors)
    return MAGNITUDE_FACTORS + tuple(f * m for f in extra for m in MAGNITUDE_FACTORS)


# units whose SI prefixes (k/M/G, m/u) a value may be converted through
_SI_UNITS = re.compile(r"wh\b|\bw\b|watt|\bk?g\b|gram|tonne|\bt\b|tco2|byte|\b[kmgt]?b\b|flop|joule|\bj\b|"
                       r"\b[kmgt]w\b|liter|litre|\bl\b|meter|metre", re.IGNORECASE)


def strict_unit_factors(unit: str | None) -> tuple[float, ...]:
    """The conversions the answer unit implies, and only those (the reader's grounding check):
    percent <-> fraction for percent units, SI prefixes for SI units, and the unit family's
    conversions (lbs/tons/kg, hours/days, ...). A bare magnitude change of a count ("32"
    for "32 billion" tokens) is not one; numbers_in already reads magnitude words."""
    u = (unit or "").lower()
    factors = [1.0]
    if "percent" in u or "%" in u or "fraction" in u or "share" in u:
        factors += [100.0, 0.01]
    si = (1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9) if _SI_UNITS.search(u) else ()
    factors += si
    family = [f for keys, fs in UNIT_FACTORS if any(k in u for k in keys) for f in fs]
    factors += family + [f * m for f in family for m in si]
    return tuple(factors)


def grounded_number(value: float, numbers: list[float], unit: str | None = None, strict: bool = False) -> bool:
    """True if the value is one of the numbers up to a factor its unit allows (sign ignored);
    ``strict``: only the factors the unit implies (`strict_unit_factors`), no bare magnitudes."""
    factors = strict_unit_factors(unit) if strict else unit_factors(unit)
    return any(close(abs(value), abs(n) * f) for n in numbers for f in factors)


def eval_arithmetic(expr: str) -> tuple[float, list[float]]:
    """Value and operands of ``+ - * / ^ ( )`` arithmetic over numbers; anything else raises ValueError.

    Names, calls, attributes, subscripts, exponents above 12 and expressions over
    MAX_EXPRESSION_CHARS are refused, so no input can run code or exhaust the machine.
    """
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    text = expr.replace("×", "*").replace("÷", "/").replace("−", "-").replace("^", "**")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not arithmetic: {expr!r}") from e
    operands: list[float] = []

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            operands.append(float(node.value))
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 12:
                raise ValueError("exponent too large")
            try:
                return float(_OPS[type(node.op)](left, right))
            except (ZeroDivisionError, OverflowError) as e:
                raise ValueError(f"{expr!r}: {e}") from e
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = walk(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        raise ValueError(f"not arithmetic: {ast.dump(node)[:60]}")

    try:
        value = walk(tree)
    except RecursionError as e:
        raise ValueError("expression nested too deeply") from e
    if not math.isfinite(value):
        raise ValueError(f"{expr!r} is not a finite number")
    return value, operands
