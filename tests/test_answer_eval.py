"""The answer benchmark's core: overrides, scoring of voted members, per-type table, paired comparison."""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest

from bench.lib.answer_eval import (
    apply_overrides,
    changed_questions,
    compare_verdicts,
    run_config,
    sample_order,
    type_table,
    with_unchanged,
)
from stages.core.common.dataio import read_questions
from stages.core.common.params import ParamError
from stages.core.llm.protocol import Completion
from stages.core.retrieve.search import CONTEXT_SCHEMA

ROOT = Path(__file__).resolve().parents[1]

LABELS = """id,question,answer,answer_value,answer_unit,ref_id,ref_url,supporting_materials,explanation
d1,How much energy did GShard use?,24 MWh,24,MWh,['patterson2021'],['u'],x,Quote
d2,True or False: GShard used more than 100 MWh.,False,0,is_blank,['patterson2021'],['u'],x,Quote
d3,What did Iceland's PUE average?,x,is_blank,PUE,is_blank,is_blank,is_blank,is_blank
"""


@dataclass
class KeyedLLM:
    """Answers by question text; seed 1 answers d1 wrongly (a unit-test stand-in)."""

    calls: list[int] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        self.calls.append(seed)
        body = messages[-1]["content"]
        if "GShard use?" in body:
            value = "24" if seed != 1 else "4.3"
            reply = {"explanation": "used 24 MWh", "answer": value, "answer_value": value, "ref_id": ["patterson2021"]}
        elif "True or False" in body:
            reply = {"explanation": "x", "answer": "False", "answer_value": "0", "ref_id": ["patterson2021"]}
        else:
            reply = {"explanation": "x", "answer": "1.1", "answer_value": "1.1", "ref_id": ["patterson2021"]}
        return Completion(text=json.dumps(reply), prompt_tokens=100, completion_tokens=10, latency_s=2.0)


def _params(n: int) -> dict:
    params = yaml_params()
    params["ensemble"]["n"] = n
    params["answer"]["reader"] = "free"  # the fake model below writes the free reader's replies
    return params


def yaml_params() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "params.yaml").read_text())


def _contexts() -> pl.DataFrame:
    rows = [{"question_id": q, "attempt": 0, "rank": 0, "node_id": "patterson2021:sec1:p1", "doc_id": "patterson2021",
             "score": 1.0, "frequency": 1, "source": "bm25", "page": 1, "n_tokens": 20, "media": None,
             "text": "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e."} for q in ("d1", "d2", "d3")]
    return pl.DataFrame(rows, schema=CONTEXT_SCHEMA)


def test_run_config_votes_members_and_scores_officially(tmp_path: Path) -> None:
    labels = tmp_path / "dev.csv"
    labels.write_text(LABELS)
    llm = KeyedLLM()
    params = _params(3)
    res = run_config(llm, params, labels, _contexts(), ROOT / "data" / "wattbot" / "metadata.csv")
    # questions outer, members inner; d1: members 0 and 1 disagree (24 vs 4.3), so member 2 is asked; on d2 and
    # d3 they agree: member 2 is not asked (the vote is decided)
    assert llm.calls == [0, 1, 2, 0, 1, 0, 1]
    # d1: members 24, 4.3, 24 -> 24 wins; d2 right; d3 answered on a blank truth -> 0.75 officially
    by_id = dict(zip(res.verdicts["id"].to_list(), res.verdicts["score"].to_list(), strict=True))
    assert by_id == pytest.approx({"d1": 1.0, "d2": 1.0, "d3": 0.75})
    assert res.summary["score"] == pytest.approx(2.75 / 3, abs=1e-4)
    assert res.summary["strict"]["score"] == pytest.approx(2 / 3, abs=1e-4)
    assert res.summary["member_scores"][:2] == pytest.approx([2.75 / 3, (0.25 + 1 + 0.75) / 3], abs=1e-4)
    assert res.summary["member_scores"][2] is None  # member 2 answered only d1: no score of its own
    assert res.summary["cost"]["skipped_answers"] == 2 and res.summary["cost"]["calls"] == 7
    assert res.summary["cost"]["prompt_tokens_per_question"] == pytest.approx(700 / 3, abs=0.1)
    assert res.summary["cost"]["llm_s_per_question"] == pytest.approx(14 / 3, abs=0.01)
    assert re.fullmatch(r"\['patterson2021'\]", res.submission["ref_id"][0])


