"""A whole submission against its labels: the per-question verdict table and the summary."""
from __future__ import annotations

import logging
from typing import Any

import polars as pl

from stages.core.score.diagnosis import error_category
from stages.core.score.metric import score_question

VERDICT_SCHEMA: dict[str, Any] = {
    "id": pl.String,
    "question": pl.String,
    "gold_answer_value": pl.String,
    "pred_answer_value": pl.String,
    "gold_ref_id": pl.String,
    "pred_ref_id": pl.String,
    "value": pl.Float64,
    "ref": pl.Float64,
    "na": pl.Float64,
    "score": pl.Float64,
    "strict_value": pl.Float64,
    "strict_score": pl.Float64,
    "symmetric_na": pl.Float64,
    "symmetric_score": pl.Float64,
    "question_type": pl.String,
    "error_category": pl.String,
}
_NEEDED = ("id", "answer_value", "ref_id")
log = logging.getLogger("treerag.score")


def _as_text(df: pl.DataFrame, name: str) -> pl.DataFrame:
    missing = [c for c in _NEEDED if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name}: missing column(s) {', '.join(missing)}; found columns: {', '.join(df.columns)}"
        )
    df = df.with_columns(pl.col(c).cast(pl.String) for c in _NEEDED)
    dup = sorted(df.filter(pl.col("id").is_duplicated())["id"].unique().to_list())
    if dup:
        raise ValueError(f"{name}: duplicate id(s): {', '.join(dup)}")
    return df


def _examples(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")


def _check_ids(label_ids: list[str], pred_ids: list[str], labels_name: str, submission_name: str) -> None:
    """A submission for other questions is an error; missing or extra rows are warnings with their count."""
    known = set(label_ids)
    matched = known & set(pred_ids)
    if pred_ids and not matched:
        raise ValueError(f"{submission_name}: none of its {len(pred_ids)} id(s) is a question id of {labels_name} "
                         f"(submission: {_examples(pred_ids)}; questions: {_examples(label_ids)})")
    missing = [i for i in label_ids if i not in matched]
    extra = [i for i in pred_ids if i not in known]
    if missing:
        log.warning("score: %s has no row for %d of %d question(s) of %s (scored as blank answers): %s",
                        submission_name, len(missing), len(label_ids), labels_name, _examples(missing))
    if extra:
        log.warning("score: %s has %d row(s) whose id is no question of %s (ignored): %s",
                        submission_name, len(extra), labels_name, _examples(extra))


def score_submission(
    labels: pl.DataFrame,
    submission: pl.DataFrame,
    labels_name: str = "labels",
    submission_name: str = "submission",
) -> tuple[dict[str, Any], pl.DataFrame]:
    """Score a submission against labels: (summary dict, per-question verdict table).

    Every label row counts; a label id missing from the submission is a blank
    prediction and submission ids absent from the labels are ignored. Bad input
    raises ValueError naming ``labels_name``/``submission_name`` and the column.
    """
    labels = _as_text(labels, labels_name)
    submission = _as_text(submission, submission_name)
    if labels.height == 0:
        raise ValueError(f"{labels_name}: no questions to score")
    if "question" not in labels.columns:
        labels = labels.with_columns(pl.lit("").alias("question"))
    preds = {r["id"]: r for r in submission.select(_NEEDED).iter_rows(named=True)}
    _check_ids(labels["id"].to_list(), list(preds), labels_name, submission_name)
    rows = []
    for truth in labels.iter_rows(named=True):
        pred = preds.get(truth["id"], {})
        qs = score_question(truth, pred)
        rows.append(
            {
                "id": truth["id"],
                "question": truth["question"],
                "gold_answer_value": truth["answer_value"],
                "pred_answer_value": pred.get("answer_value"),
                "gold_ref_id": truth["ref_id"],
                "pred_ref_id": pred.get("ref_id"),
                "value": qs.value,
                "ref": qs.ref,
                "na": qs.na,
                "score": qs.score,
                "strict_value": qs.strict_value,
                "strict_score": qs.strict_score,
                "symmetric_na": qs.symmetric_na,
                "symmetric_score": qs.symmetric_score,
                "question_type": qs.question_type,
                "error_category": error_category(truth, pred, qs),
            }
        )
    table = pl.DataFrame(rows, schema=VERDICT_SCHEMA)

    def mean(col: str) -> float:
        return round(float(table[col].mean()), 6)  # type: ignore[arg-type]

    summary = {
        "score": mean("score"),
        "value": mean("value"),
        "ref": mean("ref"),
        "na": mean("na"),
        "n": table.height,
        "strict": {
            "score": mean("strict_score"),
            "value": mean("strict_value"),
            "ref": mean("ref"),
            "na": mean("na"),
        },
        "symmetric": {
            "score": mean("symmetric_score"),
            "value": mean("strict_value"),
            "ref": mean("ref"),
            "na": mean("symmetric_na"),
        },
    }
    return summary, table
