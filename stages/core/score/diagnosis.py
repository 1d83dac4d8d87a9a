"""Why a question lost points: the seed paper's error categories, from the verdict and the values."""
from __future__ import annotations

import math
from typing import Any

from stages.core.common.values import Range, Value, parse_value
from stages.core.score.metric import QuestionScore


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
