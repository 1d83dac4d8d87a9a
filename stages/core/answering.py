"""Answering one question from its retrieved context, with retries on abstention.

The prompt puts the context first and the question last (the paper's +80%
ordering, and it lets the server reuse the cached context prefix across ensemble
members and retries). The reply is structured JSON, constrained by a JSON schema
whose `ref_id` items may only be doc ids present in the context. Everything the
model returns is parsed defensively and normalised in code; a malformed,
truncated or empty reply counts as an abstention and is retried.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from tqdm import tqdm

from stages.core.concurrency import ordered_map
from stages.core.llm import LLM
from stages.core.normalize import normalize_value
from stages.core.types import BLANK, Answer

log = logging.getLogger("treerag.answer")


@dataclass
class AnswerParams:
    """The `answer:` section of params.yaml."""

    context_first: bool = True
    temperature: float = 0.7
    max_tokens: int = 384
    max_retries: int = 2
    retry_k_factor: float = 2.0

    def validate(self) -> None:
        from stages.core.params import ParamError

        if self.max_retries < 0:
            raise ParamError("params.yaml: answer.max_retries must be >= 0")
        if self.retry_k_factor < 1.0:
            raise ParamError(f"params.yaml: answer.retry_k_factor={self.retry_k_factor} must be >= 1")


@dataclass
class EnsembleParams:
    """The `ensemble:` section of params.yaml: member i uses seed `seed + i`."""

    n: int = 3
    seed: int = 0

    def validate(self) -> None:
        from stages.core.params import ParamError

        if self.n < 1:
            raise ParamError(f"params.yaml: ensemble.n={self.n} must be >= 1")


@dataclass
class ContextBlock:
    """One retrieved unit as the prompt shows it."""

    doc_id: str
    text: str
    media: str | None = None  # "table" | "image" for the Referenced media part


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


SYSTEM = (
    "You answer questions about AI energy use, emissions, water and cost using ONLY the given context "
    "from research papers and reports. You cite the ref_id of the blocks that hold the answer. If the "
    "context does not contain the answer, you abstain with is_blank."
)

RULES = """Rules:
- Use only the context above. If it does not contain the answer, set answer, answer_value and explanation to "is_blank" and ref_id to [].
- answer_value: a number when the question asks for a quantity (digits only, no unit, no thousands separators, expressed in the answer unit); [low,high] for a range; 1 for True and 0 for False; otherwise a short name or phrase copied from the context.
- answer: the answer as a short sentence or phrase with its unit.
- ref_id: the ref_id(s) of the block(s) that contain the answer.
- explanation: first quote the exact words of the context that give the answer."""


def format_context(blocks: Sequence[ContextBlock]) -> str:
    """`[ref_id=doc] text` blocks; tables and image captions under 'Referenced media'."""
    text = [f"[ref_id={b.doc_id}] {b.text}" for b in blocks if not b.media]
    media = [f"[ref_id={b.doc_id}] ({b.media}) {b.text}" for b in blocks if b.media]
    out = "Context:\n" + "\n\n".join(text)
    if media:
        out += "\n\nReferenced media:\n" + "\n\n".join(media)
    return out


def build_messages(question: str, unit: str, blocks: Sequence[ContextBlock], context_first: bool) -> list[dict[str, str]]:
    """Chat messages for one attempt."""
    unit_line = f"Answer unit: {unit}" if unit and unit != BLANK else "Answer unit: none (text or True/False answer)"
    q = f"Question: {question}\n{unit_line}"
    ctx = format_context(blocks)
    body = f"{ctx}\n\n{q}\n\n{RULES}" if context_first else f"{q}\n\n{RULES}\n\n{ctx}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def response_format(doc_ids: Sequence[str]) -> dict[str, Any]:
    """JSON schema for the reply; ref_id items restricted to the context's doc ids."""
    ref_items: dict[str, Any] = {"type": "string", "enum": sorted(set(doc_ids))} if doc_ids else {"type": "string"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "answer",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "explanation": {"type": "string"},
                    "answer": {"type": "string"},
                    "answer_value": {"type": "string"},
                    "ref_id": {"type": "array", "items": ref_items},
                },
                "required": ["explanation", "answer", "answer_value", "ref_id"],
            },
        },
    }


