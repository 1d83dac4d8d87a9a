"""The WattBot 2025 metric as the competition host scores it, and an error diagnosis.

Per question: ``0.75 * value + 0.15 * ref + 0.10 * na``, averaged over the labels.
``score`` is the official (hosted) metric; ``strict`` and ``symmetric`` are two
stricter views kept beside it so results stay comparable with other reports.

- value: numbers match with ``math.isclose(rel_tol=1e-3, abs_tol=1e-3)``; a truth
  ``[x,y]`` of exactly two numbers is a range (a scalar inside it, edges with the
  same tolerance, counts), other bracketed values are lists compared element-wise,
  order-insensitively; text compares stripped and lower-cased; ``true``/``false``
  read as 1/0. For a question whose truth is blank the official metric gives the
  value credit whatever was predicted (a quirk of the hosted metric).
- ref: Jaccard of the lower-cased ref-id sets; both empty (``is_blank``) = 1.
- na: 1 for every question whose truth is answerable, whatever was predicted;
  for a truth-blank question, 1 only when the predicted answer_value is blank.
  So an abstention on an answerable question loses value and ref, not na.

Views (all reported; the headline everywhere is ``score``):
- ``score`` (official): the rules above.
- ``strict``: a truth-blank question needs a blank prediction for the value
  credit, and a range truth needs a range prediction; ref and na as official.
- ``symmetric``: strict value, and na = 1 only when the prediction is blank
  exactly when the truth is (an abstention on an answerable question loses the
  na credit too). This is what treerag called "strict" before the official
  metric was adopted; it is kept so older numbers can be compared.
Blank predictions, in any spelling (``is_blank``, empty, ``na``, ``n/a``, the
"Unable to answer ..." sentence), never score as text.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

VALUE_WEIGHT, REF_WEIGHT, NA_WEIGHT = 0.75, 0.15, 0.10
REL_TOL = ABS_TOL = 1e-3

_BLANK_TOKENS = {
    "",
    "is_blank",
    "na",
    "n/a",
    "unable to answer with confidence based on the provided documents",
}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")
_BOOLEANS = {"true": 1.0, "false": 0.0}

QuestionType = Literal["numeric", "range", "list", "text", "true_false", "na"]


@dataclass(frozen=True)
class Range:
    """A two-number answer such as ``[0.02,0.1]`` (the bounds are sorted)."""

    low: float
    high: float


Scalar = float | str
Value = Scalar | Range | tuple[Scalar, ...] | None


@dataclass(frozen=True)
class QuestionScore:
    """One question's metric parts: official ``score``, ``strict_score``, ``symmetric_score``."""

    value: float
    ref: float
    na: float
    score: float
    strict_value: float
    strict_score: float
    symmetric_na: float
    symmetric_score: float
    truth_blank: bool
    pred_blank: bool
    question_type: QuestionType


def is_blank(value: str | None) -> bool:
    """True for every spelling of "no answer", so abstentions are never scored as text."""
    if value is None:
        return True
    s = str(value).strip().lower()
    return s.removesuffix(".").strip() in _BLANK_TOKENS


def parse_ref_ids(s: str | None) -> set[str]:
    """Ref ids as a lower-cased set, from ``['a','b']``, ``a, b``, ``[a;b]``, ``a`` or blank."""
    if is_blank(s):
        return set()
    inner = str(s).strip().removeprefix("[").removesuffix("]")
    ids = (part.strip().strip("'\"").strip().lower() for part in re.split(r"[,;]", inner))
    return {i for i in ids if not is_blank(i)}


def parse_number(s: str | float | int | None) -> float | None:
    """A float from ``1438``, ``5,439,000``, ``1e6``, ``13.2%``, ``$2.5``; None if not a number.

    Submissions should carry bare numbers, but model output often keeps a
    thousands separator or a unit sign, which is not a wrong value.
    """
    if s is None or isinstance(s, bool):
        return None
    if isinstance(s, (int, float)):
        return float(s) if math.isfinite(s) else None
    t = s.strip().lstrip("~≈$").removesuffix("%").strip()
    if _THOUSANDS.fullmatch(t):
        t = t.replace(",", "")
    return float(t) if _NUMBER.fullmatch(t) else None


def _parse_scalar(s: str) -> Scalar:
    t = s.strip().strip("'\"").strip()
    number = parse_number(t)
    if number is not None:
        return number
    return _BOOLEANS.get(t.lower(), t.lower())


def parse_value(s: str | None) -> Value:
    """An answer_value as None (blank), float, lower-cased text, Range or tuple (list).

    ``[x,y]`` of two numbers is a Range; ``[x]`` is the scalar x; other bracketed
    values are tuples. True/False read as 1/0.
    """
    if is_blank(s):
        return None
    t = str(s).strip()
    if not (t.startswith("[") and t.endswith("]")):
        return _parse_scalar(t)
    items = tuple(_parse_scalar(p) for p in re.split(r"[,;]", t[1:-1]) if p.strip())
    if len(items) == 1:
        return items[0]
    if len(items) == 2 and all(isinstance(i, float) for i in items):
        low, high = sorted(items)  # type: ignore[type-var]
        return Range(float(low), float(high))
    return items


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _scalar_match(t: Scalar, p: Scalar) -> bool:
    if isinstance(t, float) and isinstance(p, float):
        return _close(t, p)
    return t == p


