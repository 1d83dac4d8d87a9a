"""Which of several things is the highest or the lowest by a number (answer.style analyst).

"Which segment had the highest net income?", "which region had the biggest drop in revenue?": the
answer is a name, but deciding it means comparing numbers, which a small reader does badly while it
copies them well. So the reader lists the candidates the context compares, each with its number as
the context writes it, and code picks the extreme. A candidate counts only when its number is one the
context states (a typed placeholder decides nothing); with fewer than two such candidates the
reader's own answer stands, as a name question's would.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_reader import Reading, pointers_in

MAX_CANDIDATES = 8
NAME_MAX_CHARS = 80
TOKENS_PER_CANDIDATE = 28  # a name and a number in JSON
_HIGH = r"highest|largest|biggest|greatest|most|maximum|best|top"
_LOW = r"lowest|smallest|least|fewest|minimum|worst"
# the first superlative of a "which ..." question says which end wins ("which brought in the most (or lost the
# least) cash"); one followed by a fall ("the biggest drop in revenue") asks for the steepest fall
_WHICH = re.compile(r"\bwhich\b", re.IGNORECASE)
_SUPERLATIVE = re.compile(rf"\b(?:(?P<high>{_HIGH})|(?P<low>{_LOW}))\b(?P<after>(?:\W+\w+){{0,2}})", re.IGNORECASE)
_FALL = re.compile(r"\b(?:drops?|declines?|decreases?|falls?|reductions?|contractions?)\b", re.IGNORECASE)
# a number as a context writes it: "(473)", "-0.6%", "$3,725", "32,502"
_NUMBER = re.compile(r"(\(?)[-−]?\$?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?")

INSTRUCTION = ('List every candidate the question compares, each with its number copied exactly from the units '
               '(a loss or a fall as a negative number), then name the one that answers the question. Reply '
               '{"units": [...], "candidates": [{"name": string, "value": number}, ...], "answer": string}.')


@dataclass(frozen=True)
class Choice:
    """What a superlative question asks: the highest value (else the lowest), of falls (the values are drops)."""

    highest: bool
    fall: bool = False


def asked_choice(question: str) -> Choice | None:
    """The choice a "which ... highest / lowest ..." question asks, or None (no "which", or no superlative
    after it, in its first sentence)."""
    first = question.split("?", 1)[0]
    which = _WHICH.search(first)
    if which is None:
        return None
    m = _SUPERLATIVE.search(first, which.end())
    if m is None:
        return None
    return Choice(highest=m.group("high") is not None, fall=_FALL.search(m.group("after")) is not None)


def schema_fields() -> dict[str, Any]:
    """The reply's fields after its units: the candidates, then the reader's own answer."""
    candidate = {"type": "object", "properties": {"name": {"type": "string", "maxLength": NAME_MAX_CHARS},
                                                  "value": {"type": "number"}}, "required": ["name", "value"]}
    return {"candidates": {"type": "array", "items": candidate, "minItems": 1, "maxItems": MAX_CANDIDATES},
            "answer": {"type": "string", "maxLength": NAME_MAX_CHARS}}


def max_tokens() -> int:
    return 24 + TOKENS_PER_CANDIDATE * MAX_CANDIDATES + NAME_MAX_CHARS // 3


def stated_numbers(text: str) -> dict[float, bool]:
    """Every number a text writes, by its size, and whether it is ever written negative (in parentheses
    or after a minus sign) and never positive."""
    out: dict[float, bool] = {}
    for m in _NUMBER.finditer(text):
        size = float(m.group(2).replace(",", "") + (m.group(3) or ""))
        negative = bool(m.group(1)) and m.group(0).endswith(")") or m.group(0).lstrip("($ ").startswith(("-", "−"))
        out[size] = out.get(size, True) and negative
    return out


def grounded(candidates: Any, units: Sequence[ContextBlock]) -> list[tuple[str, float]]:
    """The candidates whose number the context states, each name once, with the context's sign where it
    writes that number only as negative (a reader drops a parenthesised loss's sign)."""
    stated: dict[float, bool] = {}
    for u in units:
        for size, negative in stated_numbers(u.text).items():
            stated[size] = stated.get(size, True) and negative
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    for c in candidates if isinstance(candidates, list) else []:
        if not isinstance(c, dict):
            continue
        name, value = " ".join(str(c.get("name") or "").split()), c.get("value")
        if not name or name.lower() in seen or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        size = abs(float(value))
        if size in stated:
            seen.add(name.lower())
            out.append((name, -size if stated[size] else float(value)))
    return out


def pick(choice: Choice, found: Sequence[tuple[str, float]]) -> tuple[str, float] | None:
    """The candidate that answers the choice; None with fewer than two candidates or a tie at the extreme.
    Falls written as positive sizes (no candidate negative) are compared by size."""
    if len(found) < 2:
        return None
    highest = choice.highest
    if choice.fall and any(v < 0 for _, v in found):
        highest = not highest  # the biggest drop is the most negative change
    best = (max if highest else min)(v for _, v in found)
    winners = [c for c in found if c[1] == best]
    return winners[0] if len(winners) == 1 else None


def read_choice(choice: Choice, data: dict[str, Any] | None, units: Sequence[ContextBlock]) -> Reading:
    """The chosen candidate's name, with the compared numbers as the explanation; the reader's own answer
    when the stated candidates do not decide; blank when neither is given."""
    data = data or {}
    pointers = pointers_in(data, len(units))
    found = grounded(data.get("candidates"), units)
    chosen = pick(choice, found)
    if chosen is not None:
        end = "largest" if choice.highest else "smallest"
        word = f"{end} fall" if choice.fall else "highest" if choice.highest else "lowest"
        compared = "; ".join(f"{n}: {v:,.12g}" for n, v in found)
        return Reading(chosen[0], pointers, grounded=True,
                       expression=f"{chosen[0]} is the {word} of the figures the filing states ({compared}).")
    own = " ".join(str(data.get("answer") or "").split())
    return Reading(own, pointers, grounded=bool(pointers)) if own else Reading(pointers=pointers)
