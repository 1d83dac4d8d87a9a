"""answer: `ensemble.n` members answer every question from the shared retrieval.

Questions are the outer loop and members the inner one, so the server reuses the
cached context prefix and members 1..n-1 pay only for generation. Every call goes
through the persistent response cache: a killed run, or a larger `ensemble.n`,
pays only for calls not made before. A member is not
asked a question whose vote the members before it have already decided (its row is
marked `skipped`); the vote stage then gives the same submission as with every member.
"""
from __future__ import annotations

import logging
from pathlib import Path

import polars as pl

from stages.core.answer.citing import answer_cards
from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES, MemberRun
from stages.core.answer.images import answer_contexts
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.sharded import answer_on
from stages.core.common.artifacts import read_parquet, write_parquet
from stages.core.common.cli import run
from stages.core.common.dataio import read_metadata, read_questions
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.engine.local import open_engine
from stages.core.llm.params import LLMParams

OUT_DIR = Path("artifacts/answers")
INDEX_DIR = Path("artifacts/index")  # its doc_cards.json: which documents a question names (citing.py)


def load_contexts(ap: AnswerParams) -> dict[str, list[list[ContextBlock]]]:
    """question_id -> [attempt 0 blocks, attempt 1 blocks, ...]; with a vision endpoint, figures carry their PNG."""
    frame = pl.concat([read_parquet("artifacts/retrieve/contexts.parquet", "retrieve"),
                       read_parquet("artifacts/retrieve/retry_contexts.parquet", "retrieve")])
    return answer_contexts(frame, ap.vision)


def main() -> None:
    params = load_params()
    ap = section(AnswerParams, "answer", params)
    ens = section(EnsembleParams, "ensemble", params)
    questions = read_questions(data_params(params).questions)
    corpus_ids = set(read_metadata(data_params(params).metadata)["id"].to_list())
    contexts = load_contexts(ap)
    names, years = answer_cards(INDEX_DIR)
    llm_params = section(LLMParams, "llm", params)
    # a call whose context holds a figure goes, with its pixels, to the vision endpoint (vision.*)
    with open_engine(params, [llm_params.api_key_env]) as engine:
        rows, summary = answer_on(engine, llm_params, questions, contexts, ap, ens,
                                  MemberRun(llm_params.model, corpus_ids, names=names, annual_years=years))
        for i, member in enumerate(rows):
            hits = sum(int(r["cache_hits"]) for r in member)
            calls = sum(int(r["attempts"]) for r in member)
            shared = sum(int(r["shared"]) for r in member)
            skipped = sum(bool(r["skipped"]) for r in member)
            logging.info("answer: member %d (seed %d): %d calls, %d cache hits, %d shared with an earlier member, "
                         "%d new, %d questions skipped (vote already decided)", i, ens.seed + i, calls, hits, shared,
                         calls - hits - shared, skipped)
        logging.info("answer: %s", summary)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for i, member in enumerate(rows):
        write_parquet(pl.DataFrame(member, schema_overrides=MEMBER_SCHEMA_OVERRIDES), OUT_DIR / f"run_{i}.parquet")


if __name__ == "__main__":
    run(main, "answer")
