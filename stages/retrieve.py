"""retrieve: per question, the ranked and budgeted context (plus wider contexts for retries)."""
from __future__ import annotations

import logging
import time
from pathlib import Path

import polars as pl

from stages.core.common.artifacts import read_parquet, write_json, write_parquet
from stages.core.common.cli import run
from stages.core.common.dataio import has_answers, read_questions
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.engine.local import open_engine
from stages.core.retrieve.metrics import retrieval_metrics
from stages.core.retrieve.params import RetrieveParams, RetryContextParams
from stages.core.retrieve.search import CONTEXT_SCHEMA, Retriever
from stages.core.retrieve.sharded import retrieve_on

INDEX, NODES = Path("artifacts/index"), "artifacts/tree/nodes.parquet"
OUT = "artifacts/retrieve/contexts.parquet"
OUT_RETRY = "artifacts/retrieve/retry_contexts.parquet"
METRICS = "metrics/retrieval.json"


def main() -> None:
    params = load_params()
    p = section(RetrieveParams, "retrieve", params)
    ap = section(RetryContextParams, "answer", params, part=True)
    questions = read_questions(data_params(params).questions)
    queries = read_parquet("artifacts/plan/queries.parquet", "plan").sort("question_id", "query_index")
    by_q = {qid: g["query"].to_list() for (qid,), g in queries.group_by("question_id")}
    cache = EmbeddingCache()
    retriever = Retriever(INDEX, read_parquet(NODES, "build_tree"),
                          make_embedder(section(EmbedParams, "embed", params)), cache)
    queries_of = {q["id"]: by_q.get(q["id"]) or [q["question"]] for q in questions.iter_rows(named=True)}
    t0 = time.perf_counter()
    units_of = dict(zip(questions["id"], questions["answer_unit"])) if "answer_unit" in questions.columns else {}
    with open_engine(params) as engine:
        rows, retry_rows = retrieve_on(engine, retriever, (INDEX, NODES), queries_of, p, ap.max_retries, units_of)
    ms = 1000 * (time.perf_counter() - t0) / max(1, questions.height * (1 + ap.max_retries))
    cache.close()
    contexts = pl.DataFrame(rows, schema=CONTEXT_SCHEMA)
    write_parquet(contexts, OUT)
    write_parquet(pl.DataFrame(retry_rows, schema=CONTEXT_SCHEMA), OUT_RETRY)
    metrics: dict[str, object] = {"questions": questions.height, "ms_per_retrieval": round(ms, 1),
                                  "mean_context_tokens": round(float(contexts.group_by("question_id")
                                                                      .agg(pl.col("n_tokens").sum())["n_tokens"]
                                                                      .mean() or 0), 1)}
    if has_answers(questions):
        metrics = {**metrics, **retrieval_metrics(questions, contexts)}
    write_json(metrics, METRICS)
    logging.info("retrieve: %s", metrics)


if __name__ == "__main__":
    run(main, "retrieve")
