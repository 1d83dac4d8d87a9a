"""Bad input to a stage ends in one clear line naming what is wrong (no traceback)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
STAGE_TIMEOUT_S = 900


def run_stage(tmp: Path, stage: str, params_patch: dict, questions: str) -> subprocess.CompletedProcess:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for section, values in params_patch.items():
        params[section].update(values)
    (tmp / "q.csv").write_text(questions)
    params["data"]["questions"] = str(tmp / "q.csv")
    params["data"]["metadata"] = str(ROOT / "data/wattbot/metadata.csv")
    (tmp / "params.yaml").write_text(yaml.safe_dump(params))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TREERAG_CACHE_DIR": str(tmp / "cache")}
    # the timeout only guards against a hang: a stage that fails fast still needs a cold interpreter
    # to import polars, lance and openai, which took over 120 s on a loaded 2-core machine (the
    # test failed with TimeoutExpired, not with a wrong message)
    return subprocess.run([sys.executable, "-m", f"stages.{stage}"], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=STAGE_TIMEOUT_S)


def assert_one_clear_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    for n in needles:
        assert n in last, last


def test_questions_csv_missing_column(tmp_path):
    r = run_stage(tmp_path, "plan", {"plan": {"n_queries": 1}}, "id,text\nq1,What?\n")
    assert_one_clear_error(r, "q.csv", "missing required column(s) question")


def test_bad_ensemble_size(tmp_path):
    r = run_stage(tmp_path, "vote", {"ensemble": {"n": 0}}, "id,question\nq1,What?\n")
    assert_one_clear_error(r, "ensemble.n=0 must be >= 1")


def test_unreachable_llm_base_url(tmp_path, refused_port):
    url = f"http://127.0.0.1:{refused_port}/v1"
    r = run_stage(tmp_path, "plan", {"plan": {"n_queries": 3}, "llm": {"base_url": url}}, "id,question\nq1,What?\n")
    assert_one_clear_error(r, f"llm.base_url='{url}' is unreachable")
