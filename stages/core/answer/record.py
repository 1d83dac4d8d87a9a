"""The records of answering: a context block as the prompt shows it, an answer, and what it cost."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from stages.core.common.values import BLANK


@dataclass
class Answer:
    """One answer to one question, already normalised to the submission format.

    ``answer_value`` is a string as it goes into the CSV: a number without
    thousands separators, ``[low,high]`` for a range, 1/0 for True/False, free
    text for categorical answers, or ``is_blank``.
    """

    question_id: str
    answer: str = BLANK
    answer_value: str = BLANK
    answer_unit: str = BLANK
    ref_id: list[str] = field(default_factory=list)
    explanation: str = BLANK
    supporting_materials: str = BLANK
    grounded: bool = True  # the reader found the value in the units it cited (typed reader)

    @property
    def is_blank(self) -> bool:
        return self.answer_value.strip().lower() in {"", BLANK}


@dataclass
class ContextBlock:
    """One retrieved unit as the prompt shows it."""

    doc_id: str
    text: str
    media: str | None = None  # "table" | "image" for the Referenced media part
    image: str | None = None  # a figure's PNG (artifacts/extract/images/), sent with the question (images.py)


def context_levels(contexts: pl.DataFrame | None) -> dict[str, list[list[dict[str, Any]]]]:
    """question_id -> [attempt 0 rows, attempt 1 rows, ...] of retrieve's context rows, in rank order."""
    out: dict[str, list[list[dict[str, Any]]]] = {}
    if contexts is None or contexts.is_empty():
        return out
    for r in contexts.sort("question_id", "attempt", "rank").iter_rows(named=True):
        levels = out.setdefault(r["question_id"], [])
        while len(levels) <= int(r["attempt"]):
            levels.append([])
        levels[int(r["attempt"])].append(r)
    return out


def context_blocks(contexts: pl.DataFrame) -> dict[str, list[list[ContextBlock]]]:
    """question_id -> [attempt 0 blocks, attempt 1 blocks, ...] from retrieve's context rows."""
    return {qid: [[ContextBlock(r["doc_id"], r["text"], r["media"]) for r in rows] for rows in levels]
            for qid, levels in context_levels(contexts).items()}


@dataclass
class AnswerOutcome:
    """An answer plus what producing it cost."""

    answer: Answer
    attempts: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cache_hits: int = 0
    raw: list[str] = field(default_factory=list)
    prompt_evaluated: int = 0  # prompt tokens the server evaluated (not served from its prompt cache)
    skipped: bool = False  # not asked: the earlier members had decided the vote (ensemble.early_stop)
    shared: int = 0  # attempts answered by an earlier member's identical greedy request (no call)
    pointers: list[int] = field(default_factory=list)  # typed reader: the units the answer points at (1-based)
    level: int = -1  # the context level of the member's view the answer came from (-1: the last one asked)


def add_cost(out: AnswerOutcome, reply: Any, shared: bool = False) -> None:
    """Count one attempt; a reply ``shared`` with an earlier member (the same greedy request) cost nothing."""
    out.attempts += 1
    out.raw.append(reply.text)
    if shared:
        out.shared += 1
        return
    out.prompt_tokens += reply.prompt_tokens
    out.completion_tokens += reply.completion_tokens
    out.latency_s += reply.latency_s
    out.cache_hits += reply.cached
    out.prompt_evaluated += reply.prompt_evaluated if reply.prompt_evaluated >= 0 else reply.prompt_tokens
