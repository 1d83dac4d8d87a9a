"""One question through plan → retrieve → answer → vote, exactly as the pipeline would answer it.

`ask_question` runs the stages' own functions in the stages' order: ``plan_queries``,
``retrieve_attempts`` (with the question's answer unit, as retrieve does), the context
rows of contexts.parquet read back into blocks by ``context_blocks`` (as answer reads
them), ``answer_members`` with the answer and ensemble params (typed reader, member views,
demonstrations, early stop), and the vote stage's ``vote_all`` and ``build_submission``.
So what ``stages.ask`` prints is the row the pipeline would submit for that question with
the same params; this module adds only a readable doc → section → unit tree.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES, MemberRun, answer_members
from stages.core.answer.images import answer_contexts, figure_llm
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import Answer, ContextBlock, context_blocks
from stages.core.answer.submission import build_submission
from stages.core.answer.voting import member_answers, vote_all
from stages.core.common.params import section
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLM
from stages.core.plan.planner import PlanParams, plan_queries
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.ranking import RetrievedUnit
from stages.core.retrieve.search import CONTEXT_SCHEMA, Retriever, context_rows, retrieve_attempts
from stages.core.tree.navigate import TreeView

ASK_ID = "ask"


def to_blocks(units: Sequence[RetrievedUnit]) -> list[ContextBlock]:
    """Units as the answerer's context blocks, through the rows the retrieve stage writes and
    the reader the answer stage uses (so text and media come out exactly as answer sees them)."""
    rows = context_rows(ASK_ID, 0, list(units))
    return context_blocks(pl.DataFrame(rows, schema=CONTEXT_SCHEMA)).get(ASK_ID, [[]])[0]


@dataclass
class AskParams:
    """The params sections one question goes through (the same dataclasses the stages build)."""

    plan: PlanParams
    retrieve: RetrieveParams
    answer: AnswerParams
    ensemble: EnsembleParams
    model: str  # llm.model, recorded in the member rows as the answer stage does
    llm: LLMParams = field(default_factory=LLMParams)  # the vision client borrows its key, timeouts and retries

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> AskParams:
        """The sections of params.yaml, built and checked as the stages build them."""
        return cls(section(PlanParams, "plan", params), section(RetrieveParams, "retrieve", params),
                   section(AnswerParams, "answer", params), section(EnsembleParams, "ensemble", params),
                   section(LLMParams, "llm", params).model,
                   section(LLMParams, "llm", params))


@dataclass
class AskResult:
    """Everything `ask_question` did: the queries, each attempt's context, every member's row,
    the voted answer and the submission row the vote stage would write."""

    queries: list[str]
    planner_fell_back: bool
    attempts: list[list[RetrievedUnit]]
    members: list[dict[str, Any]]  # one answer row per ensemble member (artifacts/answers/run_<i>.parquet)
    answer: Answer | None  # None when not answered (retrieval only)
    submission: dict[str, Any] | None

    @property
    def attempt_used(self) -> int:
        """The context level member 0's answer came from (0 = the first context)."""
        return max(int(self.members[0]["attempts"]) - 1, 0) if self.members else 0


def ask_question(question: str, unit: str, params: AskParams, retriever: Retriever, llm: LLM | None,
                 corpus_ids: set[str], urls: dict[str, str], *, answer: bool = True) -> AskResult:
    """One question through the pipeline's own code path; ``answer=False`` stops after retrieval.
    An empty ``unit`` is a questions file's empty cell: the answer stage infers kind and unit from the
    question (answer.infer_unit); ``is_blank`` asks for a name, as in WattBot's files."""
    unit = unit.strip()
    queries, fell_back = plan_queries(question, llm, params.plan)
    attempts = retrieve_attempts(retriever, queries, params.retrieve, params.answer.max_retries, unit)
    if not answer or llm is None:
        return AskResult(queries, fell_back, attempts, [], None, None)
    rows = [r for k, units in enumerate(attempts) for r in context_rows(ASK_ID, k, units)]
    contexts = answer_contexts(pl.DataFrame(rows, schema=CONTEXT_SCHEMA), params.answer.vision)
    questions = pl.DataFrame({"id": [ASK_ID], "question": [question], "answer_unit": [unit]})
    with figure_llm(llm, params.answer.vision, params.llm, contexts) as reader:  # figures' pixels, as answer sends
        index = getattr(retriever, "index", None)  # the document cards (citing.py); a stub has none
        names = (lambda q: [n.doc_id for n in index.named_docs(q)]) if index else None
        members = answer_members(reader, questions, contexts, params.answer, params.ensemble,
                                 MemberRun(params.model, corpus_ids, names=names, desc="ask: members"))
    member_rows = [m[0] for m in members]
    voted = vote_all([member_answers(pl.DataFrame(m, schema_overrides=MEMBER_SCHEMA_OVERRIDES)) for m in members],
                     [ASK_ID])
    submission = build_submission(questions, voted, urls, params.answer.style).row(0, named=True)
    return AskResult(queries, fell_back, attempts, member_rows, voted[0], submission)


def _section_of(tree: TreeView, node_id: str) -> str | None:
    """The section node above `node_id` (ids are hierarchical: doc:secN:...)."""
    parts = node_id.split(":")
    sec = ":".join(parts[:2]) if len(parts) >= 2 else None
    n = tree.nodes.get(sec) if sec else None
    return sec if n is not None and n.level == "section" else None


def _snippet(text: str, max_chars: int) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= max_chars else t[: max_chars - 1] + "…"


def context_tree(units: Sequence[RetrievedUnit], tree: TreeView, *, new_from: int | None = None,
                 max_chars: int = 160) -> str:
    """The context grouped doc → section → unit, documents and sections in order of their best unit.

    Each unit line: its rank in the context, node id, score, planner-query frequency,
    source (dense/bm25/both), page, tokens and the start of its text; units at index
    >= `new_from` (added by a retry) are marked ``+``.
    """
    docs: dict[str, dict[str | None, list[tuple[int, RetrievedUnit]]]] = {}
    for rank, u in enumerate(units):
        docs.setdefault(u.doc_id, {}).setdefault(_section_of(tree, u.key), []).append((rank, u))
    lines = []
    for doc, sections in docs.items():
        n_units = sum(len(v) for v in sections.values())
        title = tree.nodes[doc].title if doc in tree.nodes and tree.nodes[doc].title else ""
        lines.append(f"{doc}  ({n_units} unit{'s' if n_units > 1 else ''}){'  ' + title if title else ''}")
        for sec, items in sections.items():
            heading = tree.section_title(sec) if sec else ""
            lines.append(f"  § {sec or '(no section)'}{'  ' + _snippet(heading, 80) if heading else ''}")
            for rank, u in items:
                mark = "+" if new_from is not None and rank >= new_from else " "
                page = f" p.{u.page}" if u.page is not None else ""
                media = f" [{u.media}]" if u.media else ""
                span = u.key if len(u.node_ids) <= 1 else f"{u.key} (window of {len(u.node_ids)} sentences)"
                lines.append(f"   {mark}#{rank:<2} {span}  score {u.score:.4f}  freq {u.frequency}  {u.source}"
                             f"{page}  {u.n_tokens} tok{media}")
                lines.append(f"        {_snippet(u.text, max_chars)}")
    return "\n".join(lines)