def parse_reply(text: str) -> dict[str, Any] | None:
    """The reply's JSON object, or None when it is empty, truncated or not JSON."""
    text = (text or "").strip()
    if not text:
        return None
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def to_answer(question_id: str, unit: str, data: dict[str, Any] | None, allowed_ids: set[str],
              blocks: Sequence[ContextBlock]) -> Answer:
    """Normalise a parsed reply into an Answer (blank when unusable)."""
    if not data:
        return Answer(question_id, answer_unit=unit or BLANK)
    value = normalize_value(data.get("answer_value"), unit)
    if unit and unit != BLANK and not _is_number_or_range(value):
        # small models put the number in `answer` and a word ("high", the unit) in answer_value
        from_answer = normalize_value(data.get("answer"), unit)
        if _is_number_or_range(from_answer):
            value = from_answer
    if value == BLANK:
        return Answer(question_id, answer_unit=unit or BLANK)
    refs = data.get("ref_id") or []
    if isinstance(refs, str):
        refs = [refs]
    lower = {a.lower(): a for a in allowed_ids}
    refs = list(dict.fromkeys(lower[r.strip().lower()] for r in refs if isinstance(r, str) and r.strip().lower() in lower))
    explanation = str(data.get("explanation") or "").strip() or BLANK
    answer = str(data.get("answer") or "").strip() or value
    return Answer(question_id, answer=answer, answer_value=value, answer_unit=unit or BLANK, ref_id=refs,
                  explanation=explanation, supporting_materials=supporting_quote(refs, value, explanation, blocks))


_NUMBER_OR_RANGE = re.compile(r"-?\d+(\.\d+)?|\[-?\d+(\.\d+)?,-?\d+(\.\d+)?\]")


def _is_number_or_range(value: str) -> bool:
    return _NUMBER_OR_RANGE.fullmatch(value) is not None


_TRUE_FALSE = re.compile(r"\s*true\s+or\s+false\b", re.IGNORECASE)


def true_false_value(value: str, answer: str) -> str:
    """1/0 for a True-or-False question even when the model answered with a sentence
    ("It is false that ..."): seen in the 1.5B model's train_QA run (q102)."""
    if value in ("0", "1"):
        return value
    text = f"{value} {answer}".lower()
    has_false = re.search(r"\b(false|incorrect|not true)\b", text) is not None
    has_true = re.search(r"\btrue\b", text.replace("not true", "")) is not None
    if has_false and not has_true:
        return "0"
    if has_true and not has_false:
        return "1"
    return value


_CITATION = re.compile(r"\s*\[\d+(?:[,–-]\s*\d+)*\]")


