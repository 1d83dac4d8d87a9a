"""The typed reader: numbered context units, a JSON schema per question type, answers grounded in code.

A 1.5B model picks wrong numbers, leans towards True and types stray numbers for
names when it writes a free-form reply that code must rescue. Here code decides the
question's type, the server's grammar only admits a reply of that type (a JSON
number, two numbers, a boolean or a short string), and the model first names the
numbered context units that hold the answer. Everything else happens in code:
ref_id comes from the pointed units, and the value is checked against them
(`grounding.py`): an ungrounded value is retried with the wider context and
counts less in the vote.

True/False answers can be read from the probabilities of the two tokens at the
answer position, divided by the model's own prior measured on a content-free input
(contextual calibration, Zhao et al. 2021), which removes the lean towards True.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stages.core.answer.arithmetic import (OPERATIONS, asks_two_numbers, compute, missing_operand, operation_asked,
                                           rounded_conversion, stated_times_range, unrunaway)
from stages.core.answer.grounding import eval_arithmetic, grounded_number, numbers_in
from stages.core.answer.kinds import Kind
from stages.core.answer.names import tidy_name
from stages.core.answer.normalize import normalize_value
from stages.core.answer.params import OPERATION_FORMATS, NumberFormat
from stages.core.answer.record import ContextBlock
from stages.core.answer.restate import written_negative, more_precise, restate
from stages.core.answer.table_cells import only_cell, pick_cell, same_record_operand
from stages.core.common.corpus import CorpusParams
from stages.core.common.values import BLANK
from stages.core.index.vocab import CONVERSION_CONSTANTS

# an answer expression: starts with a digit, then digits, operators, brackets, spaces
EXPRESSION_PATTERN = r"^[0-9][0-9.eE+*/() -]{0,59}$"
# a number as the context writes it, magnitude word included: a JSON number made the 1.5B model
# drop zeros from "32 billion" (dev d110, d409)
NUMBER_PATTERN = r"^-?[0-9][0-9,]{0,15}(\.[0-9]{1,8})?( (thousand|million|billion|trillion))?$"
NUMBER_RE = re.compile(NUMBER_PATTERN[1:-1])
MAX_TEXT_CHARS = 100
EXPLAIN_MAX_CHARS = 300  # answer.explain_max_chars: the explain kind's sentence or two
EXPLAIN_MIN_WORDS = 4  # answer.explain_min_words: fewer words are no explanation
OPERAND_NAME_CHARS = 60  # named_operation: what an operand is ("ELMo training power")
QUOTE_CHARS = 120  # answer.quote_first: the words of the pointed unit that state the answer
MAX_POINTERS = 3


def typed_reader_system(corpus: CorpusParams) -> str:
    """The typed reader's system prompt for the corpus of params.yaml's `corpus:` section."""
    return (
        f"You answer a question{corpus.about()} from numbered context units "
        f"taken from {corpus.description}. Reply with JSON only. First list in \"units\" the numbers "
        "of the units that state the answer, then give the answer in the requested field and unit. Copy "
        "numbers from the units; convert them only when the question's unit differs. Use only the context; "
        "if no unit states the answer, give null."
    )


def _nullable(schema: dict[str, Any], allow_null: bool) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]} if allow_null else schema


def reply_schema(kind: Kind, n_units: int, *, number_format: NumberFormat = "json",
                 allow_null: bool = True, quote: bool = False,
                 explain_chars: int = EXPLAIN_MAX_CHARS) -> dict[str, Any]:
    """The JSON schema for a reply of this kind: unit pointers first, then (``quote``) the words
    that state the answer, then the typed answer (an explanation: at most ``explain_chars``)."""
    units: dict[str, Any] = {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_units + 1))},
                             "maxItems": MAX_POINTERS}
    answer: dict[str, dict[str, Any]]
    if kind == "numeric" and number_format in OPERATION_FORMATS:  # code computes (arithmetic.py)
        name = {"type": "string", "maxLength": OPERAND_NAME_CHARS}
        a_is, b_is = ({"a_is": name}, {"b_is": name}) if number_format == "named_operation" else ({}, {})
        answer = {"operation": {"type": "string", "enum": list(OPERATIONS)},
                  **a_is, "a": _nullable({"type": "number"}, allow_null), **b_is, "b": {"type": "number"}}
    elif kind == "numeric":
        # json: a JSON number | text: the context's notation ("5.6 billion") | expression: arithmetic
        value = {"type": "number"} if number_format == "json" else \
            {"type": "string", "pattern": EXPRESSION_PATTERN if number_format == "expression" else NUMBER_PATTERN}
        answer = {"value": _nullable(value, allow_null)}
    elif kind == "range":
        answer = {"low": _nullable({"type": "number"}, allow_null), "high": _nullable({"type": "number"}, allow_null)}
    elif kind == "true_false":
        answer = {"answer": {"type": "boolean"}}
    elif kind == "explain":
        answer = {"answer": _nullable({"type": "string", "maxLength": explain_chars}, allow_null)}
    else:
        answer = {"answer": _nullable({"type": "string", "maxLength": MAX_TEXT_CHARS}, allow_null)}
    said = {"quote": {"type": "string", "maxLength": QUOTE_CHARS}} if quote else {}
    props = {"units": units, **said, **answer}
    return {"type": "object", "properties": props, "required": list(props)}


def response_format(kind: Kind, n_units: int, *, number_format: NumberFormat = "json",
                    allow_null: bool = True, quote: bool = False,
                    explain_chars: int = EXPLAIN_MAX_CHARS) -> dict[str, Any]:
    """The OpenAI-style response_format carrying `reply_schema`."""
    return {"type": "json_schema", "json_schema": {
        "name": f"answer_{kind}", "strict": True,
        "schema": reply_schema(kind, n_units, number_format=number_format, allow_null=allow_null, quote=quote,
                               explain_chars=explain_chars)}}


def answer_instruction(kind: Kind, unit: str, number_format: NumberFormat, quote: bool = False,
                       operation: str | None = None) -> str:
    """The last line of the prompt: which field to fill and how; ``operation`` (an operation format):
    the one the question's wording asks for, named as the reply's choice beside "none"."""
    line = _instruction(kind, unit, number_format, operation)
    return line.replace('"units": [...], ', '"units": [...], "quote": "the words that state it", ', 1) if quote else line


def _instruction(kind: Kind, unit: str, number_format: NumberFormat, operation: str | None = None) -> str:
    if kind == "true_false":
        return 'Reply {"units": [...], "answer": true or false}.'
    if kind == "text":
        return 'Reply {"units": [...], "answer": the name or short phrase, copied from the units}.'
    if kind == "explain":
        return ('Reply {"units": [...], "answer": one or two full sentences that answer the question '
                'from the units}.')
    if kind == "range":
        return f'Reply {{"units": [...], "low": number, "high": number}}' + (f" in {unit}." if _has_unit(unit) else ".")
    if not _has_unit(unit):  # a number whose unit neither the questions file nor the question names
        return _instruction(kind, "the unit the units state", number_format, operation)
    if number_format in OPERATION_FORMATS:
        choices = (f'"{operation}" (the question asks for it) or "none" (a unit states the answer)' if operation
                   else '"difference", "sum", "ratio", "percent_change", "product" or "none"')
        # named_operation: the model says what it copies, so it copies the number the question means
        a, b = (('"a_is": "what a is", "a"', '"b_is": "what b is", "b"') if number_format == "named_operation"
                else ('"a"', '"b"'))
        return (f'Reply {{"units": [...], "operation": {choices}, {a}: number, {b}: number}} with a and b copied '
                f'from the units (b: 0 for "none"); the answer in {unit} is then computed from them.')
    if number_format == "json":
        return f'Reply {{"units": [...], "value": number}}: the answer in {unit}.'
    if number_format == "expression":
        # the examples are letters: numbers shown here were copied as the answer (dev d313, d411, d611)
        return (f'Reply {{"units": [...], "value": "..."}}: the answer in {unit}, as a number copied from '
                f'the units or an arithmetic expression over their numbers, such as a - b, a / b, a + b or '
                f'(a - b) / b * 100 with a and b copied from the units.')
    return f'Reply {{"units": [...], "value": "number"}}: the answer in {unit} (e.g. "11,023" or "5.6 billion").'




def _has_unit(unit: str) -> bool:
    return bool(unit.strip()) and unit.strip() != BLANK


def format_units(units: Sequence[ContextBlock]) -> str:
    """`[k] doc_id (table): text` lines, numbered from 1."""
    lines = []
    for k, u in enumerate(units, start=1):
        tag = f" ({u.media})" if u.media else ""
        lines.append(f"[{k}] {u.doc_id}{tag}: {u.text}")
    return "Context:\n" + "\n\n".join(lines)


def user_message(question: str, unit: str, kind: Kind, units: Sequence[ContextBlock], number_format: NumberFormat,
                 quote: bool = False, question_first: bool = False, operation: str | None = None) -> str:
    """Context first (shared prefix across members), then the question and the reply format;
    ``question_first``: the question also before the context, so the model reads it knowing what to look for."""
    unit_line = f"Answer unit: {unit}" if kind in ("numeric", "range") and _has_unit(unit) else ""
    parts = [format_units(units), f"Question: {question}", unit_line,
             answer_instruction(kind, unit, number_format, quote, operation)]
    body = "\n\n".join(p for p in parts[:2]) + "\n" + "\n".join(p for p in parts[2:] if p)
    return f"Question: {question}\n\n{body}" if question_first else body


@dataclass
class Reading:
    """A parsed typed reply: the normalised value (or blank), pointers and grounding."""

    value: str = BLANK
    pointers: tuple[int, ...] = ()
    grounded: bool = False
    expression: str = ""
    # a two-number operation whose second number the model did not find ("sum", a: 7571, b: 0)
    missing_operand: bool = False

    @property
    def is_blank(self) -> bool:
        return self.value == BLANK




def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(float(x)) else None


def _pointers(data: dict[str, Any], n_units: int) -> tuple[int, ...]:
    raw = data.get("units") or []
    if not isinstance(raw, list):
        return ()
    return tuple(dict.fromkeys(k for k in raw if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n_units))


def evidence_text(units: Sequence[ContextBlock], pointers: Sequence[int]) -> str:
    """The pointed units' text, or the whole context when the model pointed at none."""
    chosen = [units[k - 1] for k in pointers] or list(units)
    return "\n".join(u.text for u in chosen)


