"""Determinism and ensemble growth on the embedded default model (not a test: minutes).

On the tiny 3-document project (tests/tiny_project.py) with llm.model from
params.yaml (default qwen2.5-coder-1.5b) and ensemble.n=3:
  1. two cold `dvc repro` runs with separate LLM caches -> sha256 of both submissions;
  2. then `ensemble.n=4` in the second project -> which stages reran and the answer
     stage's per-member cache hits / new calls.
  python bench/determinism.py [--model qwen2.5-coder-1.5b]
Writes bench/results/determinism.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from tiny_project import dvc, make_project  # noqa: E402


def set_n(proj: Path, n: int) -> None:
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["ensemble"]["n"] = n
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=yaml.safe_load(Path("params.yaml").read_text())["llm"]["model"])
    args = ap.parse_args()
    out: dict[str, object] = {"model": args.model}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        shas = []
        for name in ("a", "b"):
            os.environ["TREERAG_CACHE_DIR"] = str(tmp / f"cache_{name}")
            proj = make_project(tmp, model=args.model, name=name)
            set_n(proj, 3)
            dvc(proj, "init", "--no-scm", "-q")
            t0 = time.perf_counter()
            dvc(proj, "repro")
            out[f"run_{name}_s"] = round(time.perf_counter() - t0, 1)
            shas.append(hashlib.sha256((proj / "submissions" / "submission.csv").read_bytes()).hexdigest())
        out["sha256_a"], out["sha256_b"] = shas
        out["identical"] = shas[0] == shas[1]
        set_n(proj, 4)
        log = dvc(proj, "repro")
        out["reran"] = re.findall(r"Running stage '(\w+)'", log)
        out["skipped"] = re.findall(r"Stage '(\w+)' didn't change", log)
        out["members"] = re.findall(r"member \d+ \(seed \d+\): \d+ calls, \d+ cache hits, \d+ new", log)
    Path("bench/results").mkdir(parents=True, exist_ok=True)
    Path("bench/results/determinism.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
