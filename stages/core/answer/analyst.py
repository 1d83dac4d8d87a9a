"""answer.style analyst: answers written as an analyst writes them, not as WattBot's submission wants.

- A yes/no question (one not worded "True or False: ...") is answered "Yes" or "No" with its reason:
  the reply states the reason first and the answer after it, so the answer follows the reason it
  gives, and the reason is kept in the answer.
- A metric the question names (metrics.py) is computed by code from the line items the reader
  copies, and the explanation names the formula with its operands. Each operand must be read from
  the context line that names its item, and the value must be one a company can report; else the
  wider context is read, then the question is refused.
- An amount asked in a scale ("in USD millions") is given in that scale, from the scale the context
  states for the number the reader copied.
- An explanation is one or two whole sentences: a reply cut short by its length limit loses its
  unfinished sentence (or its unfinished word, when it has no whole sentence), never mid-word.
- Every non-blank answer in words names the filing it comes from, and a question the context
  does not answer gets a sentence that says so (analyst_text.REFUSAL) instead of a blank marker.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stages.core.answer import choice
from stages.core.answer.kinds import TRUE_FALSE, infer_type
from stages.core.answer.line_items import Stated, amount_of, asked_scale, on_its_line, stated_amounts, stated_scales
from stages.core.answer.metrics import Asked, Computed, asked_metric, compute_metric, field_name
from stages.core.answer.operand_lookup import balances_only, dated, in_document_scale, looked_up
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_reader import EXPLAIN_MIN_WORDS, MAX_POINTERS, Reading, pointers_in

REASON_MAX_CHARS = 300  # a yes/no answer's reason: a sentence or two
MAX_SENTENCES = 2
_SENTENCE_END = re.compile(r"(?<=[.!?])(?:\s+|$)")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# words that cannot end a sentence: a reply cut after one loses it ("... higher volume and")
_DANGLING = re.compile(r"(?:[\s,;:]+(?:and|or|but|the|a|an|of|to|in|on|for|with|by|from|as|at|than|that|which|"
                       r"its|their|was|were|is|are))+$", re.IGNORECASE)


def sentences(text: Any, limit: int, max_sentences: int = MAX_SENTENCES) -> str | None:
    """At most ``max_sentences`` whole sentences of a reply of at most ``limit`` characters (its
    grammar's maxLength); None when it has fewer than EXPLAIN_MIN_WORDS words (a stray token is no
    answer). An unfinished last sentence is dropped; a reply with no whole sentence keeps its whole
    words (the last one too, unless the reply reached ``limit`` and was cut in it) and gets a period."""
    if not isinstance(text, str):
        return None
    s = " ".join(text.split()).strip().strip('"').strip()
    whole = [p.strip() for p in _SENTENCE_END.split(s) if p.strip() and p.strip()[-1] in ".!?"]
    if whole and len(_WORD.findall(" ".join(whole[:max_sentences]))) >= EXPLAIN_MIN_WORDS:
        s = " ".join(whole[:max_sentences])
    elif s and s[-1] not in ".!?":
        if len(s) >= limit - 1:  # cut by the length limit, maybe in a word
            s = re.sub(r"\s*\S*$", "", s)
        s = _DANGLING.sub("", s).rstrip(",;:-– ")
        s = s + "." if s else ""
    if len(_WORD.findall(s)) < EXPLAIN_MIN_WORDS:
        return None
    return s


def yes_no_value(answer: bool) -> str:
    return "Yes" if answer else "No"


def read_yes_no(data: dict[str, Any] | None, units: Sequence[ContextBlock]) -> Reading:
    """A yes/no reply: the value "Yes"/"No", the reason kept as the reading's expression."""
    if not data or not isinstance(data.get("answer"), bool):
        return Reading()
    pointers = pointers_in(data, len(units))
    reason = sentences(data.get("reason"), REASON_MAX_CHARS) or ""
    return Reading(yes_no_value(data["answer"]), pointers, grounded=bool(pointers), expression=reason)


# ---- the prompt and reply of a metric question

def metric_instruction(asked: Asked) -> str:
    """The prompt's last lines: the line items to copy; code computes the metric from them."""
    items = "\n".join(f'- "{name}": {label}' for name, label in asked.fields())
    reply = ", ".join(f'"{name}": number' for name, _ in asked.fields())
    return (f"The {asked.metric.name} is computed from these line items of the financial statements. Copy each "
            "number exactly as the units state it, in the units' own scale (e.g. millions):\n"
            f'{items}\nReply {{"units": [...], {reply}}}.')


