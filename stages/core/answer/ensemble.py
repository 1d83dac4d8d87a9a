"""The answer stage's driver: every ensemble member's answer to every question, in order.

Questions are the outer loop and members the inner one, so the server reuses the cached
context prefix; a member is not asked once the vote of the members before it is decided
(the submission is the same as asking every member, for fewer calls). The answer stage, the ask tool and the answer benchmark
all call `answer_members`, so they answer exactly alike.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from tqdm import tqdm

from stages.core.answer.citing import Namer, cite_named
from stages.core.answer.free_reader import answer_question
from stages.core.answer.kinds import question_type
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import Answer, AnswerOutcome, ContextBlock
from stages.core.answer.typed_answer import DEMO_KINDS, TypedMember, TypedQuestion, answer_question_typed, typed_setup
from stages.core.answer.voting import vote_decided
from stages.core.common.concurrency import ordered_map
from stages.core.llm.protocol import LLM, LLMRequestRefused

log = logging.getLogger("treerag.answer")
FAILED_PREFIX = "failed: "  # a member row's explanation when the endpoint refused the question's request

# member i reads the context as MEMBER_VIEWS[i % 3]: members that differ in where the best unit stands
# (reversed: last, nearest the question) disagree on different questions, which the vote can use
MEMBER_VIEWS = ("reversed", "reversed", "as_is")
# member i also shows the worked examples to the kinds MEMBER_EXTRA_DEMO_KINDS[i % 3] (typed_answer.DEMO_KINDS
# for all): member 1 reads numeric questions with them, so the first two members differ in what they were shown
MEMBER_EXTRA_DEMO_KINDS: tuple[tuple[str, ...], ...] = ((), ("numeric",), ())


def member_view_name(i: int) -> str:
    """Member i's view of the context (MEMBER_VIEWS)."""
    return MEMBER_VIEWS[i % len(MEMBER_VIEWS)]


def member_view(contexts: Sequence[Sequence["ContextBlock"]], view: str) -> list[list["ContextBlock"]]:
    """The context levels a member reads: as retrieved, or each level reversed."""
    levels = [list(c) for c in contexts]
    return [c[::-1] for c in levels] if view == "reversed" else levels


# raw: the model's replies in order, one per attempt; pointers: the units the typed answer points at, 1-based
# into the context level it came from (level: the retrieve attempt, as in contexts.parquet, seen in the member's
# view), so the report can show the context exactly as the reader saw it
MEMBER_SCHEMA_OVERRIDES = {"ref_id": pl.List(pl.String), "raw": pl.List(pl.String), "pointers": pl.List(pl.Int64)}


@dataclass(frozen=True)
class MemberRun:
    """What one answer run adds to the answer and ensemble params.

    ``model``: the model name each row records; ``corpus_ids``: the corpus's document ids (those a free-reader
    reply may cite); ``names``: question -> the documents it names, an answer then citing the one named
    document the context holds (`citing.cite_named`; None: the reply's own ref_ids); ``annual_years``: the
    fiscal year of each annual report (`index.cards.annual_years`: the year its statements' rows state first,
    answer.style analyst); ``desc``: the progress
    bar's label ("" hides it); ``max_concurrency``: how many tasks run at once (None: the client's
    ``llm.max_concurrency``)."""

    model: str
    corpus_ids: set[str] = field(default_factory=set)
    names: Namer | None = None
    annual_years: Mapping[str, int] = field(default_factory=dict)  # annual report -> its fiscal year (cards)
    desc: str = "answer: questions x members"
    max_concurrency: int | None = None


