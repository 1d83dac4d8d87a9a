"""Which of several things is the highest or the lowest by a number (answer.style analyst).

"Which segment had the highest net income?", "which region had the biggest drop in revenue?": the
answer is a name, but deciding it means comparing numbers, which a small reader does badly while it
copies them well. So the reader lists the candidates the context compares, each with its number as
the context writes it, and code picks the extreme. A candidate counts only when the context writes its
number after its name, before any other candidate's (a typed placeholder, or another row's number,
decides nothing); with fewer than two such candidates the reader's own answer stands, as a name
question's would.
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
# a candidate's number stands after its name in its row or sentence, at most this many characters on
NAME_REACH = 200
# with no more than this many words between them ("Asia: 2,100", "Asia was 2,100", not "Asia: 1,050 | Europe: 2,100")
MAX_WORDS_BETWEEN = 1
_SCALE_WORDS = {"thousand", "thousands", "million", "millions", "billion", "billions", "percent"}
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


def _name_pattern(name: str) -> re.Pattern[str] | None:
    words = re.findall(r"\w+", name.lower())
    return re.compile(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b") if words else None


def stated_numbers(text: str, names: Sequence[str]) -> dict[str, dict[float, bool]]:
    """Per candidate name, the numbers the text writes after it on the same line, before the next name
    and with at most MAX_WORDS_BETWEEN words between (its row's cells, "was $2.1 billion"), within
    NAME_REACH characters, by size, and whether each is written only as negative (in parentheses or
    after a minus sign)."""
    patterns = [(n, _name_pattern(n)) for n in names]
    out: dict[str, dict[float, bool]] = {n: {} for n in names}
    for line in text.splitlines():
        low = line.lower()
        # where each name's mention ends; of two ending together the longer name ("Commercial Banking", not "Banking")
        ends = sorted((m.end(), len(n), n) for n, pat in patterns if pat for m in pat.finditer(low))
        if not ends:
            continue
        for m in _NUMBER.finditer(line):
            before = [e for e in ends if e[0] <= m.start()]
            if not before or m.start() - before[-1][0] > NAME_REACH:
                continue
            between = [w for w in re.findall(r"[a-z]+", low[before[-1][0]:m.start()]) if w not in _SCALE_WORDS]
            if len(between) > MAX_WORDS_BETWEEN:
                continue  # another row's label or a clause stands between the name and the number
            size = float(m.group(2).replace(",", "") + (m.group(3) or ""))
            written = m.group(0)
            negative = bool(m.group(1)) and written.endswith(")") or written.lstrip("($ ").startswith(("-", "−"))
            of = out[before[-1][2]]
            of[size] = of.get(size, True) and negative
    return out


def grounded(candidates: Any, units: Sequence[ContextBlock]) -> list[tuple[str, float]]:
    """The candidates whose number the context writes after their name (`stated_numbers`), each name
    once, with the context's sign where it writes that number there only as negative (a reader drops a
    parenthesised loss's sign)."""
    named: list[tuple[str, float]] = []
    for c in candidates if isinstance(candidates, list) else []:
        if not isinstance(c, dict):
            continue
        name, value = " ".join(str(c.get("name") or "").split()), c.get("value")
        if name and name.lower() not in {n.lower() for n, _ in named} and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            named.append((name, float(value)))
    # line by line: the units' lines read together are read as each unit's
    stated = stated_numbers("\n".join(u.text for u in units), [n for n, _ in named])
    return [(n, -abs(v) if stated[n][abs(v)] else v) for n, v in named if abs(v) in stated[n]]


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