def _grounded_value(v: float, evidence: str, unit: str, operands: Sequence[float] = ()) -> bool:
    """Stated in the evidence (up to the unit's conversions), or computed from stated numbers."""
    numbers = numbers_in(evidence)
    if grounded_number(v, numbers, unit, strict=True):
        return True
    if len(operands) > 1:
        return all(grounded_number(o, numbers, unit, strict=True) or abs(o) in CONVERSION_CONSTANTS
                   for o in operands) and any(grounded_number(o, numbers, unit, strict=True) for o in operands)
    return False


_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def explanation(text: Any, units: Sequence[ContextBlock], min_words: int = EXPLAIN_MIN_WORDS,
                max_chars: int = EXPLAIN_MAX_CHARS) -> str | None:
    """An explain-kind reply as the answer, or None when it is no answer: not a string, fewer
    than ``min_words`` words (a stray token such as "G", "}", "]12.8%" or "time"), only
    punctuation and digits, or just the name of a context document. A reply cut at
    ``max_chars`` keeps its whole sentences."""
    if not isinstance(text, str):
        return None
    s = " ".join(text.split()).strip()
    if len(s) >= max_chars - 1:
        end = max(s.rfind(". "), s.rfind("; "), s.rfind("! "), s.rfind("? "))
        s = s[:end + 1] if end >= max_chars // 2 else s
    words = _WORD.findall(s)
    if len(words) < min_words or s.lower() in ("null", BLANK):
        return None
    bare = re.sub(r"\W+", " ", s.lower()).strip()
    names = {re.sub(r"\W+", " ", u.doc_id.lower()).strip() for u in units}
    if bare in names:
        return None
    return s


