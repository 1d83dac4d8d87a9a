"""The typed reader: numbered context units, a JSON schema per question type, answers grounded in code.

A 1.5B model picks wrong numbers, leans towards True and types stray numbers for
names when it writes a free-form reply that code must rescue. Here code decides the
question's type, the server's grammar only admits a reply of that type (a JSON
number, two numbers, a boolean or a short string), and the model first names the
numbered context units that hold the answer. Everything else happens in code:
ref_id comes from the pointed units, and the value is checked against them
(`grounding.py`): an ungrounded value counts less in the vote. The prompt and the
reply's schema are in typed_prompt.py.

True/False answers are read from the probabilities of the two tokens at the
answer position, divided by the model's own prior measured on a content-free input
(contextual calibration, Zhao et al. 2021), which removes the lean towards True.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stages.core.answer.arithmetic import compute, rounded_conversion
from stages.core.answer.grounding import grounded_number, numbers_in
from stages.core.answer.kinds import Kind
from stages.core.answer.normalize import normalize_value
from stages.core.answer.record import ContextBlock
from stages.core.answer.restate import restate
from stages.core.common.values import BLANK

MAX_TEXT_CHARS = 100  # a name or short phrase
# the explain kind's answer is a sentence or two: long enough to say why, short enough to stay one point
EXPLAIN_MAX_CHARS = 300
EXPLAIN_MIN_WORDS = 4  # an explanation of fewer words is a stray token ("G", "}", "time"): no answer
MAX_POINTERS = 3  # units a reply may point at: an answer rarely needs more, and each extra document costs ref_id
# the calibrated P(True) from which a True/False answer is True: calibration already removed the model's lean
TF_THRESHOLD = 0.5


@dataclass
class Reading:
    """A parsed typed reply: the normalised value (or blank), pointers and grounding."""

    value: str = BLANK
    pointers: tuple[int, ...] = ()
    grounded: bool = False
    expression: str = ""

    @property
    def is_blank(self) -> bool:
        return self.value == BLANK


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(float(x)) else None


def pointers_in(data: dict[str, Any], n_units: int) -> tuple[int, ...]:
    """The context units (1-based, each once, in order) a reply points at; anything else in `units` is dropped."""
    raw = data.get("units") or []
    if not isinstance(raw, list):
        return ()
    return tuple(dict.fromkeys(k for k in raw if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n_units))


def evidence_text(units: Sequence[ContextBlock], pointers: Sequence[int]) -> str:
    """The pointed units' text, or the whole context when the model pointed at none."""
    chosen = [units[k - 1] for k in pointers] or list(units)
    return "\n".join(u.text for u in chosen)


def _grounded_value(v: float, evidence: str, unit: str) -> bool:
    """Stated in the evidence (up to the unit's conversions)."""
    return grounded_number(v, numbers_in(evidence), unit, strict=True)


_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def explanation(text: Any, units: Sequence[ContextBlock]) -> str | None:
    """An explain-kind reply as the answer, or None when it is no answer: not a string, fewer
    than EXPLAIN_MIN_WORDS words (a stray token such as "G", "}", "]12.8%" or "time"), only
    punctuation and digits, or just the name of a context document. A reply cut at
    EXPLAIN_MAX_CHARS keeps its whole sentences."""
    if not isinstance(text, str):
        return None
    s = " ".join(text.split()).strip()
    if len(s) >= EXPLAIN_MAX_CHARS - 1:
        end = max(s.rfind(". "), s.rfind("; "), s.rfind("! "), s.rfind("? "))
        s = s[:end + 1] if end >= EXPLAIN_MAX_CHARS // 2 else s
    words = _WORD.findall(s)
    if len(words) < EXPLAIN_MIN_WORDS or s.lower() in ("null", BLANK):
        return None
    bare = re.sub(r"\W+", " ", s.lower()).strip()
    names = {re.sub(r"\W+", " ", u.doc_id.lower()).strip() for u in units}
    if bare in names:
        return None
    return s


def read_reply(kind: Kind, unit: str, data: dict[str, Any] | None, units: Sequence[ContextBlock],
               true_prob: float | None = None, question: str = "") -> Reading:
    """The reply as a submission value, with pointers and whether the value is grounded.

    ``true_prob``: a calibrated P(True) for a True/False question; it decides the answer instead of
    the sampled token (from TF_THRESHOLD). A copied number is read as the context writes it, with the
    magnitude or unit written next to it (`restate.restate`). An `operation` reply is computed in code
    (`_operation_reading`). A grounded answer points only at the units that state it.
    """
    if not data:
        return Reading()
    pointers = pointers_in(data, len(units))
    evidence = evidence_text(units, pointers)
    if kind == "true_false":
        ans = data.get("answer")
        if true_prob is not None:
            ans = true_prob >= TF_THRESHOLD
        if not isinstance(ans, bool):
            return Reading(pointers=pointers)
        return Reading("1" if ans else "0", pointers, grounded=bool(pointers))
    if kind == "explain":  # a sentence or two; grounded when it points at a unit (no value to find)
        said = explanation(data.get("answer"), units)
        return Reading(said, pointers, grounded=bool(pointers)) if said else Reading(pointers=pointers)
    if kind == "text":
        ans = data.get("answer")
        if not isinstance(ans, str) or not ans.strip() or ans.strip().lower() in ("null", BLANK):
            return Reading(pointers=pointers)
        phrase = ans.strip().rstrip(".")
        return _repointed(Reading(phrase, pointers), units, lambda text: phrase.lower() in text.lower(), evidence)
    if kind == "range":
        lo, hi = _number(data.get("low")), _number(data.get("high"))
        if lo is None or hi is None:
            return Reading(pointers=pointers)
        lo, hi = min(lo, hi), max(lo, hi)
        value = normalize_value(f"[{lo!r},{hi!r}]", unit)
        return _repointed(Reading(value, pointers), units,
                          lambda text: _grounded_value(lo, text, unit) and _grounded_value(hi, text, unit), evidence)
    if "operation" in data:
        return _operation_reading(data, pointers, evidence, question, unit, units)
    stated = _number(data.get("value"))
    if stated is None:
        return Reading(pointers=pointers)
    exact = restate(stated, *_pointed_and_others(units, pointers), unit)
    v = rounded_conversion(exact, stated)
    value = normalize_value(repr(round(v, 10)) if v != int(v) else str(int(v)), unit)
    if value == BLANK:
        return Reading(pointers=pointers)
    # a rounded conversion is grounded as computed
    return _repointed(Reading(value, pointers), units, lambda text: _grounded_value(exact, text, unit), evidence)