def _list_match(truth: tuple[Scalar, ...], pred: tuple[Scalar, ...]) -> bool:
    if len(truth) != len(pred):
        return False
    left = list(pred)
    for t in truth:
        hit = next((i for i, p in enumerate(left) if _scalar_match(t, p)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def _value_match(truth: Value, pred: Value, strict: bool) -> bool:
    if truth is None or pred is None:
        return truth is None and pred is None
    if isinstance(truth, Range):
        if isinstance(pred, Range):
            return _close(truth.low, pred.low) and _close(truth.high, pred.high)
        inside = isinstance(pred, float) and (
            truth.low <= pred <= truth.high or _close(pred, truth.low) or _close(pred, truth.high)
        )
        return inside and not strict
    if isinstance(truth, tuple) or isinstance(pred, tuple):
        return isinstance(truth, tuple) and isinstance(pred, tuple) and _list_match(truth, pred)
    if isinstance(pred, Range):
        return False
    return _scalar_match(truth, pred)


def _question_type(truth: Value, question: str) -> QuestionType:
    if truth is None:
        return "na"
    if isinstance(truth, Range):
        return "range"
    if isinstance(truth, tuple):
        return "list"
    if isinstance(truth, str):
        return "text"
    if truth in (0.0, 1.0) and question.strip().lower().startswith("true or false"):
        return "true_false"
    return "numeric"


def _jaccard(a: set[str], b: set[str]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def _weighted(value: float, ref: float, na: float) -> float:
    return VALUE_WEIGHT * value + REF_WEIGHT * ref + NA_WEIGHT * na


def score_question(truth_row: dict[str, Any], pred_row: dict[str, Any]) -> QuestionScore:
    """Score one prediction row against its gold row (rows carry answer_value and ref_id).

    A missing prediction (empty dict or None fields) counts as a blank answer.
    """
    truth = parse_value(truth_row.get("answer_value"))
    pred = parse_value(pred_row.get("answer_value"))
    truth_blank, pred_blank = truth is None, pred is None
    value = 1.0 if truth_blank else float(_value_match(truth, pred, strict=False))
    strict_value = float(_value_match(truth, pred, strict=True))
    ref = _jaccard(parse_ref_ids(truth_row.get("ref_id")), parse_ref_ids(pred_row.get("ref_id")))
    na = float(pred_blank) if truth_blank else 1.0
    symmetric_na = float(truth_blank == pred_blank)
    return QuestionScore(
        value=value,
        ref=ref,
        na=na,
        score=_weighted(value, ref, na),
        strict_value=strict_value,
        strict_score=_weighted(strict_value, ref, na),
        symmetric_na=symmetric_na,
        symmetric_score=_weighted(strict_value, ref, symmetric_na),
        truth_blank=truth_blank,
        pred_blank=pred_blank,
        question_type=_question_type(truth, str(truth_row.get("question") or "")),
    )


def _kind(v: Value) -> str:
    if isinstance(v, Range):
        return "range"
    if isinstance(v, tuple):
        return "list"
    return "number" if isinstance(v, float) else "text"


def _numeric_pairs(truth: Value, pred: Value) -> list[tuple[float, float]] | None:
    """(truth, pred) number pairs to diagnose, or None when the values are not all numbers."""
    if isinstance(truth, float) and isinstance(pred, float):
        return [(truth, pred)]
    if isinstance(truth, Range) and isinstance(pred, Range):
        return [(truth.low, pred.low), (truth.high, pred.high)]
    if isinstance(truth, tuple) and isinstance(pred, tuple) and len(truth) == len(pred):
        if all(isinstance(x, float) for x in truth + pred):
            return list(zip(sorted(truth), sorted(pred)))  # type: ignore[type-var]
    return None


def _is_unit_conversion(t: float, p: float) -> bool:
    ratio = p / t if t else 0.0
    if ratio <= 0:
        return False
    k = round(math.log10(ratio))
    return k != 0 and abs(ratio / 10**k - 1) <= 0.05


def _is_rounding(t: float, p: float) -> bool:
    return t != 0 and abs(p - t) / abs(t) <= 0.10


def error_category(truth_row: dict[str, Any], pred_row: dict[str, Any], qs: QuestionScore) -> str:
    """Why a question lost points (the seed paper's decision tree), or ``correct``.

    Order: abstention errors, then (value right) reference_mismatch, then
    type_mismatch (number vs text, scalar vs range/list), then numeric errors by
    ratio r=p/t and relative error |p-t|/|t| (unit_conversion: r within 5% of
    10^k, k != 0; rounding: error <= 10%; else value_selection), else
    categorical_mismatch (text, and flipped True/False).
    """
    if qs.truth_blank and not qs.pred_blank:
        return "false_answer_on_na"
    if qs.value == 1 and qs.ref == 1:
        return "correct"
    if qs.pred_blank and not qs.truth_blank:
        return "unnecessary_abstention"
    if qs.value == 1:
        return "reference_mismatch"
    truth = parse_value(truth_row.get("answer_value"))
    pred = parse_value(pred_row.get("answer_value"))
    if _kind(truth) != _kind(pred):
        return "type_mismatch"
    pairs = _numeric_pairs(truth, pred)
    if pairs is None or qs.question_type == "true_false":
        return "categorical_mismatch"
    if all(_is_unit_conversion(t, p) for t, p in pairs):
        return "unit_conversion"
    if all(_is_rounding(t, p) for t, p in pairs):
        return "rounding"
    return "value_selection"


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