def read_reply(kind: Kind, unit: str, data: dict[str, Any] | None, units: Sequence[ContextBlock],
               true_prob: float | None = None, *, restate_numbers: bool = True,
               narrow_pointers: bool = True, explain_min_words: int = EXPLAIN_MIN_WORDS,
               explain_chars: int = EXPLAIN_MAX_CHARS, question: str = "", compute_decimals: int = 2,
               operation_from_wording: bool = False, pick_cells: bool = False, tidy_names: bool = False,
               tf_threshold: float = 0.5, precise_numbers: bool = False, times_ranges: bool = False,
               fill_missing_operand: bool = False, restate_sign: bool = False,
               same_record: bool = False, pointed_cell: bool = False) -> Reading:
    """The reply as a submission value, with pointers and whether the value is grounded.

    ``true_prob``: a calibrated P(True) for a True/False question; when given it decides
    the answer instead of the sampled token. ``restate_numbers``: a JSON number copied without
    the magnitude or unit the context writes next to it gets them back (`restate.py`).
    ``narrow_pointers``: a grounded answer points only at the pointed units that state it.
    An `operation` reply (number_format "operation") is computed by `arithmetic.compute` for
    ``question`` and rounded to ``compute_decimals``. ``pick_cells``: a number copied from a table
    record becomes the record's cell whose column name the question names (`table_cells.pick_cell`).
    ``tf_threshold``: the calibrated P(True) from which the answer is True.
    ``tidy_names``: a name answer loses the question's "Which ..." words at its ends (`names.tidy_name`).
    ``precise_numbers``: a copied rounding ("5.4 million") becomes the one number of the context it rounds
    (5.439 million, `restate.more_precise`). ``times_ranges``: a ratio whose operands are the two ends of a
    range of multipliers the context states ("10–15 times") is that range (`arithmetic.stated_times_range`).
    ``restate_sign``: a positive number the context writes only with a minus sign gets it back, unless
    the question asks for a decrease as such (`restate.written_negative`). ``same_record``: operands copied from
    two records of one table under different columns: b becomes a's record's cell under b's column
    (`table_cells.same_record_operand`). ``pointed_cell``: a copied number that no pointed unit states, when
    the pointed units are table rows with one numeric cell among them, becomes that cell (`table_cells.only_cell`).
    """
    if not data:
        return Reading()
    pointers = _pointers(data, len(units))
    evidence = evidence_text(units, pointers)
    if kind == "true_false":
        ans = data.get("answer")
        if true_prob is not None:
            ans = true_prob >= tf_threshold
        if not isinstance(ans, bool):
            return Reading(pointers=pointers)
        return Reading("1" if ans else "0", pointers, grounded=bool(pointers))
    if kind == "explain":  # a sentence or two; grounded when it points at a unit (no value to find)
        said = explanation(data.get("answer"), units, explain_min_words, explain_chars)
        return Reading(said, pointers, grounded=bool(pointers)) if said else Reading(pointers=pointers)
    if kind == "text":
        ans = data.get("answer")
        if not isinstance(ans, str) or not ans.strip() or ans.strip().lower() in ("null", BLANK):
            return Reading(pointers=pointers)
        phrase = ans.strip().rstrip(".")
        if tidy_names and question:
            phrase = tidy_name(phrase, question)
        return _repointed(Reading(phrase, pointers), units, lambda text: phrase.lower() in text.lower(), evidence,
                          narrow_pointers)
    if kind == "range":
        lo, hi = _number(data.get("low")), _number(data.get("high"))
        if lo is None or hi is None:
            return Reading(pointers=pointers)
        lo, hi = min(lo, hi), max(lo, hi)
        value = normalize_value(f"[{lo!r},{hi!r}]", unit)
        return _repointed(Reading(value, pointers), units,
                          lambda text: _grounded_value(lo, text, unit) and _grounded_value(hi, text, unit), evidence,
                          narrow_pointers)
    if "operation" in data:
        if times_ranges and (stated := _times_range(data, question, unit, units, pointers)):
            lo, hi = stated
            return _repointed(Reading(normalize_value(f"[{lo!r},{hi!r}]", unit), pointers,
                                      expression=f"{lo:g} to {hi:g} times, as stated"), units,
                              lambda text: stated_times_range(lo, hi, [text]) is not None, evidence, narrow_pointers)
        return _operation_reading(data, pointers, evidence, question, unit, units, narrow_pointers, compute_decimals,
                                  operation_from_wording, fill_missing_operand, restate_sign, same_record)
    raw = data.get("value")
    expression, operands, exact = "", (), None
    stated = _number(raw) if not isinstance(raw, str) else None
    if isinstance(raw, str) and NUMBER_RE.fullmatch(raw.strip()):
        try:
            stated = _number(float(normalize_value(raw.strip(), "")))
        except ValueError:  # "1,5": not a number after all
            stated = None
    if isinstance(raw, str) and stated is None:
        expression = raw.strip()
        try:
            v, ops = eval_arithmetic(expression)
        except ValueError:
            return Reading(pointers=pointers, expression=expression)
        operands = tuple(ops)
    else:
        if stated is None:
            return Reading(pointers=pointers)
        if pointed_cell and pointers and not grounded_number(stated, numbers_in(evidence), unit, strict=True):
            tables = [units[k - 1].text for k in pointers if units[k - 1].media == "table"]
            if len(tables) == len(pointers) and (cell := only_cell(tables)) is not None:
                stated = cell  # the pointed row has one number: the model copied another unit's
        if pick_cells and question:
            stated = pick_cell(question, stated, _table_texts(units, pointers))
        if restate_sign and written_negative(stated, [u.text for u in units], question):
            stated = -stated
        v = stated
        if restate_numbers:  # a JSON number or a plain number string (an expression is computed as written)
            exact = restate(stated, *_pointed_and_others(units, pointers), unit)
            if precise_numbers:
                exact = more_precise(exact, stated, [u.text for u in units], unit)
            v = rounded_conversion(exact, stated, compute_decimals)
    value = normalize_value(repr(round(v, 10)) if v != int(v) else str(int(v)), unit)
    if value == BLANK:
        return Reading(pointers=pointers, expression=expression)
    grounded_v = v if exact is None else exact  # a rounded conversion is grounded as computed
    return _repointed(Reading(value, pointers, expression=expression), units,
                      lambda text: _grounded_value(grounded_v, text, unit, operands), evidence, narrow_pointers)