def _pointed_and_others(units: Sequence[ContextBlock], pointers: Sequence[int]) -> tuple[list[str], list[str]]:
    """The texts of the pointed units and of the others: a copied number is looked up there, in that order."""
    return ([units[k - 1].text for k in pointers],
            [u.text for k, u in enumerate(units, start=1) if k not in pointers])


def _operation_reading(data: dict[str, Any], pointers: tuple[int, ...], evidence: str, question: str, unit: str,
                       units: Sequence[ContextBlock]) -> Reading:
    """An `operation` reply computed in code (`arithmetic.compute`); grounded when its operands are stated
    numbers; an operation with no second operand copies a."""
    a, b = _number(data.get("a")), _number(data.get("b"))
    op = data.get("operation")
    if a is None or not isinstance(op, str):
        return Reading(pointers=pointers)
    pointed, others = _pointed_and_others(units, pointers)
    done = compute(op, a, b, question, unit, pointed, others)
    if done is None:
        return Reading(pointers=pointers, expression=f"{op}({a:g}, {b if b is None else f'{b:g}'})")
    v, expression = done
    value = normalize_value(repr(v) if v != int(v) else str(int(v)), unit)
    if value == BLANK:
        return Reading(pointers=pointers, expression=expression)
    operands = (a,) if op == "none" else (a, b if b is not None else 0.0)
    return _repointed(Reading(value, pointers, expression=expression), units,
                      lambda text: _grounded_value(v, text, unit) or all(
                          grounded_number(o, numbers_in(text), "", strict=False) for o in operands),
                      evidence)


def _repointed(reading: Reading, units: Sequence[ContextBlock], holds: Any, evidence: str) -> Reading:
    """Grounded when the pointed units hold the answer; the model often points at the wrong
    unit, so an answer that other units hold is grounded there and points at them instead.
    Of several pointed units, those that state the answer themselves are kept (an extra
    document in ref_id costs Jaccard)."""
    if holds(evidence):
        reading.grounded = True
        stating = tuple(k for k in reading.pointers if holds(units[k - 1].text))
        if stating:
            reading.pointers = stating
        return reading
    stating = tuple(k for k, u in enumerate(units, start=1) if holds(u.text))
    if stating:
        reading.pointers, reading.grounded = stating[:MAX_POINTERS], True
    return reading


def refs_for(reading: Reading, units: Sequence[ContextBlock]) -> list[str]:
    """ref_id from the pointed units; without pointers, the units that state the value, else the first unit."""
    if reading.pointers:
        return list(dict.fromkeys(units[k - 1].doc_id for k in reading.pointers))
    if not units:
        return []
    needles = re.findall(r"\d+(?:\.\d+)?", reading.value) if reading.value != BLANK else []
    stating = [u.doc_id for u in units if needles and all(n in u.text.replace(",", "") for n in needles)]
    return list(dict.fromkeys(stating or [units[0].doc_id]))[:MAX_POINTERS]


def quote_for(reading: Reading, units: Sequence[ContextBlock], max_chars: int = 300) -> str:
    """The sentence of a pointed unit that shows the value (supporting_materials)."""
    chosen = [units[k - 1] for k in reading.pointers] or list(units)
    needles = re.findall(r"\d+(?:\.\d+)?", reading.value) or [reading.value.lower()]
    for u in chosen:
        for sent in re.split(r"(?<=[.!?])\s+", u.text):
            if any(n and n in sent.lower().replace(",", "") for n in needles):
                return sent.strip()[:max_chars]
    return chosen[0].text[:max_chars] if chosen else BLANK


# ---- True/False from token probabilities, with contextual calibration

def answer_token_probs(token_logprobs: Sequence[Any] | None) -> tuple[float, float] | None:
    """(P(true), P(false)) at the position where the reply's boolean was generated, from the
    server's top log-probabilities there (raw model probabilities, before the grammar)."""
    if not token_logprobs:
        return None
    for entry in reversed(token_logprobs):
        token, top = entry[0], entry[1]
        if token.strip().lower() not in ("true", "false"):
            continue
        p = {"true": 0.0, "false": 0.0}
        for tok, lp in top:
            key = tok.strip().lower()
            if key in p:
                p[key] += math.exp(lp)
        if p["true"] + p["false"] <= 0:
            return None
        return p["true"], p["false"]
    return None


def calibrated_true_prob(probs: tuple[float, float], prior: tuple[float, float] | None) -> float:
    """P(True) after dividing each option by the model's content-free prior, renormalised."""
    t, f = probs
    if prior is not None and prior[0] > 0 and prior[1] > 0:
        t, f = t / prior[0], f / prior[1]
    return t / (t + f) if t + f > 0 else 0.5


CONTENT_FREE_QUESTION = "True or False: N/A"
CONTENT_FREE_UNITS = (ContextBlock("N/A", "N/A"),)
