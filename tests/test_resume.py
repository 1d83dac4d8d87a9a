"""Resume and determinism on the real pipeline and the real local LLM (0.5B):

- two cold runs with separate response caches give byte-identical submissions;
- `kill -9` of `dvc repro` during the answer stage, then `dvc repro` again: every call
  completed before the kill is served from the cache, and the submission is identical
  to the uninterrupted run's. This needs `llm.prompt_cache: false`: with llama.cpp's
  prefix reuse on, a sampled reply can differ in the last bits depending on what the
  restarted server evaluated before.
"""
from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from tiny_project import dvc, make_project

pytestmark = pytest.mark.llm


def reproducible_project(tmp: Path, name: str) -> Path:
    """The tiny project with llm.prompt_cache off: replies independent of the server's history."""
    proj = make_project(tmp, name=name)
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["llm"]["prompt_cache"] = False
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return proj


def cached_calls(cache: Path) -> int:
    db = cache / "llm" / "responses.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=30) as con:
            return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # the stage created the file but not the table yet
        return 0


def test_kill_9_during_answer_resumes_from_cache_and_matches_uninterrupted_run(tmp_path, monkeypatch):
    # A: uninterrupted, its own cold cache
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache_a"))
    a = reproducible_project(tmp_path, "a")
    dvc(a, "init", "--no-scm", "-q")
    dvc(a, "repro")
    sub_a = (a / "submissions" / "submission.csv").read_bytes()

    # B: same params, another cold cache; killed with SIGKILL once the answer stage has made calls
    cache_b = tmp_path / "cache_b"
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(cache_b))
    b = reproducible_project(tmp_path, "b")
    dvc(b, "init", "--no-scm", "-q")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    proc = subprocess.Popen([sys.executable, "-m", "dvc", "repro"], cwd=b, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    n_plan = 3  # plan.n_queries=2: one planner call per question
    deadline = time.time() + 900
    try:
        while cached_calls(cache_b) < n_plan + 2 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, "dvc repro finished before it could be killed"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # also when the test fails: no orphaned run
        proc.wait()
    completed_answer_calls = cached_calls(cache_b) - n_plan
    assert completed_answer_calls >= 2
    assert not (b / "submissions" / "submission.csv").exists()

    log = dvc(b, "repro")
    assert "Stage 'plan' didn't change, skipping" in log
    m = re.search(r"LLM calls: (\d+) total, (\d+) cache hits, (\d+) new", log)
    assert m, log[-3000:]
    assert int(m.group(2)) == completed_answer_calls  # every completed call came back from the cache
    assert (b / "submissions" / "submission.csv").read_bytes() == sub_a  # identical to the uninterrupted run
