"""Tests of the WattBot metric (stages/core/scoring.py) and the score CLI/stage."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from stages.core.common.dataio import read_csv_tolerant
from stages.core.common.values import (
    Range,
    is_blank,
    parse_number,
    parse_ref_ids,
    parse_value,
    ref_id_set,
)
from stages.core.score.diagnosis import error_category
from stages.core.score.metric import score_question
from stages.core.score.verdicts import score_submission

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "data" / "wattbot" / "train_QA.csv"


def row(value: str | None, ref: str | None = "['a']", question: str = "q?") -> dict[str, str | None]:
    return {"answer_value": value, "ref_id": ref, "question": question}


def qscore(truth: str | None, pred: str | None, t_ref: str | None = "['a']", p_ref: str | None = "['a']",
           question: str = "q?"):
    return score_question(row(truth, t_ref, question), row(pred, p_ref))


def category(truth: str | None, pred: str | None, t_ref: str | None = "['a']", p_ref: str | None = "['a']",
             question: str = "q?") -> str:
    t, p = row(truth, t_ref, question), row(pred, p_ref)
    return error_category(t, p, score_question(t, p))


# --- parsing -----------------------------------------------------------------

@pytest.mark.parametrize(
    "s",
    [None, "", "  ", "is_blank", "IS_BLANK ", "na", "NA", "n/a", "N/A",
     "Unable to answer with confidence based on the provided documents.",
     "  unable to answer with confidence based on the provided documents  "],
)
def test_blank_spellings(s: str | None) -> None:
    assert is_blank(s)
    assert parse_value(s) is None


@pytest.mark.parametrize("s", ["0", "nan", "none", "blank", "Unable to answer"])
def test_not_blank(s: str) -> None:
    assert not is_blank(s)


@pytest.mark.parametrize(
    "s,expected",
    [("1438", 1438.0), ("5,439,000", 5439000.0), ("1,438.5", 1438.5), ("1e6", 1e6), ("2.5E-3", 0.0025),
     ("-4.3", -4.3), ("13.2%", 13.2), (" 4.3 ", 4.3), ("$2.51", 2.51), (".5", 0.5)],
)
def test_parse_number(s: str, expected: float) -> None:
    assert parse_number(s) == expected


@pytest.mark.parametrize("s", ["GPT-3", "1,43", "12,3456", "nan", "inf", "4.3 tCO2e", "", None])
def test_parse_number_rejects(s: str | None) -> None:
    assert parse_number(s) is None


def test_parse_value_shapes() -> None:
    assert parse_value("[0.5,1]") == Range(0.5, 1.0)
    assert parse_value("[1, 0.5]") == Range(0.5, 1.0)
    assert parse_value("[1,2,3]") == (1.0, 2.0, 3.0)
    assert parse_value("['T5', 'GPT-3']") == ("t5", "gpt-3")
    assert parse_value("[4.3]") == 4.3
    assert parse_value("TRUE") == 1.0 and parse_value("false") == 0.0
    assert parse_value("  ML.ENERGY Benchmark ") == "ml.energy benchmark"


@pytest.mark.parametrize(
    "s,expected",
    [("['patterson2021']", {"patterson2021"}), ('["a"]', {"a"}), ("a", {"a"}), ("a, b", {"a", "b"}),
     ("[a;b]", {"a", "b"}), ("['Wu2021b','patterson2021']", {"wu2021b", "patterson2021"}),
     ("is_blank", set()), ("", set()), (None, set()), ("['is_blank']", set()), ("[]", set())],
)
def test_ref_id_set(s: str | None, expected: set[str]) -> None:
    assert ref_id_set(s) == expected
    assert len(parse_ref_ids(s)) == len(expected)  # the list form: the same ids, once each


# --- per-question score --------------------------------------------------------

def test_numeric_tolerance_edges() -> None:
    assert qscore("1000", "1000.9").value == 1  # rel 9e-4, inside
    assert qscore("1000", "1001.1").value == 0  # rel 1.1e-3, outside
    assert qscore("0.0005", "0.0014").value == 1  # abs_tol 1e-3 rescues tiny numbers
    assert qscore("0.0005", "0.0016").value == 0
    assert qscore("5439000", "5,439,000").value == 1
    assert qscore("1000000", "1e6").value == 1


def test_range_lenient_and_strict() -> None:
    inside = qscore("[0.02,0.1]", "0.05")
    assert (inside.value, inside.strict_value) == (1, 0)
    assert inside.score == pytest.approx(1.0) and inside.strict_score == pytest.approx(0.25)
    edge = qscore("[300,1000]", "1000.5")
    assert (edge.value, edge.strict_value) == (1, 0)
    outside = qscore("[300,1000]", "1100")
    assert (outside.value, outside.strict_value) == (0, 0)
    as_range = qscore("[300,1000]", "[1000, 300]")
    assert (as_range.value, as_range.strict_value) == (1, 1)
    assert qscore("[300,1000]", "[300,900]").value == 0
    assert as_range.question_type == "range"


def test_scalar_truth_range_prediction_is_wrong() -> None:
    qs = qscore("55", "[50,60]")
    assert (qs.value, qs.strict_value) == (0, 0)


def test_lists_order_insensitive() -> None:
    assert qscore("[1,2,3]", "[3,1,2]").value == 1
    assert qscore("[1,2,3]", "[3,1,2.0005]").value == 1
    assert qscore("[1,2,3]", "[1,2]").value == 0
    assert qscore("[1,2,3]", "[1,2,2]").value == 0
    assert qscore("['T5','GPT-3','Meena']", "[meena, gpt-3, t5]").value == 1
    assert qscore("[1,2,3]", "[3,1,2]").question_type == "list"


def test_text_and_true_false() -> None:
    assert qscore("ML.ENERGY Benchmark", "  ml.energy benchmark ").value == 1
    assert qscore("ML.ENERGY Benchmark", "ML.ENERGY").value == 0
    tf = qscore("1", "TRUE", question="True or False: x")
    assert tf.value == 1 and tf.question_type == "true_false"
    assert qscore("0", "1", question="True or False: x").value == 0
    assert qscore("GPT-3", "x").question_type == "text"
    assert qscore("4.3", "4.3").question_type == "numeric"


def test_ref_jaccard() -> None:
    assert qscore("1", "1", "['a','b']", "['B']").ref == pytest.approx(0.5)
    assert qscore("1", "1", "['a','b']", "a; b").ref == 1
    assert qscore("1", "1", "['a']", "is_blank").ref == 0
    assert qscore("1", "1", "['a']", "['a','b','c']").ref == pytest.approx(1 / 3)


def test_na_question() -> None:
    both = qscore("is_blank", "Unable to answer with confidence based on the provided documents",
                  "is_blank", "")
    assert (both.value, both.ref, both.na, both.strict_value, both.score) == (1, 1, 1, 1, pytest.approx(1.0))
    assert both.truth_blank and both.pred_blank and both.question_type == "na"
    # official: an answer on a truth-blank question keeps the value credit, loses ref and na
    answered = qscore("is_blank", "42", "is_blank", "['a']")
    assert (answered.value, answered.ref, answered.na) == (1, 0, 0)
    assert answered.score == pytest.approx(0.75)
    assert (answered.strict_value, answered.strict_score, answered.symmetric_score) == (0, 0, 0)


def test_abstaining_on_answerable_question_keeps_na_officially() -> None:
    qs = qscore("42", "is_blank", "['a']", "is_blank")
    assert (qs.value, qs.ref, qs.na) == (0, 0, 1)
    assert qs.score == pytest.approx(0.10) and qs.strict_score == pytest.approx(0.10)
    assert (qs.symmetric_na, qs.symmetric_score) == (0, 0)  # the old view: abstaining costs na too
    assert qscore("42", "41", "['a']", "['b']").na == 1


def test_weights() -> None:
    qs = qscore("42", "42", "['a','b']", "['a']")
    assert qs.score == pytest.approx(0.75 + 0.15 * 0.5 + 0.10)


# --- error categories -------------------------------------------------------

@pytest.mark.parametrize(
    "truth,pred,t_ref,p_ref,question,expected",
    [
        ("42", "42", "['a']", "['a']", "q?", "correct"),
        ("[1,2]", "1.5", "['a']", "['a']", "q?", "correct"),
        ("42", "is_blank", "['a']", "is_blank", "q?", "unnecessary_abstention"),
        ("is_blank", "42", "is_blank", "['a']", "q?", "false_answer_on_na"),
        ("is_blank", "n/a", "is_blank", "['a']", "q?", "reference_mismatch"),
        ("42", "42", "['a']", "['b']", "q?", "reference_mismatch"),
        ("4.3", "4300", "['a']", "['a']", "q?", "unit_conversion"),
        ("5439000", "5.439", "['a']", "['a']", "q?", "unit_conversion"),
        ("100", "1040", "['a']", "['a']", "q?", "unit_conversion"),
        ("100", "1060", "['a']", "['a']", "q?", "value_selection"),
        ("13.2", "13", "['a']", "['a']", "q?", "rounding"),
        ("100", "110", "['a']", "['a']", "q?", "rounding"),
        ("100", "111", "['a']", "['a']", "q?", "value_selection"),
        ("100", "-100", "['a']", "['a']", "q?", "value_selection"),
        ("[300,1000]", "[310,1000]", "['a']", "['a']", "q?", "rounding"),
        ("GPT-3", "42", "['a']", "['a']", "q?", "type_mismatch"),
        ("42", "GPT-3", "['a']", "['a']", "q?", "type_mismatch"),
        ("55", "[50,60]", "['a']", "['a']", "q?", "type_mismatch"),
        ("[0.02,0.1]", "0.5", "['a']", "['a']", "q?", "type_mismatch"),
        ("GPT-3", "T5", "['a']", "['a']", "q?", "categorical_mismatch"),
        ("1", "0", "['a']", "['a']", "True or False: x", "categorical_mismatch"),
    ],
)
def test_error_category(truth: str, pred: str, t_ref: str, p_ref: str, question: str, expected: str) -> None:
    assert category(truth, pred, t_ref, p_ref, question) == expected


# --- submissions ------------------------------------------------------------

def _labels() -> pl.DataFrame:
    return pl.DataFrame(
        {"id": ["q1", "q2", "q3"], "question": ["a?", "b?", "c?"],
         "answer_value": ["4.3", "is_blank", "[1,2]"], "ref_id": ["['a']", "is_blank", "['b']"]}
    )


def test_score_submission_join_and_summary() -> None:
    sub = pl.DataFrame(
        {"id": ["q3", "q1", "zz"], "answer_value": ["1.5", "4.3", "9"], "ref_id": ["['b']", "['a']", "['c']"]}
    )
    summary, table = score_submission(_labels(), sub)
    # q1 right, q2 missing -> blank prediction on a blank truth (right), q3 scalar in range
    assert summary["n"] == 3
    assert summary["score"] == pytest.approx(1.0)
    assert summary["strict"]["score"] == pytest.approx(round((1 + 1 + 0.25) / 3, 6))
    assert summary["strict"]["value"] == pytest.approx(round(2 / 3, 6))
    assert table["id"].to_list() == ["q1", "q2", "q3"]
    assert table["pred_answer_value"].to_list() == ["4.3", None, "1.5"]
    assert table["error_category"].to_list() == ["correct", "correct", "correct"]


def test_score_submission_missing_id_column() -> None:
    with pytest.raises(ValueError, match=r"sub\.csv: missing column\(s\) id"):
        score_submission(_labels(), pl.DataFrame({"answer_value": ["1"], "ref_id": ["a"]}),
                         submission_name="sub.csv")


def test_score_submission_duplicate_ids() -> None:
    sub = pl.DataFrame({"id": ["q1", "q1"], "answer_value": ["1", "2"], "ref_id": ["a", "a"]})
    with pytest.raises(ValueError, match="duplicate id"):
        score_submission(_labels(), sub)


def test_train_scored_against_itself() -> None:
    labels = read_csv_tolerant(TRAIN)
    summary, table = score_submission(labels, labels)
    assert summary["score"] == 1.0 and summary["strict"]["score"] == 1.0
    assert summary["n"] == labels.height
    assert set(table["error_category"]) == {"correct"}


def test_train_all_blank_submission() -> None:
    labels = read_csv_tolerant(TRAIN)
    blank_cols = [c for c in labels.columns if c not in ("id", "question")]
    sub = labels.with_columns(pl.lit("is_blank").alias(c) for c in blank_cols)
    n = labels.height
    n_blank = sum(v.strip() == "is_blank" for v in labels["answer_value"])
    n_blank_ref = sum(v.strip() == "is_blank" for v in labels["ref_id"])
    assert n_blank > 0
    # official: every answerable question keeps its na credit (0.10) even when abstained on
    expected = (0.75 * n_blank + 0.15 * n_blank_ref + 0.10 * n) / n
    symmetric = (0.75 * n_blank + 0.15 * n_blank_ref + 0.10 * n_blank) / n
    summary, table = score_submission(labels, sub)
    assert summary["score"] == pytest.approx(expected, abs=1e-6)
    assert summary["strict"]["score"] == pytest.approx(expected, abs=1e-6)
    assert summary["symmetric"]["score"] == pytest.approx(symmetric, abs=1e-6)
    assert table.filter(pl.col("question_type") != "na")["error_category"].unique().to_list() == [
        "unnecessary_abstention"
    ]


# --- CLI --------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stages.score", *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )


def test_cli_prints_summary_json(tmp_path: Path) -> None:
    sub = tmp_path / "sub.csv"
    read_csv_tolerant(TRAIN).write_csv(sub)
    proc = _cli("--labels", str(TRAIN), "--submission", str(sub))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["score"] == 1.0 and summary["strict"]["score"] == 1.0
    assert summary["n"] == read_csv_tolerant(TRAIN).height


def test_cli_missing_id_column(tmp_path: Path) -> None:
    sub = tmp_path / "sub.csv"
    sub.write_text("answer_value,ref_id\n1,a\n")
    proc = _cli("--labels", str(TRAIN), "--submission", str(sub))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(sub) in lines[0] and "id" in lines[0]


def test_cli_missing_file(tmp_path: Path) -> None:
    proc = _cli("--labels", str(TRAIN), "--submission", str(tmp_path / "nope.csv"))
    assert proc.returncode == 2
    assert "nope.csv" in proc.stderr and "not found" in proc.stderr and "Traceback" not in proc.stderr


# --- the official metric on a hand-computed submission ------------------------

# One row per rule; the per-row official / strict / symmetric scores were computed by hand:
# 1 numeric exact                          1.0      / 1.0  / 1.0
# 2 numeric 1.1e-3 off, ref 1/2            0.175    / 0.175/ 0.175  (0.15*0.5 + 0.10)
# 3 abstains on an answerable question     0.10     / 0.10 / 0.0    (official keeps na)
# 4 blank truth, blank prediction          1.0      / 1.0  / 1.0
# 5 blank truth, answered with a ref       0.75     / 0.0  / 0.0    (value credited officially)
# 6 range truth, scalar inside             1.0      / 0.25 / 0.25
# 7 text, case and ref-case differ         1.0      / 1.0  / 1.0
# 8 True/False flipped, right ref          0.25     / 0.25 / 0.25
HAND_LABELS = """id,question,answer_value,ref_id
h1,a?,4.3,['a']
h2,b?,1000,['a']
h3,c?,42,['a']
h4,d?,is_blank,is_blank
h5,e?,is_blank,is_blank
h6,f?,"[80,90]",['d']
h7,g?,GPT-3,['e']
h8,True or False: h?,0,['f']
"""
HAND_SUBMISSION = """id,answer_value,ref_id
h1,4.3,['a']
h2,1001.1,"['a','b']"
h3,is_blank,is_blank
h4,is_blank,is_blank
h5,7,['c']
h6,85,['d']
h7,gpt-3,['E']
h8,1,['f']
"""


def test_cli_official_metric_on_hand_computed_cases(tmp_path: Path) -> None:
    labels, sub = tmp_path / "labels.csv", tmp_path / "sub.csv"
    labels.write_text(HAND_LABELS)
    sub.write_text(HAND_SUBMISSION)
    proc = _cli("--labels", str(labels), "--submission", str(sub))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["score"] == pytest.approx(5.275 / 8, abs=1e-3)
    assert summary["strict"]["score"] == pytest.approx(3.775 / 8, abs=1e-3)
    assert summary["symmetric"]["score"] == pytest.approx(3.675 / 8, abs=1e-3)
    assert summary["na"] == pytest.approx(7 / 8, abs=1e-3)  # only h5 loses na
    assert summary["symmetric"]["na"] == pytest.approx(6 / 8, abs=1e-3)  # h3 and h5
