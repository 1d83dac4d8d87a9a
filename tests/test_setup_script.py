"""scripts/setup.sh refuses an unknown LLM_BUILD before it creates a venv or installs anything."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_unknown_llm_build_stops_setup_before_any_install(tmp_path):
    # a copy in an empty folder: were the check missing, it would fail creating the venv (rc != 2), not install
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    env = {**os.environ, "LLM_BUILD": "fast", "PYTHON": str(tmp_path / "no-python-here")}
    r = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh"), "run"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "LLM_BUILD=fast" in r.stderr and "native" in r.stderr
    assert not (tmp_path / ".venv").exists()