def answer_members(llm: LLM, questions: pl.DataFrame, contexts: dict[str, list[list[ContextBlock]]],
                   params: AnswerParams, ensemble: EnsembleParams, run: MemberRun) -> list[list[dict[str, Any]]]:
    """Every member's answer rows (answers/run_<i>.parquet), questions outer and members inner.

    Questions are the outer loop so that the server reuses the cached context prefix
    and members 1..n-1 pay only for generation; the answer stage and the answer
    benchmark both call this, so they answer exactly alike. Up to `run.max_concurrency`
    tasks run at once: (question, member) pairs for the free reader, whole questions for the typed
    one; questions shown the worked examples run before the others (one prompt prefix at a
    time for the server), and rows come out in (question, member) order whatever order the
    calls run or finish in, so the output equals a sequential run's. The members of a question are
    asked in order, the first majority together, and a member is skipped (row ``skipped``, no call)
    once the vote is decided (`voting.vote_decided`).
    """
    model, corpus_ids, names, desc = run.model, run.corpus_ids, run.names, run.desc
    stats = getattr(llm, "stats", None)
    workers = run.max_concurrency if run.max_concurrency is not None else getattr(llm, "max_concurrency", 1)
    setup = typed_setup(llm, params, run.annual_years) if params.reader == "typed" else None
    qs = list(questions.iter_rows(named=True))
    # free reader: one task per (question, member); typed reader: one task per question, whose
    # members run attempt-major so that they share the server's cached prompt
    # kind and unit per question: the questions file's unit, or inferred from the question (answer.infer_unit)
    types = {q["id"]: question_type(q["question"], q.get("answer_unit"), params.infer_unit, params.unit_words)
             for q in qs}
    kinds = {qid: t.kind for qid, t in types.items()}
    early = ensemble.n > 1
    tasks: list[tuple[dict[str, Any], list[int]]] = [
        t for q in qs for t in ([(q, list(range(ensemble.n)))] if setup is not None or early
                                else [(q, [i]) for i in range(ensemble.n)])]
    # questions that share a prompt prefix run one after another (those shown the demonstrations, then
    # the others), so that the server evaluates each prefix once instead of at every switch; rows are
    # put back in question order afterwards
    order = sorted(range(len(tasks)), key=lambda k: setup is not None and kinds[tasks[k][0]["id"]] not in DEMO_KINDS)

    def row(q: dict[str, Any], res: AnswerOutcome, i: int) -> dict[str, Any]:
        a = res.answer
        view = member_view_name(i)
        level = res.level if res.level >= 0 else res.attempts - 1
        refs = a.ref_id
        if names is not None and not a.is_blank:
            refs = cite_named(refs, q["question"], (b.doc_id for lvl in contexts.get(q["id"], []) for b in lvl), names)
        return {
            "question_id": q["id"], "answer": a.answer, "answer_value": a.answer_value,
            "answer_unit": a.answer_unit, "ref_id": refs, "explanation": a.explanation,
            "supporting_materials": a.supporting_materials, "is_blank": a.is_blank,
            "attempts": res.attempts, "prompt_tokens": res.prompt_tokens,
            "completion_tokens": res.completion_tokens, "latency_s": round(res.latency_s, 3),
            "cache_hits": res.cache_hits, "model": model, "seed": ensemble.seed + i, "grounded": a.grounded,
            "prompt_evaluated": res.prompt_evaluated, "skipped": res.skipped, "shared": res.shared,
            "raw": list(res.raw), "pointers": list(res.pointers), "view": view,
            "level": level if level >= 0 else -1,
        }

    def answer_task(task: tuple[dict[str, Any], list[int]]) -> list[dict[str, Any]]:
        q, members = task
        unit = types[q["id"]].unit
        ctx = contexts.get(q["id"], [[]])
        greedy: dict[str, Any] = {}  # this question's greedy requests -> replies, shared across ask() calls

        def ask(idx: list[int]) -> list[AnswerOutcome]:
            views = [member_view(ctx, member_view_name(i)) for i in idx]
            if setup is not None:
                # a greedy reply does not depend on the seed: typed members all send ensemble.seed, so a
                # member asking what another member or run asked finds its reply in the cache
                return answer_question_typed(
                    llm, TypedQuestion(q["id"], q["question"], unit, types[q["id"]].kind),
                    [TypedMember(v, ensemble.seed, MEMBER_EXTRA_DEMO_KINDS[i % len(MEMBER_EXTRA_DEMO_KINDS)])
                     for v, i in zip(views, idx, strict=True)], params, setup, greedy)
            return [answer_question(llm, q["id"], q["question"], unit, v, params, ensemble.seed + i, corpus_ids)
                    for v, i in zip(views, idx, strict=True)]

        try:
            if not early:
                results = ask(members)
            else:  # the first majority together (they share the cached prompt), then one at a time
                majority = ensemble.n // 2 + 1
                results = ask(members[:majority])
                for i in members[majority:]:
                    if vote_decided([r.answer for r in results], ensemble.n):
                        results.append(AnswerOutcome(Answer(q["id"], answer_unit=unit), attempts=0, skipped=True))
                    else:
                        results += ask([i])
        except LLMRequestRefused as e:  # this question only (e.g. longer than the context): the others go on
            reason = f"{FAILED_PREFIX}{e}"
            log.warning("answer: question %s cannot be answered, recorded as blank: %s", q["id"], e)
            results = [AnswerOutcome(Answer(q["id"], answer_unit=unit, explanation=reason), attempts=1, raw=[reason])
                       for _ in members]
        return [row(q, res, i) for res, i in zip(results, members, strict=True)]

    with tqdm(total=len(qs) * ensemble.n, desc=desc, unit="answer", disable=not desc) as bar:
        def progress(done_rows: list[dict[str, Any]]) -> None:
            bar.update(len(done_rows))
            if stats is not None:
                bar.set_postfix(hits=stats.hits, new=stats.misses)

        done_in_order = ordered_map(answer_task, [tasks[k] for k in order], workers, progress)
    done: list[list[dict[str, Any]]] = [[] for _ in tasks]
    for k, task_rows in zip(order, done_in_order, strict=True):
        done[k] = task_rows
    rows: list[list[dict[str, Any]]] = [[] for _ in range(ensemble.n)]
    for (_, members), task_rows in zip(tasks, done, strict=True):
        for i, r in zip(members, task_rows, strict=True):
            rows[i].append(r)
    failed = sorted({r["question_id"] for r in rows[0] if str(r["explanation"]).startswith(FAILED_PREFIX)})
    if failed:
        log.warning("answer: %d of %d question(s) could not be answered (blank, the reason in their explanation): "
                    "%s", len(failed), len(qs), ", ".join(failed[:10]))
    return rows