def test_type_table_has_every_type_and_all() -> None:
    verdicts = pl.DataFrame({"question_type": ["numeric", "numeric", "na"], "score": [1.0, 0.0, 0.75],
                             "strict_score": [1.0, 0.0, 0.0], "symmetric_score": [1.0, 0.0, 0.0],
                             "value": [1.0, 0.0, 1.0], "ref": [1.0, 0.0, 0.0], "na": [1.0, 1.0, 0.0]})
    t = type_table(verdicts)
    assert t["question_type"].to_list() == ["na", "numeric", "all"]
    assert t.filter(pl.col("question_type") == "numeric")["score"][0] == pytest.approx(0.5)
    assert t.filter(pl.col("question_type") == "all")["n"][0] == 3


def test_compare_verdicts_paired_delta_and_per_type() -> None:
    a = pl.DataFrame({"id": ["x", "y", "z", "w"], "question_type": ["numeric", "numeric", "text", "text"],
                      "score": [0.0, 1.0, 0.25, 1.0]})
    b = pl.DataFrame({"id": ["w", "z", "y", "x"], "question_type": ["text", "text", "numeric", "numeric"],
                      "score": [1.0, 1.0, 1.0, 1.0]})
    d = compare_verdicts(a, b, n_boot=2000)
    assert d.delta == pytest.approx((1.0 + 0.75) / 4)
    assert d.low <= d.delta <= d.high
    assert d.per_type["numeric"] == (2, pytest.approx(0.5))
    assert d.per_type["text"] == (2, pytest.approx(0.375))
    sub = compare_verdicts(a, b.head(3), n_boot=2000)  # a shorter run: compared on the shared questions
    assert sub.n == 3 and sub.delta == pytest.approx((0.75 + 0.0 + 0.0) / 3)
    other = pl.DataFrame({"id": ["x", "q"], "question_type": ["numeric", "text"], "score": [1.0, 1.0]})
    with pytest.raises(ValueError, match="different questions"):
        compare_verdicts(a, other)


def test_runs_table_scores_each_run_against_the_first() -> None:
    from bench.lib.answer_eval import runs_table, table_markdown

    a = pl.DataFrame({"id": ["x", "y", "z", "w"], "question_type": ["numeric", "numeric", "text", "text"],
                      "score": [0.0, 1.0, 0.25, 1.0]}).with_columns(  # the other verdict columns
        [pl.lit(0.0).alias(c) for c in ("strict_score", "symmetric_score", "value", "ref", "na")])
    b = a.with_columns(pl.lit(1.0).alias("score"))
    rows = runs_table({"base": (a, {"config": {"n": 3}, "cost": {"llm_s_per_question": 24.2}}),
                       "better": (b.head(3), {"config": {"n": 1}, "cost": {}})})
    assert [r["name"] for r in rows] == ["base", "better"] and "delta" not in rows[0]
    assert rows[0]["official"] == pytest.approx(0.5625) and rows[0]["types"] == {"numeric": 0.5, "text": 0.625}
    assert rows[1]["questions"] == 3 and rows[1]["delta"][0] == pytest.approx((1 + 0 + 0.75) / 3, abs=1e-4)
    lines = table_markdown(rows)
    assert lines[0].startswith("| configuration | n | questions | official") and len(lines) == 4
    assert lines[0].endswith("| LLM s/q | eval. prompt tok/q |") and "quote" not in lines[0]  # no labels: no kinds
    assert "| base | 3 | 4 | 0.562 | – | 0.500 |" in lines[2] and lines[2].endswith("| 24.2 |  |")
    assert "+0.583 [" in lines[3] and lines[3].endswith("|  |  |")
    # with labels: a column per evidence kind (read from the explanation column)
    labels = pl.DataFrame({"id": ["x", "y", "z", "w"], "answer_value": ["1", "2", "3", "4"],
                           "explanation": ["Table 2", "Quote", "Quote", "Math: 1 + 1 = 2"],
                           "supporting_materials": ["", "", "", ""]})
    rows = runs_table({"base": (a, {"config": {"n": 1}, "cost": {"prompt_evaluated_per_question": 650.5}})}, labels)
    assert rows[0]["kinds"] == {"quote": 0.625, "table": 0.0, "arithmetic": 1.0}
    lines = table_markdown(rows)
    assert "| quote | table | arithmetic | LLM s/q |" in lines[0] and lines[2].endswith("| 0.625 | 0.000 | 1.000 |  | 650.5 |")