def _table_texts(units: Sequence[ContextBlock], pointers: Sequence[int]) -> list[str]:
    """The table units' texts, the pointed ones first."""
    order = [*pointers, *(k for k in range(1, len(units) + 1) if k not in pointers)]
    return [units[k - 1].text for k in order if units[k - 1].media == "table"]


def _pointed_and_others(units: Sequence[ContextBlock], pointers: Sequence[int]) -> tuple[list[str], list[str]]:
    """The texts of the pointed units and of the others: a copied number is looked up there, in that order."""
    return ([units[k - 1].text for k in pointers],
            [u.text for k, u in enumerate(units, start=1) if k not in pointers])


def _times_range(data: dict[str, Any], question: str, unit: str, units: Sequence[ContextBlock],
                 pointers: tuple[int, ...]) -> tuple[float, float] | None:
    """The stated range of multipliers a ratio reply's operands are the ends of (pointed units first)."""
    a, b = _number(data.get("a")), _number(data.get("b"))
    if a is None or not b or "ratio" not in (data.get("operation"), operation_asked(question, unit)):
        return None
    pointed, others = _pointed_and_others(units, pointers)
    a, b = unrunaway(a, b, pointed, others), unrunaway(b, a, pointed, others)  # "b": 1000000000000000 for 10
    return stated_times_range(a, b, [*pointed, *others])


