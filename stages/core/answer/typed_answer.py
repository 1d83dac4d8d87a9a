"""The typed reader's driver: every ensemble member's typed answer to one question.

The prompts and the reading of a reply are in typed_reader.py; this module asks the
model (attempt-major over the members, retrying blank readings with the wider context)
and picks each member's answer.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stages.core.answer import typed_reader as reader
from stages.core.answer.arithmetic import operation_asked
from stages.core.answer.demos import demo_messages
from stages.core.answer.images import with_figures
from stages.core.answer.kinds import Kind, asks_to_compute, question_kind
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import Answer, AnswerOutcome, ContextBlock, add_cost
from stages.core.answer.table_records import table_records
from stages.core.common.values import BLANK
from stages.core.llm.protocol import LLM
from stages.core.llm.replies import parse_json_reply

log = logging.getLogger("treerag.answer")


TF_TOP_LOGPROBS = 10


@dataclass
class TypedSetup:
    """What every typed-reader call of a run shares: the prefixes and the True/False prior.

    ``prefix`` is the system prompt with the worked examples, for the kinds in ``demo_kinds``;
    ``bare`` the system prompt alone, for the others (None: every kind gets ``prefix``)."""

    prefix: list[dict[str, str]]
    tf_prior: tuple[float, float] | None = None
    bare: list[dict[str, str]] | None = None
    demo_kinds: tuple[str, ...] = ()

    def prefix_for(self, kind: str, extra_kinds: Sequence[str] = ()) -> list[dict[str, str]]:
        """The prefix for a question of ``kind``; ``extra_kinds`` (a member's own) are shown the demos too."""
        shown = kind in self.demo_kinds or kind in extra_kinds
        return self.prefix if self.bare is None or shown else self.bare


def typed_prefixes(params: AnswerParams) -> TypedSetup:
    """The prefixes alone (system prompt, with and without the demonstrations), no model call."""
    system = {"role": "system", "content": reader.typed_reader_system(params.corpus)}
    prefix = [system, *demo_messages(params.demo_file, params.demos, params.number_format, params.quote_first,
                                     params.question_first)]
    return TypedSetup(prefix, bare=[system], demo_kinds=tuple(params.demo_kinds))


def typed_units(blocks: Sequence[ContextBlock], params: AnswerParams) -> list[ContextBlock]:
    """A context level as the typed reader numbers and shows it (tables as records with answer.table_records)."""
    return [ContextBlock(b.doc_id, table_records(b.text, params.grouped_headers, params.spanning_headers)
                         if params.table_records else b.text,
                         b.media, b.image) for b in blocks]


def number_format_for(question: str, unit: str, params: AnswerParams, member_format: str = "",
                      kind: Kind | None = None) -> str:
    """The number format a member's prompt asks for (answer.compute_format for a question asking to compute);
    ``kind``: the question's kind when inferred (kinds.question_type), else from ``unit``."""
    kind = kind or question_kind(question, unit)
    computes = kind == "numeric" and bool(params.compute_format) and asks_to_compute(question)
    return params.compute_format if computes else (member_format or params.number_format)


def typed_user_message(question: str, unit: str, units: Sequence[ContextBlock], params: AnswerParams,
                       number_format: str, kind: Kind | None = None) -> str:
    """The user message of a typed-reader call over `units` (already as `typed_units` shows them)."""
    operation = operation_asked(question, unit) if params.operation_hint else None
    return reader.user_message(question, unit, kind or question_kind(question, unit), units, number_format,
                               params.quote_first, params.question_first, operation)


def typed_setup(llm: LLM, params: AnswerParams) -> TypedSetup:
    """The prefixes (system prompt, with and without the demonstrations); with tf_logprobs, the
    model's content-free True/False prior."""
    setup = typed_prefixes(params)
    if params.tf_logprobs:  # one content-free call per run (then cached)
        msg = reader.user_message(reader.CONTENT_FREE_QUESTION, BLANK, "true_false", reader.CONTENT_FREE_UNITS,
                                  params.number_format, question_first=params.question_first)
        reply = llm.complete([*setup.prefix_for("true_false"), {"role": "user", "content": msg}], temperature=0.0,
                             seed=0, max_tokens=24,
                             response_format=reader.response_format("true_false", 1), top_logprobs=TF_TOP_LOGPROBS)
        setup.tf_prior = reader.answer_token_probs(reply.token_logprobs)
        log.info("True/False content-free prior (true, false): %s", setup.tf_prior)
    return setup


@dataclass
class TypedMember:
    """One ensemble member of the typed reader on one question."""

    levels: list[list[ContextBlock]]
    seed: int
    temperature: float
    number_format: str = ""  # "" = answer.number_format
    extra_demo_kinds: tuple[str, ...] = ()  # kinds shown the worked examples besides answer.demo_kinds


def answer_question_typed(llm: LLM, question_id: str, question: str, unit: str, members: Sequence[TypedMember],
                          params: AnswerParams, setup: TypedSetup,
                          greedy: dict[str, Any] | None = None, kind: Kind | None = None) -> list[AnswerOutcome]:
    """Every member's typed answer to one question (stages/core/reader.py).

    Attempt-major: all members ask with context level 0 before any retries with level 1,
    so the server's cached prompt (demos + context) serves every member and only the
    first pays for evaluating it. A blank or (retry_ungrounded) ungrounded reading, or
    (retry_missing_operand) an operation missing its second number, is retried with the next,
    wider level; per member the first grounded reading wins, else the first non-blank one
    (retry_missing_operand: among the readings with both numbers, when there are any). A greedy
    (temperature 0) member whose request is exactly an earlier member's at the same level (same
    view, prefix and format) shares that member's reply instead of asking again: the seed does not
    change a greedy reply. ``greedy`` (request -> reply) carries
    those replies over from an earlier call for other members of the same question. ``kind``: the
    question's kind when inferred (kinds.question_type; ``unit`` is then the inferred unit), else
    from ``unit``.
    """
    kind = kind or question_kind(question, unit)
    explain = kind == "explain"
    # True/False calls always ask for log-probabilities: the sampled and the calibrated answer then
    # come from the same (cached) call, so tf_logprobs can be switched without new calls
    tf = kind == "true_false"
    formats = [number_format_for(question, unit, params, m.number_format, kind) for m in members]
    outs = [AnswerOutcome(Answer(question_id, answer_unit=unit or BLANK, grounded=False), attempts=0)
            for _ in members]
    readings: list[list[tuple[reader.Reading, list[ContextBlock], int]]] = [[] for _ in members]
    done = [False] * len(members)
    greedy = {} if greedy is None else greedy  # greedy requests (with their context level) -> their replies
    for level in range(params.max_retries + 1):
        for m, member in enumerate(members):
            if done[m] or level >= len(member.levels) or not member.levels[level]:
                continue
            units = typed_units(member.levels[level], params)
            msg = typed_user_message(question, unit, units, params, formats[m], kind)
            messages = [*setup.prefix_for(kind, member.extra_demo_kinds), {"role": "user", "content": msg}]
            messages = with_figures(messages, units, params.vision)  # figures' pixels only with a vision endpoint
            response_format = reader.response_format(kind, len(units), number_format=formats[m],
                                                     allow_null=params.abstain != "never", quote=params.quote_first,
                                                     explain_chars=params.explain_max_chars)
            key = json.dumps([messages, response_format], sort_keys=True) if member.temperature == 0 else ""
            shared = key in greedy
            reply = greedy[key] if shared else llm.complete(
                messages, temperature=member.temperature, seed=member.seed,
                max_tokens=params.explain_max_tokens if explain else
                params.max_tokens * (2 if formats[m] == "named_operation" else 1),  # room for the two names
                response_format=response_format, **({"top_logprobs": TF_TOP_LOGPROBS} if tf else {}))
            if key:
                greedy[key] = reply
            add_cost(outs[m], reply, shared)
            data = parse_json_reply(reply.text) if reply.finish_reason != "length" else None
            if data is None:
                log.warning("%s: unusable reply (finish=%s): %r", question_id, reply.finish_reason, reply.text[:120])
            true_prob = None
            if tf and params.tf_logprobs:
                probs = reader.answer_token_probs(reply.token_logprobs)
                true_prob = reader.calibrated_true_prob(probs, setup.tf_prior) if probs else None
            reading = reader.read_reply(kind, unit, data, units, true_prob, restate_numbers=params.restate_numbers,
                                        narrow_pointers=params.narrow_pointers,
                                        explain_min_words=params.explain_min_words,
                                        explain_chars=params.explain_max_chars, question=question,
                                        compute_decimals=params.compute_decimals,
                                        operation_from_wording=params.operation_from_wording,
                                        pick_cells=params.cell_from_header, tidy_names=params.tidy_names,
                                        tf_threshold=params.tf_threshold, precise_numbers=params.precise_numbers,
                                        times_ranges=params.times_ranges,
                                        fill_missing_operand=params.fill_missing_operand,
                                        restate_sign=params.restate_sign, same_record=params.same_record_operands,
                                        pointed_cell=params.pointed_cell)
            if not reading.is_blank:
                readings[m].append((reading, units, level))
                done[m] = (reading.grounded or not params.retry_ungrounded) and not (
                    params.retry_missing_operand and reading.missing_operand)
    for m, out in enumerate(outs):
        if not readings[m]:
            continue
        found = readings[m]
        if params.retry_missing_operand and any(not r.missing_operand for r, _, _ in found):
            found = [x for x in found if not x[0].missing_operand]  # an operation with both its numbers first
        reading, units, level = next(((r, u, k) for r, u, k in found if r.grounded), found[0])
        out.pointers, out.level = list(reading.pointers), level
        if params.abstain == "ungrounded" and not reading.grounded:
            continue
        out.answer = Answer(question_id, answer=reading.value, answer_value=reading.value,
                            answer_unit=unit or BLANK, ref_id=reader.refs_for(reading, units),
                            explanation=reading.expression or BLANK,
                            supporting_materials=reader.quote_for(reading, units), grounded=reading.grounded)
    return outs
