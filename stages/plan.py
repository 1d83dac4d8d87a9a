"""plan: rewrite each question into `plan.n_queries` retrieval queries."""
from __future__ import annotations

import logging

import polars as pl
from tqdm import tqdm

from stages.core.cli import run
from stages.core.artifacts import write_parquet
from stages.core.dataio import read_questions
from stages.core.llm import LLMParams, llm_session
from stages.core.params import load_params, section
from stages.core.planner import PlanParams, plan_queries

OUT = "artifacts/plan/queries.parquet"


def main() -> None:
    params = load_params()
    p = section(PlanParams, "plan", params)
    questions = read_questions(params["data"]["questions"])
    rows: list[dict[str, object]] = []
    fallbacks = 0

    def run(llm: object | None) -> None:
        nonlocal fallbacks
        for q in tqdm(questions.iter_rows(named=True), total=questions.height, desc="plan", unit="q"):
            queries, fell_back = plan_queries(q["question"], llm, p)  # type: ignore[arg-type]
            fallbacks += fell_back
            rows.extend({"question_id": q["id"], "query_index": i, "query": s} for i, s in enumerate(queries))

    if p.n_queries == 1:
        run(None)
    else:
        with llm_session(section(LLMParams, "llm", params)) as llm:
            run(llm)
    write_parquet(pl.DataFrame(rows, schema={"question_id": pl.String, "query_index": pl.Int32, "query": pl.String}), OUT)
    logging.info("plan: %d questions, %d queries, %d planner fallbacks", questions.height, len(rows), fallbacks)


if __name__ == "__main__":
    run(main, "plan")
