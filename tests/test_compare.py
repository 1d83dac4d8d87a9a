"""Tests of `stages.compare`: paired bootstrap, Welch's t-test, flipped questions, resolving sides."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from stages.core.common.dataio import InputError
from stages.core.score.verdicts import score_submission
from stages.core.tools.compare import (
    Run,
    compare,
    flips,
    format_comparison,
    load_run,
    load_side,
    paired_bootstrap,
    resolve_rev,
    welch_test,
)

ROOT = Path(__file__).resolve().parents[1]

LABELS = pl.DataFrame({
    "id": ["q1", "q2", "q3", "q4"],
    "question": ["a?", "b?", "c?", "d?"],
    "answer_value": ["10", "GPT-3", "[1,2]", "is_blank"],
    "ref_id": ["['a']", "['b']", "['c']", "is_blank"],
})


def sub(*values: str, refs: tuple[str, ...] = ("['a']", "['b']", "['c']", "is_blank")) -> pl.DataFrame:
    return pl.DataFrame({"id": ["q1", "q2", "q3", "q4"], "answer_value": list(values), "ref_id": list(refs)})


GOLD = sub("10", "GPT-3", "[1,2]", "is_blank")
A = sub("10", "T5", "[1,2]", "7")  # q2 wrong, q4 false answer
B = sub("10", "GPT-3", "is_blank", "is_blank")  # q2 fixed, q4 fixed, q3 broken


# --- bootstrap -------------------------------------------------------------------------

def test_bootstrap_identical_sides() -> None:
    x = np.array([1.0, 0.25, 0.0, 1.0])
    bt = paired_bootstrap(x, x, n_boot=500)
    assert (bt.delta, bt.low, bt.high, bt.p_not_better) == (0.0, 0.0, 0.0, 1.0)


def test_bootstrap_constant_difference_and_seed() -> None:
    a = np.array([0.0, 0.25, 0.5, 0.75])
    bt = paired_bootstrap(a, a + 0.1, n_boot=300)
    assert bt.delta == pytest.approx(0.1) and bt.low == pytest.approx(0.1) and bt.high == pytest.approx(0.1)
    assert bt.p_not_better == 0.0


def test_bootstrap_interval_is_reproducible_and_sensible() -> None:
    rng = np.random.default_rng(1)
    a = rng.choice([0.0, 0.25, 1.0], size=200)
    b = np.where(rng.random(200) < 0.2, 1.0, a)  # B fixes ~20% of questions
    one, two = paired_bootstrap(a, b, seed=3), paired_bootstrap(a, b, seed=3)
    assert one == two  # a fixed seed prints the same interval every time
    assert paired_bootstrap(a, b, seed=4) != one
    assert one.low < one.delta < one.high and one.low > 0
    # the percentile interval is close to the normal one for a mean of 200 values
    d = b - a
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert one.low == pytest.approx(d.mean() - 1.96 * se, abs=0.01)
    assert one.high == pytest.approx(d.mean() + 1.96 * se, abs=0.01)
    narrow = paired_bootstrap(a, b, seed=3, ci=0.5)
    assert one.low < narrow.low < narrow.high < one.high


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="equal"):
        paired_bootstrap(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="equal"):
        paired_bootstrap(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="ci"):
        paired_bootstrap(np.zeros(3), np.zeros(3), ci=1.5)


# --- Welch ---------------------------------------------------------------------------------

def test_welch_matches_the_formula() -> None:
    a, b = [0.60, 0.62, 0.58, 0.61], [0.70, 0.66, 0.72]
    w = welch_test(a, b, "runs")
    assert w is not None and w.source == "runs"
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    t = (np.mean(b) - np.mean(a)) / math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    from scipy import stats

    assert w.t == pytest.approx(t)
    assert w.p == pytest.approx(2 * stats.t.sf(abs(t), dof))
    assert w.t > 0  # positive: B better


def test_welch_needs_two_runs_per_side() -> None:
    assert welch_test([0.5], [0.6, 0.7], "runs") is None
    assert welch_test([], [], "members") is None


# --- flips and compare ---------------------------------------------------------------------

def test_flips() -> None:
    _, ta = score_submission(LABELS, A)
    _, tb = score_submission(LABELS, B)
    f = flips(ta, tb)
    got = {r["id"]: (r["change"], round(r["delta"], 3)) for r in f.iter_rows(named=True)}
    # official metric: A's answer "7" on the truth-blank q4 keeps value and ref (both blank) and loses only NA
    # (0.9 -> 1.0); B's abstention on q3 keeps ref and NA (1.0 -> 0.25)
    assert got == {"q2": ("fixed", 0.75), "q4": ("fixed", 0.1), "q3": ("broken", -0.75)}
    assert f["id"].to_list() == ["q2", "q3", "q4"]  # biggest moves first, ties by id
    assert flips(ta, ta).height == 0


def test_partial_credit_change_is_not_a_flip() -> None:
    a = sub("10", "GPT-3", "[1,2]", "is_blank", refs=("['a','x']", "['b']", "['c']", "is_blank"))
    _, ta = score_submission(LABELS, a)
    _, tb = score_submission(LABELS, sub("10", "GPT-3", "[1,2]", "is_blank",
                                         refs=("['x']", "['b']", "['c']", "is_blank")))
    f = flips(ta, tb)
    assert f["change"].to_list() == ["changed"] and f["delta"][0] == pytest.approx(-0.075)


def test_compare_single_runs_without_members() -> None:
    c = compare(LABELS, [Run("a", A)], [Run("b", B)], n_boot=200)
    sa, sb = score_submission(LABELS, A)[0]["score"], score_submission(LABELS, B)[0]["score"]
    assert c.bootstrap.delta == pytest.approx(sb - sa)
    assert c.welch is None and any("no Welch" in n for n in c.notes)
    text = format_comparison(c)
    assert "Δ (B − A) = +" in text and "B fixes 2, breaks 1" in text
    assert "q3" in text and "broken" in text


def test_compare_uses_member_scores_for_welch() -> None:
    c = compare(LABELS, [Run("a", A, [0.5, 0.55, 0.52])], [Run("b", B, [0.6, 0.62, 0.66])], n_boot=200)
    assert c.welch is not None and c.welch.source == "members" and c.welch.t > 0
    assert "ensemble members scored alone, 3 vs 3" in format_comparison(c)


def test_compare_same_members_has_no_welch() -> None:
    c = compare(LABELS, [Run("a", A, [0.5, 0.6])], [Run("b", B, [0.6, 0.5])], n_boot=200)
    assert c.welch is None and any("members score the same" in n for n in c.notes)


def test_compare_several_runs_per_side() -> None:
    c = compare(LABELS, [Run("a1", A), Run("a2", sub("10", "T5", "[1,2]", "is_blank"))],
                [Run("b1", B), Run("b2", GOLD)], n_boot=200)
    assert c.welch is not None and c.welch.source == "runs" and len(c.welch.a) == 2
    per_q_a = (score_submission(LABELS, A)[1]["score"].to_numpy()
               + score_submission(LABELS, sub("10", "T5", "[1,2]", "is_blank"))[1]["score"].to_numpy()) / 2
    per_q_b = (score_submission(LABELS, B)[1]["score"].to_numpy() + 1.0) / 2
    assert c.bootstrap.delta == pytest.approx(float((per_q_b - per_q_a).mean()))


# --- resolving sides ---------------------------------------------------------------------------

def test_load_run_csv_and_workspace(tmp_path: Path) -> None:
    A.write_csv(tmp_path / "a.csv")
    run = load_run(str(tmp_path / "a.csv"))
    assert run.submission["answer_value"].to_list() == A["answer_value"].to_list() and run.member_scores == []
    (tmp_path / "submissions").mkdir()
    B.write_csv(tmp_path / "submissions" / "submission.csv")
    (tmp_path / "metrics" / "plots").mkdir(parents=True)
    pl.DataFrame({"member": [0, 1], "score": [0.5, 0.6]}).write_csv(tmp_path / "metrics/plots/member_scores.csv")
    ws = load_run("workspace", tmp_path)
    assert ws.member_scores == [0.5, 0.6]
    assert len(load_side(f"{tmp_path / 'a.csv'},workspace", tmp_path)) == 2


def _git(cwd: Path, *args: str) -> str:
    # the machine's git config (commit.gpgsign, hooks, init templates) must not reach the test repo
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_experiment_names_and_revisions(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "submissions").mkdir()
    A.write_csv(tmp_path / "submissions" / "submission.csv")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "a")
    first = _git(tmp_path, "rev-parse", "HEAD").strip()
    B.write_csv(tmp_path / "submissions" / "submission.csv")
    _git(tmp_path, "commit", "-qam", "b")
    # DVC keeps an experiment as refs/exps/<xx>/<baseline sha>/<name>
    _git(tmp_path, "update-ref", f"refs/exps/{first[:2]}/{first[2:]}/exp-a", first)
    assert resolve_rev("exp-a", tmp_path) == f"refs/exps/{first[:2]}/{first[2:]}/exp-a"
    assert resolve_rev("HEAD", tmp_path) == "HEAD"
    exp = load_run("exp-a", tmp_path)
    assert exp.submission["answer_value"].to_list() == A["answer_value"].to_list()
    head = load_run("HEAD", tmp_path)
    assert head.submission["answer_value"].to_list() == B["answer_value"].to_list()
    with pytest.raises(InputError, match="not a file, an experiment"):
        resolve_rev("exp-zz", tmp_path)


# --- CLI -------------------------------------------------------------------------------------

def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "stages.compare", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)  # a hang guard: cold imports took >120 s under load


def test_cli_json_and_errors(tmp_path: Path) -> None:
    LABELS.write_csv(tmp_path / "labels.csv")
    A.write_csv(tmp_path / "a.csv")
    B.write_csv(tmp_path / "b.csv")
    r = _cli(tmp_path, "a.csv", "b.csv", "--labels", "labels.csv", "--json", "--n-boot", "300")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["n"] == 4 and out["welch"] is None
    assert {f["id"]: f["change"] for f in out["flipped"]} == {"q2": "fixed", "q3": "broken", "q4": "fixed"}
    again = _cli(tmp_path, "a.csv", "b.csv", "--labels", "labels.csv", "--json", "--n-boot", "300")
    assert json.loads(again.stdout)["bootstrap"] == out["bootstrap"]
    bad = _cli(tmp_path, "a.csv", "nope", "--labels", "labels.csv")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "nope: not a file, an experiment" in bad.stderr.strip().splitlines()[-1]
    pl.DataFrame({"answer_value": ["1"]}).write_csv(tmp_path / "noid.csv")
    bad = _cli(tmp_path, "a.csv", "noid.csv", "--labels", "labels.csv")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "id" in bad.stderr
