"""A real DVC project on the WattBot corpus, built up to its index, for the LLM-free regression rows
(tests/test_regressions.py): this repository's dvc.yaml, params.yaml, stages/ and data/wattbot/."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_index_project(tmp: Path, name: str = "wattbot") -> Path:
    """tmp/name with `dvc repro index` done (extract, caption, build_tree, embed, index); returns the project."""
    proj = tmp / name
    proj.mkdir(parents=True)
    for f in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / f, proj / f)
    shutil.copytree(ROOT / "stages", proj / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "data" / "wattbot", proj / "data" / "wattbot")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=proj, env=env, check=True)
    r = subprocess.run([sys.executable, "-m", "dvc", "repro", "index"], cwd=proj, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dvc repro index in {proj} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return proj