def read_metric(asked: Asked, data: dict[str, Any] | None, units: Sequence[ContextBlock]) -> tuple[Reading, str | None]:
    """The metric computed from the copied line items, the formula as the expression. Blank (a failed
    reading: the wider context is tried next, then the question is refused in words) when a line item is
    missing, when an operand is not read from a line of the context that names it in the column of its
    year (`operand_lines`), or when the value is one no company reports (metrics.Metric.plausible). An
    amount the question asks in a scale ("in USD millions") is given in it when its operands' lines state
    their scale, with that unit (else None: the unit `answer_unit` gives). The reader is asked only where
    the statement rows do not state every operand for its year (`read_rows`)."""
    per_unit = [stated_amounts(u.text) for u in units]
    stated = [s for found in per_unit for s in found]
    pointers = pointers_in(data or {}, len(units))
    copied = {k: float(v) for k, v in (data or {}).items()
              if k != "units" and isinstance(v, (int, float)) and not isinstance(v, bool)}
    done = compute_metric(asked, copied) if data else None
    read = operand_lines(asked, copied, stated) if done is not None else None
    if done is not None and read is not None and done.plausible:
        return _metric_reading(asked, done, *read, pointers, per_unit)
    return Reading(pointers=pointers, expression=done.explanation if done else ""), None


def read_rows(asked: Asked, units: Sequence[ContextBlock],
              annual_years: Mapping[str, int] | None = None) -> tuple[Reading, str | None] | None:
    """The metric computed by code from the statement rows that state each operand for its year
    (operand_lookup; an annual report's unkeyed columns are its fiscal year in ``annual_years`` and the
    years before, `operand_lookup.dated`), before any reader is asked; None when an operand is not found
    so or the value is one no company reports (then the reader copies the operands, `read_metric`)."""
    years = annual_years or {}
    scales: dict[str, set[float]] = {}
    for u in units:
        scales.setdefault(u.doc_id, set()).update(stated_scales(u.text))
    per_unit = [in_document_scale(dated(balances_only(stated_amounts(u.text), u.text), years.get(u.doc_id)),
                                  scales[u.doc_id]) for u in units]
    found = looked_up(asked, [s for f in per_unit for s in f])
    done = compute_metric(asked, found[0]) if found is not None else None
    if found is None or done is None or not done.plausible:
        return None
    return _metric_reading(asked, done, found[1], 1.0, (), per_unit)


def _metric_reading(asked: Asked, done: Computed, lines: Sequence[Stated], factor: float, pointers: Sequence[int],
                    per_unit: Sequence[Sequence[Stated]]) -> tuple[Reading, str | None]:
    """A computed metric as a reading: pointing at the units that hold its lines when the reply pointed at
    none, an amount in the scale the question asks (its first operand's line's scale, undone ``factor``)."""
    holding = tuple(k for k, found in enumerate(per_unit, start=1) if any(s in found for s in lines))
    value, unit = done.value, None
    scale = next((s.scale for s in lines if s.value), None)  # the first operand's line's
    if asked.metric.amount and asked.unit is not None and scale is not None:
        value, unit = value * scale * factor / asked.unit[0], asked.unit[1]
    return Reading(f"{value:.{asked.decimals}f}", tuple(pointers) or holding[:MAX_POINTERS], grounded=True,
                   expression=done.explanation), unit


def operand_lines(asked: Asked, copied: dict[str, float],
                  stated: Sequence[Stated]) -> tuple[list[Stated], float] | None:
    """For every operand, the stated amount it copies on a line the operand's item names
    (line_items.on_its_line), and the one factor all of them were rescaled by; None when one was read
    from no such line (the same digits elsewhere, in another row or a percentage, or nowhere: a
    placeholder) or when they were rescaled differently (a ratio of a number moved to millions and one
    left in thousands). A zero stands for an item statements may leave out (plan.metrics.Item.absent_is_zero)."""
    out: list[Stated] = []
    factors = set()
    for y in asked.years:
        for item, back in asked.metric.operands:
            x = copied[field_name(item, y - back)]
            found = on_its_line(x, item.names, stated, y - back)
            if found is None and x == 0 and item.absent_is_zero:
                out.append(Stated(item.label, 0.0))
                continue
            if found is None:
                return None
            out.append(found[0])
            factors.add(found[1])
    if len(factors) > 1:
        return None
    return out, factors.pop() if factors else 1.0


