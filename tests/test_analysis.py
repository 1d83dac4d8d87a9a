"""Tests of the score analysis: error categories (hand-made cases), counts per category and
type, the Markdown report, the ensemble-size curve, the PNGs and the score stage's outputs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from stages.core.answer.record import Answer
from stages.core.retrieve.search import CONTEXT_SCHEMA
from stages.core.score import analysis
from stages.core.score.diagnosis import error_category
from stages.core.score.metric import score_question
from stages.core.score.verdicts import score_submission

ROOT = Path(__file__).resolve().parents[1]


def category(truth: str | None, pred: str | None, t_ref: str | None = "['a']", p_ref: str | None = "['a']",
             question: str = "q?") -> str:
    t = {"answer_value": truth, "ref_id": t_ref, "question": question}
    p = {"answer_value": pred, "ref_id": p_ref}
    return error_category(t, p, score_question(t, p))


# --- the decision tree: cases tests/test_scoring.py does not cover ----------------

@pytest.mark.parametrize(
    "truth,pred,t_ref,p_ref,question,expected",
    [
        # blanks, in every spelling, on both sides
        ("42", "", "['a']", "", "q?", "unnecessary_abstention"),
        ("42", None, "['a']", None, "q?", "unnecessary_abstention"),
        ("42", "Unable to answer with confidence based on the provided documents.", "['a']", "is_blank", "q?",
         "unnecessary_abstention"),
        ("[300,1000]", "is_blank", "['a']", "is_blank", "q?", "unnecessary_abstention"),
        ("GPT-3", "NA", "['a']", "is_blank", "q?", "unnecessary_abstention"),
        ("1", "is_blank", "['a']", "is_blank", "True or False: x", "unnecessary_abstention"),
        ("is_blank", "is_blank", "is_blank", "is_blank", "q?", "correct"),
        ("is_blank", "N/A", "is_blank", "", "q?", "correct"),
        ("is_blank", "[1,2]", "is_blank", "is_blank", "q?", "false_answer_on_na"),
        ("is_blank", "GPT-3", "is_blank", "['a']", "q?", "false_answer_on_na"),
        # abstention is checked before anything else, even when the refs are also wrong
        ("42", "is_blank", "['a']", "['b']", "q?", "unnecessary_abstention"),
        # ranges
        ("[300,1000]", "[300.2,999.5]", "['a']", "['a']", "q?", "correct"),
        ("[300,1000]", "[1000,300]", "['a']", "['a']", "q?", "correct"),
        ("[300,1000]", "500", "['a']", "['b']", "q?", "reference_mismatch"),
        ("[300,1000]", "[0.3,1]", "['a']", "['a']", "q?", "unit_conversion"),
        ("[300,1000]", "[330,1000]", "['a']", "['a']", "q?", "rounding"),
        ("[300,1000]", "[100,200]", "['a']", "['a']", "q?", "value_selection"),
        ("[300,1000]", "[0.3,500]", "['a']", "['a']", "q?", "value_selection"),  # only one end converted
        ("[300,1000]", "1500", "['a']", "['a']", "q?", "type_mismatch"),
        ("[300,1000]", "GPT-3", "['a']", "['a']", "q?", "type_mismatch"),
        # numbers: ratio within 5% of 10^k (k != 0) is a unit conversion, else relative error decides
        ("5439000", "5.2", "['a']", "['a']", "q?", "unit_conversion"),  # r = 0.956e-6
        ("5439000", "5.1", "['a']", "['a']", "q?", "value_selection"),  # r = 0.938e-6
        ("0.18", "18", "['a']", "['a']", "q?", "unit_conversion"),  # percent vs fraction
        ("2510000", "2.51", "['a']", "['a']", "q?", "unit_conversion"),
        ("13.2", "12", "['a']", "['a']", "q?", "rounding"),  # 9.1 %
        ("13.2", "11.8", "['a']", "['a']", "q?", "value_selection"),  # 10.6 %
        ("-5", "-5.4", "['a']", "['a']", "q?", "rounding"),
        ("0", "0.5", "['a']", "['a']", "q?", "value_selection"),  # no ratio or relative error from zero
        ("1,438", "1438", "['a']", "['b']", "q?", "reference_mismatch"),
        ("42", "42", "['a','b']", "['a']", "q?", "reference_mismatch"),  # partial Jaccard is still a mismatch
        # lists
        ("[a;b;c]", "[c;a;b]", "['a']", "['a']", "q?", "correct"),
        ("[a;b;c]", "[a;b;d]", "['a']", "['a']", "q?", "categorical_mismatch"),
        ("[10,20,30]", "[10000,20000,30000]", "['a']", "['a']", "q?", "unit_conversion"),
        ("[a;b;c]", "a", "['a']", "['a']", "q?", "type_mismatch"),
        # text and True/False
        ("ML.ENERGY Benchmark", "ml.energy benchmark ", "['a']", "['a']", "q?", "correct"),
        ("GPT-3", "GPT-4", "['a']", "['a']", "q?", "categorical_mismatch"),
        ("1", "true", "['a']", "['a']", "True or False: x", "correct"),
        ("0", "True", "['a']", "['a']", "True or False: x", "categorical_mismatch"),
        ("1", "yes", "['a']", "['a']", "True or False: x", "type_mismatch"),
    ],
)
def test_error_category_cases(truth, pred, t_ref, p_ref, question, expected) -> None:
    got = category(truth, pred, t_ref, p_ref, question)
    assert got == expected
    assert got in analysis.CATEGORIES


def test_missing_prediction_is_an_abstention() -> None:
    labels = pl.DataFrame({"id": ["q1", "q2"], "question": ["a?", "b?"], "answer_value": ["[1,2]", "is_blank"],
                           "ref_id": ["['a']", "is_blank"]})
    # no row for either question (a submission of other questions' ids is an error: test_bad_inputs.py)
    empty = pl.DataFrame(schema={"id": pl.String, "answer_value": pl.String, "ref_id": pl.String})
    _, table = score_submission(labels, empty)
    assert table["error_category"].to_list() == ["unnecessary_abstention", "correct"]
    assert table["question_type"].to_list() == ["range", "na"]


# --- counts ------------------------------------------------------------------------

def verdicts() -> pl.DataFrame:
    labels = pl.DataFrame({
        "id": ["q1", "q2", "q3", "q4", "q5", "q6"],
        "question": ["n?", "n?", "r?", "True or False: x", "t?", "na?"],
        "answer_value": ["10", "4.3", "[300,1000]", "1", "GPT-3", "is_blank"],
        "ref_id": ["['a']", "['b']", "['c']", "['d']", "['e']", "is_blank"],
    })
    sub = pl.DataFrame({
        "id": ["q1", "q2", "q3", "q4", "q5", "q6"],
        "answer_value": ["10", "4300", "is_blank", "1", "GPT-3", "7"],
        "ref_id": ["['a']", "['b']", "is_blank", "['x']", "['e']", "['f']"],
    })
    return score_submission(labels, sub)[1]


def test_category_table_counts_and_points_lost() -> None:
    v = verdicts()
    t = analysis.category_table(v)
    assert t["category"].to_list() == list(analysis.CATEGORIES)
    counts = dict(zip(t["category"], t["count"]))
    assert counts == {"correct": 2, "unnecessary_abstention": 1, "false_answer_on_na": 1, "reference_mismatch": 1,
                      "value_selection": 0, "rounding": 0, "unit_conversion": 1, "type_mismatch": 0,
                      "categorical_mismatch": 0}
    # points lost add up to the gap to a perfect score
    assert float(t["points_lost"].sum()) == pytest.approx(1 - float(v["score"].mean()), abs=1e-5)
    lost = dict(zip(t["category"], t["points_lost"]))
    assert lost["correct"] == 0
    assert lost["unit_conversion"] == pytest.approx(0.75 / 6, abs=1e-6)
    # official metric: an answer on a truth-blank question keeps the value credit, loses ref and NA
    assert lost["false_answer_on_na"] == pytest.approx(0.25 / 6, abs=1e-6)
    assert lost["unnecessary_abstention"] == pytest.approx(0.90 / 6, abs=1e-6)  # keeps the NA credit
    assert lost["reference_mismatch"] == pytest.approx(0.15 / 6, abs=1e-6)


def test_type_table_and_metrics() -> None:
    v = verdicts()
    t = analysis.type_table(v)
    assert t["question_type"].to_list() == ["numeric", "range", "text", "true_false", "na"]  # list: no questions
    row = t.filter(pl.col("question_type") == "numeric").row(0, named=True)
    assert row["n"] == 2 and row["correct"] == 1 and row["score"] == pytest.approx((1 + 0.25) / 2)
    m = analysis.categories_metrics(v)
    assert m["labelled"] is True and m["n"] == 6
    assert set(m["categories"]) == set(analysis.CATEGORIES) and sum(m["categories"].values()) == 6
    assert set(m["types"]) == set(analysis.QUESTION_TYPES)
    assert m["types"]["list"] == {"n": 0}
    assert m["types"]["range"] == {"n": 1, "correct": 0, "score": pytest.approx(0.1)}  # abstained: NA credit only
    assert m["types"]["true_false"]["score"] == pytest.approx(0.85)
    json.dumps(m)  # a valid DVC metrics file


def test_unknown_category_is_an_error() -> None:
    v = verdicts().with_columns(pl.lit("mystery").alias("error_category"))
    with pytest.raises(ValueError, match="mystery"):
        analysis.category_table(v)


# --- report --------------------------------------------------------------------------

def contexts() -> pl.DataFrame:
    rows = []
    for qid, docs in {"q2": ["z", "y", "b"], "q3": ["z", "y"], "q4": ["d"]}.items():
        for rank, doc in enumerate(docs):
            rows.append({"question_id": qid, "attempt": 0, "rank": rank, "node_id": f"{doc}:sec1:p{rank}",
                         "doc_id": doc, "score": 1.0 - rank / 10, "frequency": 2, "source": "dense", "page": 1,
                         "n_tokens": 50, "media": None, "text": f"text of {doc} " + "word " * 200})
    return pl.DataFrame(rows, schema=CONTEXT_SCHEMA)


def test_gold_in_context() -> None:
    g = analysis.gold_in_context(verdicts(), contexts())
    assert g == {"q2": 2, "q3": None, "q4": 0}  # q1/q5 have no context rows, q6 no gold refs


def test_report_lists_every_wrong_answer_with_context() -> None:
    v = verdicts()
    summary, _ = score_submission(
        pl.DataFrame({"id": ["x"], "answer_value": ["1"], "ref_id": ["a"]}),
        pl.DataFrame({"id": ["x"], "answer_value": ["1"], "ref_id": ["a"]}))
    md = analysis.build_report(summary, v, contexts(), max_blocks=1, max_chars=60, title="T")
    assert md.startswith("# T\n")
    wrong = md.split("## Wrong answers", 1)[1]
    for qid, cat in [("q2", "unit_conversion"), ("q3", "unnecessary_abstention"), ("q4", "reference_mismatch"),
                     ("q6", "false_answer_on_na")]:
        assert f"### {qid} — {cat}" in wrong
    assert "### q1 " not in wrong and "### q5 " not in wrong
    q2 = wrong.split("### q2", 1)[1].split("###", 1)[0]
    assert "`z:sec1:p0`" in q2  # first block shown ...
    assert "`b:sec1:p2`" in q2 and "★ gold doc" in q2  # ... and the gold block beyond max_blocks
    assert "`y:sec1:p1`" not in q2 and "1 more block(s) not shown" in q2
    assert "…" in q2 and "word " * 50 not in q2  # truncated
    assert "retrieval misses" in md and "1 of them had no gold document" in md  # q3
    assert "| q3 | range |" in md and "| miss |" in md
    assert "_No retrieved context for this question._" in wrong  # q6
    assert "Context, first attempt (3 blocks, 150 tokens):" in q2


def test_report_without_contexts_and_all_correct() -> None:
    labels = pl.DataFrame({"id": ["q1"], "question": ["a?"], "answer_value": ["1"], "ref_id": ["['a']"]})
    summary, table = score_submission(labels, labels)
    md = analysis.build_report(summary, table)
    assert "None: every question is correct." in md and "Context, first attempt" not in md


def test_report_escapes_table_cells() -> None:
    labels = pl.DataFrame({"id": ["q1"], "question": ["a?"], "answer_value": ["x"], "ref_id": ["['a']"]})
    sub = pl.DataFrame({"id": ["q1"], "answer_value": ["a|b"], "ref_id": ["['a']"]})
    summary, table = score_submission(labels, sub)
    md = analysis.build_report(summary, table)
    row = next(line for line in md.splitlines() if line.startswith("| q1 |"))
    assert "a\\|b" in row and row.count(" | ") == 9  # ten cells: the pipe did not split the row


# --- ensemble curve ----------------------------------------------------------------------

def curve_labels() -> pl.DataFrame:
    return pl.DataFrame({"id": ["q1", "q2", "q3"], "question": ["n?", "t?", "na?"],
                         "answer_value": ["10", "GPT-3", "is_blank"], "ref_id": ["['a']", "['b']", "is_blank"],
                         "answer_unit": ["W", "is_blank", "W"]})


def members() -> list[dict[str, Answer]]:
    def m(q1: str, q2: str, q3: str) -> dict[str, Answer]:
        out = {"q1": Answer("q1", q1, q1, "W", ["a"]), "q2": Answer("q2", q2, q2, "is_blank", ["b"])}
        out["q3"] = Answer("q3") if q3 == "is_blank" else Answer("q3", q3, q3, "W", ["a"])
        return out

    return [m("12", "GPT-3", "is_blank"), m("10", "T5", "5"), m("10", "GPT-3", "is_blank")]


def test_ensemble_curve_revotes_members() -> None:
    curve = analysis.ensemble_curve(members(), curve_labels())
    assert curve["members"].to_list() == [1, 2, 3]
    # k=1: 0.25 + 1 + 1; k=2: ties go to member 0, blank ignored on q3 -> 0.25 + 1 + 0.75 (an answer on a
    # truth-blank question keeps the value credit officially); k=3: 1 + 1 + 0.75
    assert curve["score"].to_list() == pytest.approx([2.25 / 3, 2 / 3, 2.75 / 3], abs=1e-6)


def test_member_table() -> None:
    t = analysis.member_table(members(), [0, 1, 2], curve_labels())
    assert t["member"].to_list() == [0, 1, 2] and t["seed"].to_list() == [0, 1, 2]
    assert t["score"].to_list() == pytest.approx([2.25 / 3, 2 / 3, 1.0], abs=1e-6)  # member 1: 1 + 0.25 + 0.75


def test_render_pngs(tmp_path: Path) -> None:
    tables = analysis.plot_tables(verdicts())
    tables["ensemble_size"] = analysis.ensemble_curve(members(), curve_labels())
    paths = analysis.render_pngs(tables, tmp_path / "full")
    empty = analysis.render_pngs({}, tmp_path / "empty")
    for p in paths + empty:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in paths) == ["ensemble_size.png", "error_categories.png", "score_by_type.png"]
    assert "correct" not in tables["error_categories"]["category"].to_list()


# --- the score stage ----------------------------------------------------------------------

def _stage_project(tmp: Path, labelled: bool = True) -> Path:
    lab = curve_labels()
    if not labelled:
        lab = lab.with_columns(pl.lit("").alias("answer_value"), pl.lit("").alias("ref_id"))
    lab.write_csv(tmp / "q.csv")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"]["questions"] = "q.csv"
    params["ensemble"] = {"n": 3, "seed": 5}
    (tmp / "params.yaml").write_text(yaml.safe_dump(params))
    (tmp / "artifacts" / "answers").mkdir(parents=True)
    for i, mem in enumerate(members()):
        rows = [{"question_id": a.question_id, "answer": a.answer, "answer_value": a.answer_value,
                 "answer_unit": a.answer_unit, "ref_id": a.ref_id, "explanation": a.explanation,
                 "supporting_materials": a.supporting_materials, "is_blank": a.is_blank, "seed": 5 + i}
                for a in mem.values()]
        pl.DataFrame(rows, schema_overrides={"ref_id": pl.List(pl.String)}).write_parquet(
            tmp / "artifacts" / "answers" / f"run_{i}.parquet")
    (tmp / "artifacts" / "retrieve").mkdir()
    ctx = contexts().with_columns(pl.col("question_id").replace({"q2": "q1", "q3": "q2", "q4": "q3"}))
    ctx.write_parquet(tmp / "artifacts" / "retrieve" / "contexts.parquet")
    (tmp / "submissions").mkdir()
    pl.DataFrame({"id": ["q1", "q2", "q3"], "answer_value": ["10", "GPT-3", "5"],
                  "ref_id": ["['a']", "['b']", "['a']"]}).write_csv(tmp / "submissions" / "submission.csv")
    return tmp


def _run_score(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "stages.score"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _declared_outputs() -> set[str]:
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["score"]
    out = set()
    for kind in ("outs", "metrics", "plots"):
        for item in stage.get(kind, []):
            out.add(item if isinstance(item, str) else next(iter(item)))
    return out


def _written(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in (root / "metrics").rglob("*") if p.is_file()}


def test_score_stage_writes_the_analysis(tmp_path: Path) -> None:
    proj = _stage_project(tmp_path)
    r = _run_score(proj)
    assert r.returncode == 0, r.stderr
    assert _written(proj) == _declared_outputs()  # dvc.yaml declares exactly what the stage writes
    cats = json.loads((proj / "metrics" / "categories.json").read_text())
    assert cats["categories"]["correct"] == 2 and cats["categories"]["false_answer_on_na"] == 1
    assert cats["types"]["numeric"] == {"n": 1, "correct": 1, "score": 1.0}
    curve = pl.read_csv(proj / "metrics" / "plots" / "ensemble_size.csv")
    assert curve["members"].to_list() == [1, 2, 3]
    assert curve["score"].to_list() == pytest.approx([2.25 / 3, 2 / 3, 2.75 / 3], abs=1e-5)
    score = json.loads((proj / "metrics" / "score.json").read_text())
    assert curve["score"][-1] == pytest.approx(score["score"], abs=1e-6)  # k = n is the submission
    mem = pl.read_csv(proj / "metrics" / "plots" / "member_scores.csv")
    assert mem["seed"].to_list() == [5, 6, 7]
    report = (proj / "metrics" / "report.md").read_text()
    assert "### q3 — false_answer_on_na" in report and "`d:sec1:p0`" in report
    errors = pl.read_csv(proj / "metrics" / "plots" / "error_categories.csv")
    assert errors["category"].to_list() == list(analysis.ERROR_CATEGORIES)


def test_score_stage_unlabelled_writes_empty_outputs(tmp_path: Path) -> None:
    proj = _stage_project(tmp_path, labelled=False)
    r = _run_score(proj)
    assert r.returncode == 0, r.stderr
    assert _written(proj) == _declared_outputs()
    assert json.loads((proj / "metrics" / "categories.json").read_text()) == {"labelled": False, "n": 3}
    assert pl.read_csv(proj / "metrics" / "plots" / "ensemble_size.csv").height == 0
    assert "no gold answers" in (proj / "metrics" / "report.md").read_text()


def test_dvc_plots_point_at_score_outputs() -> None:
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    declared = _declared_outputs()
    schemas = {"error_categories": analysis.CATEGORY_SCHEMA, "score_by_type": analysis.TYPE_SCHEMA,
               "ensemble_size": analysis.CURVE_SCHEMA, "member_scores": analysis.MEMBER_SCHEMA}
    templates = {p.stem for p in (ROOT / ".dvc" / "plots").glob("*.json")}
    builtin = {"simple", "linear", "scatter", "smooth", "bar_horizontal", "bar_horizontal_sorted", "confusion"}
    assert len(dvc["plots"]) == 4
    for entry in dvc["plots"]:
        ((name, spec),) = entry.items()
        for path, cols in spec["y"].items():
            assert path in declared, name
            columns = set(schemas[Path(path).stem])
            for col in ([cols] if isinstance(cols, str) else cols) + [spec["x"]]:
                assert col in columns, (name, col)
        assert spec["template"] in templates | builtin


def test_score_cli_report(tmp_path: Path) -> None:
    proj = _stage_project(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "stages.score", "--labels", "q.csv", "--submission",
                        "submissions/submission.csv", "--report", "r.md", "--contexts",
                        "artifacts/retrieve/contexts.parquet"], cwd=proj, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n"] == 3
    md = (proj / "r.md").read_text()
    assert "### q3 — false_answer_on_na" in md and "`d:sec1:p0`" in md
    assert not (proj / "metrics").exists()  # the CLI mode writes only what it is asked to
