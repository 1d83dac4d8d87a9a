"""answer: `ensemble.n` members answer every question from the shared retrieval.

Questions are the outer loop and members the inner one, so the server reuses the
cached context prefix and members 1..n-1 pay only for generation. Every call goes
through the persistent response cache: a killed run, or a larger `ensemble.n`,
pays only for calls not made before.
"""
from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
from tqdm import tqdm

from stages.core.answering import AnswerParams, ContextBlock, EnsembleParams, answer_question
from stages.core.cli import run
from stages.core.artifacts import read_parquet, write_parquet
from stages.core.dataio import read_metadata, read_questions
from stages.core.llm import LLMParams, llm_session
from stages.core.params import load_params, section
from stages.core.types import BLANK

OUT_DIR = Path("artifacts/answers")


def load_contexts() -> dict[str, list[list[ContextBlock]]]:
    """question_id -> [attempt 0 blocks, attempt 1 blocks, ...]."""
    frames = [read_parquet("artifacts/retrieve/contexts.parquet", "retrieve"),
              read_parquet("artifacts/retrieve/retry_contexts.parquet", "retrieve")]
    ctx = pl.concat(frames).sort("question_id", "attempt", "rank")
    out: dict[str, list[list[ContextBlock]]] = {}
    for (qid, attempt), g in ctx.group_by("question_id", "attempt", maintain_order=True):
        levels = out.setdefault(qid, [])
        while len(levels) <= attempt:
            levels.append([])
        levels[attempt] = [ContextBlock(d, t, m) for d, t, m in g.select("doc_id", "text", "media").iter_rows()]
    return out


def main() -> None:
    params = load_params()
    ap = section(AnswerParams, "answer", params)
    ens = section(EnsembleParams, "ensemble", params)
    questions = read_questions(params["data"]["questions"])
    corpus_ids = set(read_metadata(params["data"]["metadata"])["id"].to_list())
    contexts = load_contexts()
    llm_params = section(LLMParams, "llm", params)
    rows: list[list[dict[str, object]]] = [[] for _ in range(ens.n)]
    with llm_session(llm_params) as llm:
        bar = tqdm(total=questions.height * ens.n, desc="answer", unit="call")
        for q in questions.iter_rows(named=True):
            unit = q.get("answer_unit") or BLANK
            for i in range(ens.n):
                seed = ens.seed + i
                res = answer_question(llm, q["id"], q["question"], unit, contexts.get(q["id"], [[]]), ap, seed,
                                      corpus_ids)
                a = res.answer
                rows[i].append({
                    "question_id": q["id"], "answer": a.answer, "answer_value": a.answer_value,
                    "answer_unit": a.answer_unit, "ref_id": a.ref_id, "explanation": a.explanation,
                    "supporting_materials": a.supporting_materials, "is_blank": a.is_blank,
                    "attempts": res.attempts, "prompt_tokens": res.prompt_tokens,
                    "completion_tokens": res.completion_tokens, "latency_s": round(res.latency_s, 3),
                    "cache_hits": res.cache_hits, "model": llm_params.model, "seed": seed,
                })
                bar.update(1)
                bar.set_postfix(hits=llm.stats.hits, new=llm.stats.misses)
        bar.close()
        for i, member in enumerate(rows):
            hits = sum(int(r["cache_hits"]) for r in member)  # type: ignore[call-overload]
            calls = sum(int(r["attempts"]) for r in member)  # type: ignore[call-overload]
            logging.info("answer: member %d (seed %d): %d calls, %d cache hits, %d new", i, ens.seed + i, calls,
                         hits, calls - hits)
        logging.info("answer: %s", llm.stats.summary())
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for i, member in enumerate(rows):
        write_parquet(pl.DataFrame(member, schema_overrides={"ref_id": pl.List(pl.String)}), OUT_DIR / f"run_{i}.parquet")


if __name__ == "__main__":
    run(main, "answer")