def text_value(value: str, answer: str) -> str:
    """The name or phrase for a question with no answer unit (not True/False).

    The 1.5B model often writes the name in `answer` and a stray number in
    answer_value ("ML.ENERGY Benchmark" / "0", "Financial Sentiment Analysis [18]" /
    "5842": 3 of train_QA's 4 such questions). A number that the answer text does not
    contain is replaced by that text, without citation marks; "8 GPUs" / "8" stays 8."""
    phrase = _CITATION.sub("", answer).strip().rstrip(".").strip()
    if not _is_number_or_range(value) or not re.search(r"[A-Za-z]", phrase):
        return value
    numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
    plain = phrase.replace(",", "")
    if any(re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", plain) for n in numbers):
        return value
    return phrase


def supporting_quote(refs: Sequence[str], value: str, explanation: str, blocks: Sequence[ContextBlock],
                     max_chars: int = 300) -> str:
    """The cited context sentence that best shows the answer (for the submission's supporting_materials)."""
    cited = [b for b in blocks if b.doc_id in refs] or list(blocks)
    needles = [v for v in re.findall(r"[\d.]+", value)] or [value.lower()]
    for b in cited:
        for sent in re.split(r"(?<=[.!?])\s+", b.text):
            if any(n and n in sent.lower() for n in needles):
                return sent.strip()[:max_chars]
    return explanation[:max_chars] if explanation != BLANK else BLANK


def answer_question(
    llm: LLM,
    question_id: str,
    question: str,
    unit: str,
    contexts: Sequence[Sequence[ContextBlock]],
    params: AnswerParams,
    seed: int,
    corpus_ids: set[str],
) -> AnswerOutcome:
    """Ask with context attempt 0; on abstention retry with the wider contexts 1..max_retries."""
    out = AnswerOutcome(Answer(question_id, answer_unit=unit or BLANK), attempts=0)
    for attempt, blocks in enumerate(contexts[: params.max_retries + 1]):
        doc_ids = list(dict.fromkeys(b.doc_id for b in blocks))
        reply = llm.complete(
            build_messages(question, unit, blocks, params.context_first),
            temperature=params.temperature,
            seed=seed,
            max_tokens=params.max_tokens,
            response_format=response_format(doc_ids),
        )
        out.attempts = attempt + 1
        out.prompt_tokens += reply.prompt_tokens
        out.completion_tokens += reply.completion_tokens
        out.latency_s += reply.latency_s
        out.cache_hits += reply.cached
        out.raw.append(reply.text)
        data = parse_reply(reply.text) if reply.finish_reason != "length" else None
        if data is None:
            log.warning("%s: unusable reply on attempt %d (finish=%s): %r", question_id, attempt + 1,
                        reply.finish_reason, reply.text[:120])
        ans = to_answer(question_id, unit, data, set(doc_ids) | corpus_ids, blocks)
        if _TRUE_FALSE.match(question) and not ans.is_blank:
            ans.answer_value = true_false_value(ans.answer_value, ans.answer)
        elif (not unit or unit == BLANK) and not ans.is_blank:
            ans.answer_value = text_value(ans.answer_value, ans.answer)
        out.answer = ans
        if not ans.is_blank:
            break
    return out


def context_blocks(contexts: pl.DataFrame) -> dict[str, list[list[ContextBlock]]]:
    """question_id -> [attempt 0 blocks, attempt 1 blocks, ...] from retrieve's context rows."""
    ctx = contexts.sort("question_id", "attempt", "rank")
    out: dict[str, list[list[ContextBlock]]] = {}
    for (qid, attempt), g in ctx.group_by("question_id", "attempt", maintain_order=True):
        levels = out.setdefault(qid, [])
        while len(levels) <= attempt:
            levels.append([])
        levels[attempt] = [ContextBlock(d, t, m) for d, t, m in g.select("doc_id", "text", "media").iter_rows()]
    return out


MEMBER_SCHEMA_OVERRIDES = {"ref_id": pl.List(pl.String)}


def answer_members(llm: LLM, model: str, questions: pl.DataFrame, contexts: dict[str, list[list[ContextBlock]]],
                   params: AnswerParams, ensemble: EnsembleParams, corpus_ids: set[str],
                   desc: str = "answer", max_concurrency: int | None = None) -> list[list[dict[str, Any]]]:
    """Every member's answer rows (answers/run_<i>.parquet), questions outer and members inner.

    Questions are the outer loop so that the server reuses the cached context prefix
    and members 1..n-1 pay only for generation; the answer stage and the answer
    benchmark both call this, so they answer exactly alike. Up to `max_concurrency`
    (default: the client's `max_concurrency`, i.e. `llm.max_concurrency`) (question,
    member) tasks run at once; rows and log lines come out in (question, member) order
    whatever order the calls finish in, so the output equals a sequential run's.
    """
    stats = getattr(llm, "stats", None)
    workers = max_concurrency if max_concurrency is not None else getattr(llm, "max_concurrency", 1)
    tasks = [(q, i) for q in questions.iter_rows(named=True) for i in range(ensemble.n)]

    def answer_one(task: tuple[dict[str, Any], int]) -> dict[str, Any]:
        q, i = task
        unit = q.get("answer_unit") or BLANK
        seed = ensemble.seed + i
        res = answer_question(llm, q["id"], q["question"], unit, contexts.get(q["id"], [[]]), params, seed,
                              corpus_ids)
        a = res.answer
        return {
            "question_id": q["id"], "answer": a.answer, "answer_value": a.answer_value,
            "answer_unit": a.answer_unit, "ref_id": a.ref_id, "explanation": a.explanation,
            "supporting_materials": a.supporting_materials, "is_blank": a.is_blank,
            "attempts": res.attempts, "prompt_tokens": res.prompt_tokens,
            "completion_tokens": res.completion_tokens, "latency_s": round(res.latency_s, 3),
            "cache_hits": res.cache_hits, "model": model, "seed": seed,
        }

    with tqdm(total=len(tasks), desc=desc, unit="call") as bar:
        def progress(_: dict[str, Any]) -> None:
            bar.update(1)
            if stats is not None:
                bar.set_postfix(hits=stats.hits, new=stats.misses)

        done = ordered_map(answer_one, tasks, workers, progress)
    rows: list[list[dict[str, Any]]] = [[] for _ in range(ensemble.n)]
    for (_, i), row in zip(tasks, done, strict=True):
        rows[i].append(row)
    return rows