def _operation_reading(data: dict[str, Any], pointers: tuple[int, ...], evidence: str, question: str, unit: str,
                       units: Sequence[ContextBlock], narrow: bool, decimals: int,
                       from_wording: bool = False, fill_missing: bool = False, restate_sign: bool = False,
                       same_record: bool = False) -> Reading:
    """An `operation` reply computed in code; grounded when its operands are stated numbers. ``restate_sign``:
    an operation with no second operand copies a: its result gets the minus sign the units write back."""
    a, b = _number(data.get("a")), _number(data.get("b"))
    op = data.get("operation")
    if a is None or not isinstance(op, str):
        return Reading(pointers=pointers)
    pointed, others = _pointed_and_others(units, pointers)
    if fill_missing and b == 0 and asks_two_numbers(op, question, unit):
        b = missing_operand(a, unit, pointed) or b  # the reply's b as the units state it, for grounding too
    if same_record and b and op not in ("none", "product"):
        b = same_record_operand(a, b, _table_texts(units, pointers)) or b
    done = compute(op, a, b, question, unit, pointed, others, decimals, from_wording)
    if done is None:
        return Reading(pointers=pointers, expression=f"{op}({a:g}, {b if b is None else f'{b:g}'})")
    v, expression = done
    if restate_sign and not b and written_negative(v, [*pointed, *others], question):
        v, expression = -v, f"{expression}, signed as the units write it"
    value = normalize_value(repr(v) if v != int(v) else str(int(v)), unit)
    if value == BLANK:
        return Reading(pointers=pointers, expression=expression)
    operands = (a,) if op == "none" else (a, b if b is not None else 0.0)
    missing = op != "none" and not b
    return _repointed(Reading(value, pointers, expression=expression, missing_operand=missing), units,
                      lambda text: _grounded_value(v, text, unit) or all(
                          grounded_number(o, numbers_in(text), "", strict=False) for o in operands),
                      evidence, narrow)


def _repointed(reading: Reading, units: Sequence[ContextBlock], holds: Any, evidence: str, narrow: bool = True) -> Reading:
    """Grounded when the pointed units hold the answer; the model often points at the wrong
    unit, so an answer that other units hold is grounded there and points at them instead.
    ``narrow``: of several pointed units, keep those that state the answer themselves (an
    extra document in ref_id costs Jaccard)."""
    if holds(evidence):
        reading.grounded = True
        stating = tuple(k for k in reading.pointers if holds(units[k - 1].text))
        if narrow and stating:
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