def in_asked_scale(question: str, data: dict[str, Any] | None, reading: Reading,
                   units: Sequence[ContextBlock]) -> tuple[Reading, str | None]:
    """A copied amount in the scale the question asks ("in USD millions": 1,700 for "$1.7 billion",
    59,268 for a table's 59,268 "in millions"), with that unit; the reading as it was (and None) when
    the question asks no scale or no context number has the copied digits (its scale is unknown)."""
    asked = asked_scale(question)
    x = (data or {}).get("value")
    if asked is None or reading.is_blank or isinstance(x, bool) or not isinstance(x, (int, float)):
        return reading, None
    pointed = [s for k in reading.pointers for s in stated_amounts(units[k - 1].text)]
    amount = amount_of(float(x), pointed) or amount_of(float(x), [s for u in units for s in stated_amounts(u.text)])
    if amount is None:
        return reading, None
    value = f"{round(amount / asked[0], 6):.12g}"
    return Reading(value, reading.pointers, reading.grounded, reading.expression), asked[1]


# ---- the analyst's requests and readings, by question kind

YES_NO_INSTRUCTION = ('Reply {"units": [...], "reason": one sentence from the units that decides the question, '
                      '"answer": true for yes or false for no}.')
EXPLAIN_INSTRUCTION = ('Reply {"units": [...], "answer": one or two full sentences that answer the question from '
                       'the units}.')
EXPLAIN_MAX_CHARS = 400  # two sentences
TOKENS_PER_NUMBER = 16  # a metric reply: the field name and a number


@dataclass(frozen=True)
class Request:
    """An analyst request in place of the typed reader's own: its mode, last prompt lines, schema, length."""

    mode: str  # "metric" | "yes_no" | "explain" | "choice"
    instruction: str
    schema: dict[str, Any]
    max_tokens: int
    asked: Asked | None = None
    choice: choice.Choice | None = None

    def response_format(self) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": f"answer_{self.mode}", "strict": True,
                                                       "schema": self.schema}}


def _schema(n_units: int, answer: dict[str, Any]) -> dict[str, Any]:
    units: dict[str, Any] = {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_units + 1))},
                             "maxItems": MAX_POINTERS}
    props = {"units": units, **answer}
    return {"type": "object", "properties": props, "required": list(props)}


_AUX = re.compile(r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|may|might|must)\s+\S",
                  re.IGNORECASE)
# a question that says how to round or scale its answer asks for a number, whatever its other words
_NUMBER_FORMAT = re.compile(r"\bround(?:ed)? (?:your answer |the answer |it )?to \w+ decimal|\bin units of percents?\b|"
                            r"\bin (?:USD|US\$|\$) ?(?:thousands|millions|billions)\b", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"\bor\b(?!\s+not\b)", re.IGNORECASE)


def yes_no_question(question: str) -> bool:
    """A yes/no question: its first sentence asks with an auxiliary verb first ("Does ...", "As of
    FY2022, has ...") and offers no alternatives ("A or B"); what follows it (an instruction such as
    "if the metric is not useful, explain why") does not change what it asks."""
    first = re.split(r"\?", question, maxsplit=1)[0].strip()
    lead = _lead(first)
    return any(_AUX.match(s) for s in (first, lead)) and not _ALTERNATIVE.search(first)


def analyst_kind(question: str, kind: str) -> str:
    """The kind an analyst reads a question as: yes/no by its first sentence (`yes_no_question`), a
    number when it names a metric (plan.metrics) or says how to write a number (_NUMBER_FORMAT), else the
    kind inferred."""
    if kind in ("numeric", "text", "true_false") and not TRUE_FALSE.match(question) and yes_no_question(question):
        return "true_false"
    if kind in ("numeric", "text") and (asked_metric(question) is not None or _NUMBER_FORMAT.search(question)):
        return "numeric"
    lead = _lead(question)
    if kind == "text" and lead != question and infer_type(lead).kind == "explain":  # "As of Q1, why did ...?"
        return "explain"
    return kind


