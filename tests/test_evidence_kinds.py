"""Evidence kinds of labelled questions (stages/core/score/evidence.py) and their score table."""
from __future__ import annotations

import polars as pl
import pytest

from stages.core.score.analysis import categories_metrics
from stages.core.score.evidence import evidence_kinds, kind_table, kinds_frame


@pytest.mark.parametrize(("explanation", "supporting", "value", "kinds"), [
    ("Quote", "the model consumed 13.8 MWh", "13.8", ["quote"]),
    ("Table 3", "Model Hardware Power (W)", "1438", ["table"]),
    ("TABLE III", "", "0.5", ["table"]),
    ("Figure 2", "", "40", ["figure"]),
    ("Math: 192 * 0.453592 = 87.09", "Table 3: Estimated cost ...", "87.09", ["table", "arithmetic"]),
    ("1438 lbs / 99.8 lbs/day = 14.4", "Table 1 and Table 3", "14.4", ["table", "arithmetic"]),
    ("13.8 MWh ÷ 10.7 MWh/yr ≈ 1.3 household-years.", "Dodge 2022", "1.3", ["arithmetic"]),
    ("Requires calculation (75-20)", "", "55", ["arithmetic"]),
    ("Figure, Quote", "Figure 11b", "4.329", ["quote", "figure"]),
    ("is_blank", "is_blank", "is_blank", ["unanswerable"]),
])
def test_evidence_kinds_from_the_explanation_and_the_supporting_materials(explanation, supporting, value, kinds):
    assert evidence_kinds(explanation, supporting, value) == kinds


def test_kind_table_averages_each_kind_and_a_question_counts_in_each_of_its_kinds():
    labels = pl.DataFrame({"id": ["a", "b", "c"], "answer_value": ["1", "2", "is_blank"],
                           "explanation": ["Quote", "Math: 1 + 1 = 2", "is_blank"],
                           "supporting_materials": ["x", "Table 1: y", "is_blank"]})
    verdicts = pl.DataFrame({"id": ["a", "b", "c"], "score": [1.0, 0.25, 0.75]})
    t = kind_table(verdicts, labels)
    assert t.rows() == [("quote", 1, 1.0), ("table", 1, 0.25), ("arithmetic", 1, 0.25), ("unanswerable", 1, 0.75)]
    # without an explanation column every answerable question is a quote
    bare = kinds_frame(labels.drop("explanation", "supporting_materials"))
    assert bare.sort("id").rows() == [("a", "quote"), ("b", "quote"), ("c", "unanswerable")]


def test_categories_metrics_report_the_evidence_kinds_when_labels_are_given():
    labels = pl.DataFrame({"id": ["a", "b"], "answer_value": ["1", "2"], "explanation": ["Quote", "Figure 1"],
                           "supporting_materials": ["", ""]})
    verdicts = pl.DataFrame({"id": ["a", "b"], "question_type": ["numeric", "numeric"], "score": [1.0, 0.0],
                             "value": [1.0, 0.0], "ref": [1.0, 0.0], "na": [1.0, 1.0], "strict_score": [1.0, 0.0],
                             "symmetric_score": [1.0, 0.0], "error_category": ["correct", "value_selection"]})
    m = categories_metrics(verdicts, labels)
    assert m["evidence"] == {"quote": {"n": 1, "score": 1.0}, "figure": {"n": 1, "score": 0.0}}
