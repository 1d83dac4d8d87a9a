"""Score a submission with the WattBot metric: a CLI and the DVC ``score`` stage.

``python -m stages.score --labels L.csv --submission S.csv`` prints the summary JSON.
With no arguments (the DVC stage) it scores ``submissions/submission.csv`` against
``data.questions`` and writes ``metrics/score.json`` + ``metrics/verdicts.parquet``;
unlabelled questions (test_Q) get ``{"n": N, "labelled": false}`` and an empty table,
so the stage's outs always exist.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.artifacts import write_json, write_parquet
from stages.core.dataio import has_answers, read_csv_tolerant
from stages.core.params import load_params
from stages.core.scoring import VERDICT_SCHEMA, score_submission

SUBMISSION = Path("submissions/submission.csv")
SCORE_JSON = Path("metrics/score.json")
VERDICTS = Path("metrics/verdicts.parquet")


def _read_labels(path: Path) -> pl.DataFrame:
    labels = read_csv_tolerant(path)
    if not has_answers(labels):
        raise ValueError(f"{path}: no gold answers (answer_value/ref_id columns empty or absent)")
    return labels


def _score(
    labels_path: Path, labels: pl.DataFrame, submission_path: Path
) -> tuple[dict[str, Any], pl.DataFrame]:
    submission = read_csv_tolerant(submission_path)
    return score_submission(labels, submission, str(labels_path), str(submission_path))


def _run_stage() -> dict[str, Any]:
    questions = (load_params().get("data") or {}).get("questions")
    if not questions:
        raise ValueError("params.yaml: missing parameter data.questions")
    labels = read_csv_tolerant(questions)
    if has_answers(labels):
        summary, table = _score(Path(questions), labels, SUBMISSION)
    else:
        summary = {"n": labels.height, "labelled": False}
        table = pl.DataFrame(schema=VERDICT_SCHEMA)
        print(f"score: {questions} has no gold answers; {SCORE_JSON} holds no score", file=sys.stderr)
    write_json(summary, SCORE_JSON)
    write_parquet(table, VERDICTS)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Entry point: with --labels/--submission score those files, else run the DVC stage."""
    parser = argparse.ArgumentParser(prog="python -m stages.score", description=__doc__)
    parser.add_argument("--labels", type=Path, help="questions CSV with gold answers")
    parser.add_argument("--submission", type=Path, help="submission CSV in the WattBot format")
    args = parser.parse_args(argv)
    if (args.labels is None) != (args.submission is None):
        parser.error("give both --labels and --submission, or neither (DVC stage)")
    try:
        if args.labels is None:
            summary = _run_stage()
        else:
            summary, _ = _score(args.labels, _read_labels(args.labels), args.submission)
    except ValueError as e:  # InputError and ParamError included
        print(f"score: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
