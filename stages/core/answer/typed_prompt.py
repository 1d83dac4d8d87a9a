"""The typed reader's prompt: the system prompt, the numbered context units, the reply's JSON schema.

Code decides the question's kind, and the server's grammar only admits a reply of that kind:
the numbers of the context units that state the answer, then a JSON number, two numbers, a
boolean, a short string, or (for a question worded to compute) an operation and its two
operands, which code computes (arithmetic.py). The schema has no null: the model always
answers, and a wrong answer costs no more than a blank one.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stages.core.answer.arithmetic import OPERATIONS
from stages.core.answer.kinds import Kind
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_reader import EXPLAIN_MAX_CHARS, MAX_POINTERS, MAX_TEXT_CHARS
from stages.core.common.corpus import CorpusParams
from stages.core.common.values import BLANK


def typed_reader_system(corpus: CorpusParams) -> str:
    """The typed reader's system prompt for the corpus of params.yaml's `corpus:` section."""
    return (
        f"You answer a question{corpus.about()} from numbered context units "
        f"taken from {corpus.description}. Reply with JSON only. First list in \"units\" the numbers "
        "of the units that state the answer, then give the answer in the requested field and unit. Copy "
        "numbers from the units; convert them only when the question's unit differs. Use only the context; "
        "if no unit states the answer, give null."
    )


def reply_schema(kind: Kind, n_units: int, operation: bool = False) -> dict[str, Any]:
    """The JSON schema for a reply of this kind: unit pointers first, then the typed answer;
    ``operation`` (a numeric question worded to compute): the operation and its operands, not the value."""
    units: dict[str, Any] = {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_units + 1))},
                             "maxItems": MAX_POINTERS}
    answer: dict[str, dict[str, Any]]
    if kind == "numeric" and operation:  # code computes (arithmetic.py)
        answer = {"operation": {"type": "string", "enum": list(OPERATIONS)},
                  "a": {"type": "number"}, "b": {"type": "number"}}
    elif kind == "numeric":
        answer = {"value": {"type": "number"}}
    elif kind == "range":
        answer = {"low": {"type": "number"}, "high": {"type": "number"}}
    elif kind == "true_false":
        answer = {"answer": {"type": "boolean"}}
    elif kind == "explain":
        answer = {"answer": {"type": "string", "maxLength": EXPLAIN_MAX_CHARS}}
    else:
        answer = {"answer": {"type": "string", "maxLength": MAX_TEXT_CHARS}}
    props = {"units": units, **answer}
    return {"type": "object", "properties": props, "required": list(props)}


def response_format(kind: Kind, n_units: int, operation: bool = False) -> dict[str, Any]:
    """The OpenAI-style response_format carrying `reply_schema`."""
    return {"type": "json_schema", "json_schema": {
        "name": f"answer_{kind}", "strict": True, "schema": reply_schema(kind, n_units, operation)}}


def answer_instruction(kind: Kind, unit: str, operation: bool = False) -> str:
    """The last line of the prompt: which field to fill and how."""
    if kind == "true_false":
        return 'Reply {"units": [...], "answer": true or false}.'
    if kind == "text":
        return 'Reply {"units": [...], "answer": the name or short phrase, copied from the units}.'
    if kind == "explain":
        return ('Reply {"units": [...], "answer": one or two full sentences that answer the question '
                'from the units}.')
    if kind == "range":
        return 'Reply {"units": [...], "low": number, "high": number}' + (f" in {unit}." if _has_unit(unit) else ".")
    if not _has_unit(unit):  # a number whose unit neither the questions file nor the question names
        return answer_instruction(kind, "the unit the units state", operation)
    if operation:
        choices = '"difference", "sum", "ratio", "percent_change", "product" or "none"'
        return (f'Reply {{"units": [...], "operation": {choices}, "a": number, "b": number}} with a and b copied '
                f'from the units (b: 0 for "none"); the answer in {unit} is then computed from them.')
    return f'Reply {{"units": [...], "value": number}}: the answer in {unit}.'


def _has_unit(unit: str) -> bool:
    return bool(unit.strip()) and unit.strip() != BLANK


def format_units(units: Sequence[ContextBlock]) -> str:
    """`[k] doc_id (table): text` lines, numbered from 1."""
    lines = []
    for k, u in enumerate(units, start=1):
        tag = f" ({u.media})" if u.media else ""
        lines.append(f"[{k}] {u.doc_id}{tag}: {u.text}")
    return "Context:\n" + "\n\n".join(lines)


def user_message(question: str, unit: str, kind: Kind, units: Sequence[ContextBlock], operation: bool = False) -> str:
    """Context first (a prefix shared across members and retries), then the question and the reply format."""
    unit_line = f"Answer unit: {unit}" if kind in ("numeric", "range") and _has_unit(unit) else ""
    tail = [p for p in (unit_line, answer_instruction(kind, unit, operation)) if p]
    return f"{format_units(units)}\n\nQuestion: {question}\n" + "\n".join(tail)