def test_apply_overrides_parses_yaml_values_and_names_bad_keys() -> None:
    base = {"answer": {"temperature": 0.7}, "ensemble": {"n": 3}}
    out = apply_overrides(base, ["answer.temperature=0", "ensemble.n=1"])
    assert out["answer"]["temperature"] == 0 and out["ensemble"]["n"] == 1
    assert base["answer"]["temperature"] == 0.7  # the input is not changed
    with pytest.raises(ParamError, match="no section 'nope'"):
        apply_overrides(base, ["nope.x=1"])
    with pytest.raises(ParamError, match="section.key=value"):
        apply_overrides(base, ["answer.temperature"])


def test_limit_answers_a_fixed_random_prefix(tmp_path: Path) -> None:
    labels = tmp_path / "dev.csv"
    labels.write_text(LABELS)
    order = sample_order(["d1", "d2", "d3"])
    assert sorted(order) == ["d1", "d2", "d3"] and sample_order(["d3", "d1", "d2"]) == order
    res = run_config(KeyedLLM(), _params(1), labels, _contexts(), ROOT / "data" / "wattbot" / "metadata.csv",
                     limit=2)
    assert res.verdicts["id"].to_list() == order[:2]
    assert res.summary["n"] == 2


def test_changed_by_answers_only_the_questions_whose_requests_differ(tmp_path: Path) -> None:
    labels = tmp_path / "dev.csv"
    labels.write_text(LABELS.replace("How much energy did GShard use?", "By how many MWh did GShard's energy fall?"))
    meta = ROOT / "data" / "wattbot" / "metadata.csv"
    base = yaml_params()
    base["ensemble"]["n"] = 1
    inferred = apply_overrides(base, ["answer.infer_unit=always"])
    # only d3's unit is inferred otherwise than the file gives it (a name, not PUE), so only its requests change;
    # equal params change none
    assert changed_questions(base, inferred, read_questions(labels), _contexts(), meta) == ["d3"]
    assert changed_questions(base, copy.deepcopy(base), read_questions(labels), _contexts(), meta) == []
    # a retrieval change: the same params over other contexts (d3's unit reworded)
    other = _contexts().with_columns(pl.when(pl.col("question_id") == "d3").then(pl.lit("Iceland's PUE was 1.1."))
                                     .otherwise(pl.col("text")).alias("text"))
    assert changed_questions(base, base, read_questions(labels), _contexts(), meta, other) == ["d3"]
    res = run_config(KeyedLLM(), base, labels, _contexts(), meta, only_ids=["d1"])
    assert res.verdicts["id"].to_list() == ["d1"] and res.summary["n"] == 1


def test_a_changed_by_run_stands_for_the_whole_set_with_the_full_runs_other_rows() -> None:
    full = pl.DataFrame({"id": ["d1", "d2", "d3", "d4"], "question_type": ["numeric"] * 4,
                         "score": [1.0, 0.25, 1.0, 0.0]})
    subset = pl.DataFrame({"id": ["d2"], "question_type": ["numeric"], "score": [1.0]})
    filled = with_unchanged(subset, full)
    assert filled["id"].to_list() == ["d1", "d2", "d3", "d4"] and filled["score"].to_list() == [1.0, 1.0, 1.0, 0.0]
    d = compare_verdicts(full, filled)
    assert d.n == 4 and d.delta == pytest.approx(0.75 / 4)  # the subset's one change, over the whole set


