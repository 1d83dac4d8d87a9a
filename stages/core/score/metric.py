"""The WattBot 2025 metric as the competition host scores it, one question at a time.

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

from dataclasses import dataclass
from typing import Any, Literal

from stages.core.common.values import (
    Range,
    Scalar,
    Value,
    close,
    parse_value,
    ref_id_set,
)

VALUE_WEIGHT, REF_WEIGHT, NA_WEIGHT = 0.75, 0.15, 0.10
REL_TOL = ABS_TOL = 1e-3

QuestionType = Literal["numeric", "range", "list", "text", "true_false", "na"]


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


def _close(a: float, b: float) -> bool:
    return close(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


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
    ref = _jaccard(ref_id_set(truth_row.get("ref_id")), ref_id_set(pred_row.get("ref_id")))
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