def _lead(question: str) -> str:
    """The question without an opening phrase: "As of FY2023, ...", "Looking at VaR, ..."."""
    return re.sub(r"^[^,?]{0,60},\s*", "", question.strip())


def mode(kind: str, question: str, metric: Asked | None = None) -> str | None:
    """Which analyst request a question of this kind gets ("metric", "yes_no", "explain", "choice": which of
    several is the highest or lowest, choice.py), or None: the typed reader asks as always (a number the
    context states, a name, or a question worded "True or False: ..."). ``metric``: the metric to compute
    whatever the question's kind (the one a yes/no question turns on)."""
    if metric is not None or (kind == "numeric" and asked_metric(question) is not None):
        return "metric"
    if kind == "true_false" and not TRUE_FALSE.match(question):
        return "yes_no"
    if kind == "text" and choice.asked_choice(question) is not None:
        return "choice"
    return "explain" if kind == "explain" else None


def request(kind: str, question: str, n_units: int, metric: Asked | None = None) -> Request | None:
    """The analyst's request (`mode`) for a question of this kind over ``n_units`` context units, or None."""
    chosen = mode(kind, question, metric)
    if chosen == "metric":
        asked = metric or asked_metric(question)
        assert asked is not None
        fields = asked.fields()
        return Request("metric", metric_instruction(asked), _schema(n_units, {n: {"type": "number"} for n, _ in fields}),
                       24 + TOKENS_PER_NUMBER * len(fields), asked)
    if chosen == "yes_no":
        schema = _schema(n_units, {"reason": {"type": "string", "maxLength": REASON_MAX_CHARS},
                                   "answer": {"type": "boolean"}})
        return Request("yes_no", YES_NO_INSTRUCTION, schema, 24 + REASON_MAX_CHARS // 3)
    if chosen == "explain":
        schema = _schema(n_units, {"answer": {"type": "string", "maxLength": EXPLAIN_MAX_CHARS}})
        return Request("explain", EXPLAIN_INSTRUCTION, schema, 24 + EXPLAIN_MAX_CHARS // 3)
    if chosen == "choice":
        return Request("choice", choice.INSTRUCTION, _schema(n_units, choice.schema_fields()), choice.max_tokens(),
                       choice=choice.asked_choice(question))
    return None


def read(req: Request, data: dict[str, Any] | None, units: Sequence[ContextBlock]) -> tuple[Reading, str | None]:
    """The reply to an analyst request as a reading (blank when it is no answer), and the unit of an
    amount given in the scale the question asks (`read_metric`), else None."""
    if req.mode == "metric" and req.asked is not None:
        return read_metric(req.asked, data, units)
    if req.mode == "yes_no":
        return read_yes_no(data, units), None
    if req.mode == "choice" and req.choice is not None:
        return choice.read_choice(req.choice, data, units), None
    said = sentences((data or {}).get("answer"), EXPLAIN_MAX_CHARS)
    pointers = pointers_in(data or {}, len(units))
    return (Reading(said, pointers, grounded=bool(pointers)) if said else Reading(pointers=pointers)), None


def answer_text(req: Request | None, reading: Reading) -> str:
    """The submission's answer column: "Yes. <reason>", a metric with its percent sign, or the reading."""
    if req is not None and req.mode == "yes_no":
        return f"{reading.value}. {reading.expression}".strip() if reading.expression else reading.value
    if req is not None and req.asked is not None and req.asked.metric.percent:
        return f"{reading.value}%"
    return reading.value


FACT_PREFIX = "Computed from the financial statements: "


def with_fact(levels: Sequence[Sequence[ContextBlock]], fact: str, doc_id: str) -> list[list[ContextBlock]]:
    """The context levels with the computed metric as one more unit, last (nearest the question)."""
    return [[*level, ContextBlock(doc_id, FACT_PREFIX + fact)] for level in levels]


def answer_unit(req: Request | None, unit: str) -> str:
    """A metric's unit: percent, none for a ratio (the unit the question seemed to name is an operand's),
    the statements' unit for an amount; other answers keep the question's."""
    if req is None or req.asked is None:
        return unit
    metric = req.asked.metric
    return "percent" if metric.percent else unit if metric.amount else ""