def test_questions_shown_as_worked_examples_are_not_scored(tmp_path: Path) -> None:
    labels = tmp_path / "dev.csv"
    labels.write_text(LABELS)
    params = _params(1)
    params["answer"]["demos"] = ["d2"]
    params["answer"]["demo_file"] = str(labels)
    res = run_config(KeyedLLM(), params, labels, _contexts(), ROOT / "data" / "wattbot" / "metadata.csv")
    assert sorted(res.verdicts["id"].to_list()) == ["d1", "d3"]
    assert res.summary["held_out_demos"] == ["d2"] and res.summary["n"] == 2
    # demonstrations from another file hold nothing back
    params["answer"]["demo_file"] = str(ROOT / "data" / "wattbot" / "dev_QA.csv")
    res = run_config(KeyedLLM(), params, labels, _contexts(), ROOT / "data" / "wattbot" / "metadata.csv")
    assert res.summary["n"] == 3 and res.summary["held_out_demos"] == []


def test_plot_by_type_writes_a_png(tmp_path: Path) -> None:
    from bench.lib.answer_eval import plot_by_type

    verdicts = pl.DataFrame({"question_type": ["numeric", "na"], "score": [0.5, 0.75], "strict_score": [0.5, 0.0],
                             "symmetric_score": [0.5, 0.0], "value": [0.5, 1.0], "ref": [0.5, 0.0], "na": [1.0, 0.0]})
    path = plot_by_type(type_table(verdicts), "t", tmp_path / "by_type.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_true_false_confusion_counts_gold_by_prediction():
    from bench.lib.answer_eval import true_false_confusion

    v = pl.DataFrame({"question_type": ["true_false"] * 4 + ["numeric"],
                      "gold_answer_value": ["1", "0", "0", "0", "5"],
                      "pred_answer_value": ["1", "1", "0", "is_blank", "5"]})
    assert true_false_confusion(v) == {"gold_false_pred_blank": 1, "gold_false_pred_false": 1,
                                       "gold_false_pred_true": 1, "gold_true_pred_true": 1}


def test_ensemble_curve_votes_the_first_k_members(tmp_path: Path) -> None:
    from bench.lib.answer_eval import ensemble_curve, plot_curve
    from stages.core.common.dataio import read_questions

    labels = tmp_path / "dev.csv"
    labels.write_text(LABELS)
    res = run_config(KeyedLLM(), _params(3), labels, _contexts(), ROOT / "data" / "wattbot" / "metadata.csv")
    pts = ensemble_curve(read_questions(labels), res.members, {}, n_boot=200)
    assert [p["n"] for p in pts] == [1, 2, 3]
    # member 0 alone is right on d1; members 0+1 tie 24 vs 4.3 and the first wins; 3 members vote 24
    assert [p["score"] for p in pts] == pytest.approx([2.75 / 3] * 3, abs=1e-4)
    worse = ensemble_curve(read_questions(labels), [res.members[1]], {}, n_boot=200)
    assert worse[0]["score"] == pytest.approx(2.0 / 3, abs=1e-4)  # member 1 alone: d1 wrong (0.25)
    assert all(p["low"] <= p["score"] <= p["high"] for p in pts + worse)
    assert plot_curve({"dev": pts}, "t", tmp_path / "c.png").stat().st_size > 1000


def test_same_work_speed_pairs_only_calls_with_equal_work_and_run_cost_counts_per_question() -> None:
    from bench.lib.answer_eval import run_cost, same_work_speed

    def rows(lat: list[float], prompt: list[int]) -> pl.DataFrame:
        return pl.DataFrame({"question_id": ["a", "b", "c"], "latency_s": lat, "prompt_tokens": prompt,
                             "prompt_evaluated": prompt, "completion_tokens": [5, 5, 5]})

    old = rows([10.0, 20.0, 30.0], [100, 200, 300])
    new = rows([12.0, 0.0, 99.0], [100, 200, 301])  # b shared (no time), c other work: only a pairs
    s = same_work_speed(old, new)
    assert s["calls"] == 1 and s["b_over_a"] == pytest.approx(1.2)
    cost = run_cost([old, new.with_columns(pl.lit(0.0).alias("latency_s"))], ["a", "b"])
    assert cost == {"questions": 2, "llm_s_per_question": pytest.approx(15.0),
                    "prompt_evaluated_per_question": pytest.approx(300.0),
                    "completion_tokens_per_question": pytest.approx(10.0)}


def test_null_perturbation_swaps_the_last_two_units_of_each_attempt_only() -> None:
    from bench.perturb_contexts import swap_last_two

    ctx = pl.DataFrame({"question_id": ["q1"] * 3 + ["q1"] * 2 + ["q2"],
                        "attempt": [0, 0, 0, 1, 1, 0], "rank": [0, 1, 2, 0, 1, 0],
                        "node_id": ["a", "b", "c", "a", "d", "z"]})
    out = swap_last_two(ctx)  # sorted by question, attempt and the new rank
    assert out.select("question_id", "attempt", "rank", "node_id").rows() == [
        ("q1", 0, 0, "a"), ("q1", 0, 1, "c"), ("q1", 0, 2, "b"),
        ("q1", 1, 0, "d"), ("q1", 1, 1, "a"),
        ("q2", 0, 0, "z")]


def test_merge_writes_a_changed_by_run_and_its_base_as_one_whole_set_run(tmp_path: Path, monkeypatch) -> None:
    import bench.answer_eval as cli

    monkeypatch.setattr(cli, "OUT", tmp_path)
    cols = {"question_type": ["numeric"] * 3}
    for name, ids, scores, changed_by in (("base", ["d1", "d2", "d3"], [1.0, 0.25, 0.0], None),
                                          ("variant", ["d2"], [1.0], ["tree.x=1"])):
        folder = tmp_path / name / "dev"
        folder.mkdir(parents=True)
        pl.DataFrame({"id": ids, "question_type": cols["question_type"][: len(ids)], "score": scores,
                      **{c: scores for c in ("strict_score", "symmetric_score", "value", "ref", "na")}}).write_csv(
            folder / "verdicts.csv")
        (folder / "summary.json").write_text(json.dumps({"config": {"changed_by": changed_by, "n": 1}}))
    assert cli.main(["merge", "merged", "base", "variant", "--sets", "dev"]) == 0
    merged = pl.read_csv(tmp_path / "merged" / "dev" / "verdicts.csv")
    assert merged["id"].to_list() == ["d1", "d2", "d3"] and merged["score"].to_list() == [1.0, 1.0, 0.0]
    summary = json.loads((tmp_path / "merged" / "dev" / "summary.json").read_text())
    assert summary["score"] == pytest.approx(2.0 / 3) and summary["config"]["merged"]["changed"] == "variant"
    # a changed-by run is not a base: its rows would stand for the whole set
    assert cli.main(["merge", "again", "variant", "base", "--sets", "dev"]) == 1


def test_changed_by_a_tree_override_needs_the_saved_contexts_of_params_yaml(tmp_path: Path, monkeypatch) -> None:
    """The index on disk is the variant's after `dvc repro index`: base contexts retrieved from it would be the
    variant's, saved under params.yaml's key. A retrieve-only override retrieves both from the same index."""
    import bench.answer_eval as cli

    monkeypatch.setattr(cli, "OUT", tmp_path)
    questions = tmp_path / "dev_QA.csv"
    questions.write_text("id,question\nd1,How much?\n")
    base = {"tree": {"x": False}, "retrieve": {}, "answer": {}}
    with pytest.raises(SystemExit, match="no saved contexts of params.yaml for dev_QA.csv"):
        cli._base_contexts_saved("dev", questions, base, ["tree.x=true"], given=False)
    cli._base_contexts_saved("dev", questions, base, ["retrieve.k=3"], given=False)  # same index: fine
    cli._base_contexts_saved("dev", questions, base, ["tree.x=true"], given=True)  # contexts given: fine
    (tmp_path / "contexts").mkdir()
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "contexts" / f"dev-{cli.contexts_key(questions, base)}.parquet")
    cli._base_contexts_saved("dev", questions, base, ["tree.x=true"], given=False)  # saved: fine
