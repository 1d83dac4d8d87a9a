"""vote: the ensemble members' answers voted into the Kaggle CSV (stages/core/answer/voting.py)."""
from __future__ import annotations

import logging
from pathlib import Path

from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.submission import build_submission
from stages.core.answer.voting import read_member, vote_all
from stages.core.common.artifacts import write_csv
from stages.core.common.cli import run
from stages.core.common.dataio import read_metadata, read_questions
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section

ANSWERS = Path("artifacts/answers")
OUT = "submissions/submission.csv"


def main() -> None:
    params = load_params()
    ens = section(EnsembleParams, "ensemble", params)
    questions = read_questions(data_params(params).questions)
    members = [read_member(ANSWERS / f"run_{i}.parquet") for i in range(ens.n)]  # exactly the members params name
    voted = vote_all(members, questions["id"].to_list())
    meta = read_metadata(data_params(params).metadata)
    urls = dict(zip(meta["id"].to_list(), meta["url"].to_list()))
    sub = build_submission(questions, voted, urls, section(AnswerParams, "answer", params).style)
    write_csv(sub, OUT)
    blanks = int((sub["answer_value"] == "is_blank").sum())
    logging.info("vote: %d members -> %s (%d answered, %d blank)", ens.n, OUT, sub.height - blanks, blanks)


if __name__ == "__main__":
    run(main, "vote")
