"""The typed reader's driver: every ensemble member's typed answer to one question.

The prompt is in typed_prompt.py and the reading of a reply in typed_reader.py; this module asks the
model (attempt-major over the members, retrying blank readings with the wider context)
and picks each member's answer.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stages.core.answer import analyst
from stages.core.answer import typed_reader as reader
from stages.core.answer.demos import demo_messages
from stages.core.answer.images import with_figures
from stages.core.answer.kinds import Kind, asks_to_compute, question_kind
from stages.core.answer.metrics import asked_amount, decided_yes, per_year_values, yes_no_metric
from stages.core.answer.params import TEMPERATURE, AnswerParams
from stages.core.answer.record import Answer, AnswerOutcome, ContextBlock, add_cost
from stages.core.answer.table_records import table_records
from stages.core.answer.typed_prompt import format_units, response_format, typed_reader_system, user_message
from stages.core.common.values import BLANK
from stages.core.llm.protocol import LLM
from stages.core.llm.replies import parse_json_reply

log = logging.getLogger("treerag.answer")

TF_TOP_LOGPROBS = 10  # True/False calls ask for the top log-probabilities at the answer (calibrated in code)
MAX_TOKENS = 64  # a typed reply is pointers and one value: ~20 tokens
EXPLAIN_MAX_TOKENS = 160  # an explanation's reply: EXPLAIN_MAX_CHARS of sentences and the pointers
# the kinds shown the worked examples; the others get the system prompt alone (measured: numeric answers
# read better without them, True/False and names worse)
DEMO_KINDS = ("true_false", "range", "text")


@dataclass
class TypedSetup:
    """What every typed-reader call of a run shares: the prefixes and the True/False prior.

    ``prefix`` is the system prompt with the worked examples, for the kinds in DEMO_KINDS (and a
    member's own extra kinds); ``bare`` the system prompt alone, for the others."""

    prefix: list[dict[str, str]]
    bare: list[dict[str, str]]
    tf_prior: tuple[float, float] | None = None
    annual_years: dict[str, int] = field(default_factory=dict)  # annual report -> its fiscal year (style analyst)

    def prefix_for(self, kind: str, extra_kinds: Sequence[str] = ()) -> list[dict[str, str]]:
        """The prefix for a question of ``kind``; ``extra_kinds`` (a member's own) are shown the demos too."""
        return self.prefix if kind in DEMO_KINDS or kind in extra_kinds else self.bare


def typed_prefixes(params: AnswerParams) -> TypedSetup:
    """The prefixes alone (system prompt, with and without the demonstrations), no model call."""
    system = {"role": "system", "content": typed_reader_system(params.corpus)}
    return TypedSetup([system, *demo_messages(params.demo_file, params.demos)], bare=[system])


def typed_units(blocks: Sequence[ContextBlock]) -> list[ContextBlock]:
    """A context level as the typed reader numbers and shows it: well-formed tables as records."""
    return [ContextBlock(b.doc_id, table_records(b.text), b.media, b.image) for b in blocks]


def computes(question: str, unit: str, kind: Kind | None = None) -> bool:
    """Whether the reply names an operation and its operands for code to compute (a numeric question worded
    to compute, kinds.asks_to_compute) instead of the value; ``kind``: the question's kind when inferred
    (kinds.question_type), else from ``unit``."""
    return (kind or question_kind(question, unit)) == "numeric" and asks_to_compute(question)


def typed_user_message(question: str, unit: str, units: Sequence[ContextBlock], kind: Kind | None = None) -> str:
    """The user message of a typed-reader call over `units` (already as `typed_units` shows them)."""
    kind = kind or question_kind(question, unit)
    return user_message(question, unit, kind, units, computes(question, unit, kind))


def typed_setup(llm: LLM, params: AnswerParams, annual_years: Mapping[str, int] | None = None) -> TypedSetup:
    """The prefixes (system prompt, with and without the demonstrations) and the model's content-free
    True/False prior (one call per run, then cached); ``annual_years``: the fiscal year of each annual
    report (index.cards.annual_years), whose statement rows give that year first."""
    setup = typed_prefixes(params)
    setup.annual_years = dict(annual_years or {})
    msg = user_message(reader.CONTENT_FREE_QUESTION, BLANK, "true_false", reader.CONTENT_FREE_UNITS)
    reply = llm.complete([*setup.prefix_for("true_false"), {"role": "user", "content": msg}], temperature=0.0,
                         seed=0, max_tokens=24,
                         response_format=response_format("true_false", 1), top_logprobs=TF_TOP_LOGPROBS)
    setup.tf_prior = reader.answer_token_probs(reply.token_logprobs)
    log.info("True/False content-free prior (true, false): %s", setup.tf_prior)
    return setup


@dataclass
class TypedMember:
    """One ensemble member of the typed reader on one question."""

    levels: list[list[ContextBlock]]
    seed: int
    extra_demo_kinds: tuple[str, ...] = ()  # kinds shown the worked examples besides DEMO_KINDS


@dataclass(frozen=True)
class TypedQuestion:
    """One question as the typed reader reads it: its id, wording and answer unit, and its kind when
    inferred (kinds.question_type; ``unit`` is then the inferred unit), else None: from ``unit``."""

    id: str
    text: str
    unit: str
    kind: Kind | None = None
    metric: Any = None  # answer.style analyst: the metric (metrics.Asked) to compute, whatever the wording asks


def answer_question_typed(llm: LLM, q: TypedQuestion, members: Sequence[TypedMember], params: AnswerParams,
                          setup: TypedSetup, greedy: dict[str, Any] | None = None) -> list[AnswerOutcome]:
    """Every member's typed answer to one question.

    Attempt-major: all members ask with context level 0 before any retries with level 1,
    so the server's cached prompt (demos + context) serves every member and only the
    first pays for evaluating it. A blank reading is retried with the next, wider level;
    a member's answer is its first non-blank reading. Calls are
    greedy, so a member whose request is exactly an earlier member's at the same level (same
    view and prefix) shares that member's reply instead of asking again. ``greedy``
    (request -> reply) carries those replies over from an earlier call for other members of the
    same question.
    """
    question_id, question, unit = q.id, q.text, q.unit
    kind = q.kind or question_kind(question, unit)
    if params.style == "analyst" and q.metric is not None:
        kind = "numeric"
    elif params.style == "analyst":
        kind = analyst.analyst_kind(question, kind)
    explain = kind == "explain"
    # answer.style analyst: its own request for a metric, a yes/no question or an explanation (analyst.py)
    styled = params.style == "analyst" and analyst.mode(kind, question, q.metric) is not None
    facts: list[str] = [""] * len(members)
    asked = yes_no_metric(question) if styled and kind == "true_false" else None
    if asked is not None:
        members, facts = _with_facts(llm, q, members, params, setup, asked)
    # read from the calibrated log-probabilities of the two answers (an analyst's yes/no follows its reason)
    tf = kind == "true_false" and not styled
    # a line item's amount asked in a scale: read from its row by code when the rows state it for its year, else
    # the reader reads it as any number
    amount = None
    if params.style == "analyst" and kind == "numeric" and not styled:
        amount = asked_amount(question)
    operation = computes(question, unit, kind)
    outs = [AnswerOutcome(Answer(question_id, answer_unit=unit or BLANK, grounded=False), attempts=0)
            for _ in members]
    # per member: its reading, the units it read, the context level, the analyst request (None: the typed one)
    # and the unit of an amount given in the scale the question asks (analyst; None: the usual unit)
    readings: list[tuple[reader.Reading, list[ContextBlock], int, analyst.Request | None, str | None] | None]
    readings = [None] * len(members)
    greedy = {} if greedy is None else greedy  # greedy requests (with their context level) -> their replies
    for level in range(params.max_retries + 1):
        for m, member in enumerate(members):
            if readings[m] is not None or level >= len(member.levels) or not member.levels[level]:
                continue
            units = typed_units(member.levels[level])
            req = analyst.request(kind, question, len(units), q.metric) if styled else None
            lookup = req.asked if req is not None else amount  # a metric's operands or an amount, by code first
            rows = analyst.read_rows(lookup, units, setup.annual_years) if lookup is not None else None
            if rows:
                readings[m] = (rows[0], units, level, req, rows[1])  # the statement rows state every operand
                continue
            if req is not None:
                msg = f"{format_units(units)}\n\nQuestion: {question}\n{req.instruction}"
                fmt, max_tokens = req.response_format(), req.max_tokens
            else:
                msg = user_message(question, unit, kind, units, operation)
                fmt, max_tokens = response_format(kind, len(units), operation), (
                    EXPLAIN_MAX_TOKENS if explain else MAX_TOKENS)
            messages = [*setup.prefix_for(kind, member.extra_demo_kinds), {"role": "user", "content": msg}]
            messages = with_figures(messages, units, params.vision)  # figures' pixels only with a vision endpoint
            key = json.dumps([messages, fmt], sort_keys=True)
            shared = key in greedy
            reply = greedy[key] if shared else llm.complete(
                messages, temperature=TEMPERATURE, seed=member.seed, max_tokens=max_tokens,
                response_format=fmt, **({"top_logprobs": TF_TOP_LOGPROBS} if tf else {}))
            greedy[key] = reply
            add_cost(outs[m], reply, shared)
            data = parse_json_reply(reply.text) if reply.finish_reason != "length" else None
            if data is None:
                log.warning("%s: unusable reply (finish=%s): %r", question_id, reply.finish_reason, reply.text[:120])
            true_prob = None
            if tf:
                probs = reader.answer_token_probs(reply.token_logprobs)
                true_prob = reader.calibrated_true_prob(probs, setup.tf_prior) if probs else None
            scaled = None
            if req is not None:
                reading, scaled = analyst.read(req, data, units)
            else:
                reading = reader.read_reply(kind, unit, data, units, true_prob, question)
            if params.style == "analyst" and req is None and kind == "numeric":
                reading, scaled = analyst.in_asked_scale(question, data, reading, units)
            if not reading.is_blank:
                readings[m] = (reading, units, level, req, scaled)
    for out, found in zip(outs, readings, strict=True):
        if found is None:
            continue
        reading, units, level, req, scaled = found
        out.pointers, out.level = list(reading.pointers), level
        out.answer = Answer(question_id, answer=analyst.answer_text(req, reading), answer_value=reading.value,
                            answer_unit=scaled or analyst.answer_unit(req, unit) or BLANK, ref_id=reader.refs_for(reading, units),
                            explanation=reading.expression or BLANK,
                            supporting_materials=reader.quote_for(reading, units), grounded=reading.grounded)
    for out, fact in zip(outs, facts, strict=True):
        if not fact or out.answer.is_blank:
            continue
        decided = decided_yes(question, asked, per_year_values(fact)) if asked is not None else None
        if decided is None:
            out.answer.explanation = f"{out.answer.explanation} {analyst.FACT_PREFIX}{fact}".replace(BLANK, "").strip()
            continue
        # a change or a sign the computed values show answers the question, whatever the reader said
        out.answer.answer_value = analyst.yes_no_value(decided)
        out.answer.explanation = f"{analyst.FACT_PREFIX}{fact}"
        out.answer.answer = f"{out.answer.answer_value}. {out.answer.explanation}"
    return outs


def _with_facts(llm: LLM, q: TypedQuestion, members: Sequence[TypedMember], params: AnswerParams,
                setup: TypedSetup, asked: Any) -> tuple[list[TypedMember], list[str]]:
    """The members with the metric a yes/no question turns on computed first (its own request, metrics.py)
    and added to their context as one more unit, so that the yes/no answer and its reason can rest on
    the number; a member whose metric is not computed reads its context as it was."""
    computed = answer_question_typed(llm, TypedQuestion(q.id, q.text, "", "numeric", metric=asked), members,
                                     params, setup)
    out, facts = [], []
    for member, c in zip(members, computed, strict=True):
        fact = c.answer.explanation if not c.answer.is_blank and c.answer.explanation != BLANK else ""
        doc = (c.answer.ref_id or [""])[0]
        out.append(TypedMember(analyst.with_fact(member.levels, fact, doc), member.seed, member.extra_demo_kinds)
                   if fact else member)
        facts.append(fact)
    return out, facts
