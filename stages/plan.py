"""plan: rewrite each question into `plan.n_queries` retrieval queries (up to `llm.max_concurrency`
questions at once; rows and log lines in question order)."""
from __future__ import annotations

import logging

import polars as pl
from tqdm import tqdm

from stages.core.common.artifacts import write_parquet
from stages.core.common.cli import run
from stages.core.common.concurrency import ordered_map
from stages.core.common.dataio import read_questions
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.llm.client import ChatClient
from stages.core.llm.params import LLMParams
from stages.core.llm.session import llm_session
from stages.core.plan.planner import PlanParams, plan_queries

OUT = "artifacts/plan/queries.parquet"


def main() -> None:
    params = load_params()
    p = section(PlanParams, "plan", params)
    questions = read_questions(data_params(params).questions)
    rows: list[dict[str, object]] = []
    fallbacks = 0

    def run(llm: ChatClient | None) -> None:
        """Plan every question, up to llm.max_concurrency at once; rows in question order."""
        nonlocal fallbacks
        todo = list(questions.iter_rows(named=True))
        with tqdm(total=len(todo), desc="plan: questions", unit="q") as bar:
            plans = ordered_map(lambda q: plan_queries(q["question"], llm, p), todo,
                                llm.max_concurrency if llm is not None else 1, lambda _: bar.update(1))
        for q, (queries, fell_back) in zip(todo, plans, strict=True):
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
