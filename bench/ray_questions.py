"""The per-question stages of the WattBot project, `engine: local` against `engine: ray` on two one-CPU Ray
nodes on 127.0.0.1 (issue 46): wall, CPU s per stage, and whether the two submissions agree.

The first `--n` questions of data/wattbot/train_QA.csv (file order) run plan, retrieve, answer and vote as
`python -m stages.<stage>` in a folder of its own per engine: params.yaml as it is (the embedded llama.cpp
model, `llm.threads: 0`), the built corpus artifacts (extract, caption, tree, embed, index) of `--artifacts`
linked read-only, and a fresh TREERAG_CACHE_DIR per engine holding only links to the model weights and the
exported ONNX embedder: every LLM call is a miss. On ray each node's answer actor starts its own llama.cpp
server with the node's one CPU as its threads; locally one server uses every core. CPU s as in
bench/ray_stages.py (bench/cluster_cpu.py). Written into the "wattbot-train-first<N>" section of
bench/results/ray_stages.json. It starts the embedded LLM: run it under the machine's LLM lock.

    flock /work/notes/llm.lock python bench/ray_questions.py --n 20 --artifacts /work/main/artifacts
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from bench.ray_stages import run_stage, save_section  # noqa: E402
from ray_cluster import RayCluster  # noqa: E402

STAGES = ("plan", "retrieve", "answer", "vote")
CORPUS_ARTIFACTS = ("extract", "caption", "tree", "embed", "index")
DATA = ROOT / "data" / "wattbot"
SHARED_CACHE = ("models", "onnx")  # read-only inputs kept; the response and embedding caches start empty


def first_questions(n: int, dest: Path) -> list[str]:
    with (DATA / "train_QA.csv").open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        rows = [r for _, r in zip(range(n), reader)]
        fields = reader.fieldnames
    if len(rows) < n:
        raise SystemExit(f"--n {n}: {DATA / 'train_QA.csv'} holds only {len(rows)} questions")
    with dest.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return [r["id"] for r in rows]


def project(tmp: Path, name: str, artifacts: Path, questions: Path, top: dict) -> Path:
    work = tmp / name
    (work / "data" / "wattbot").mkdir(parents=True)
    (work / "artifacts").mkdir()
    shutil.copytree(ROOT / "stages", work / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    for a in CORPUS_ARTIFACTS:
        (work / "artifacts" / a).symlink_to(artifacts / a)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for f in (params["data"]["metadata"], params["answer"]["demo_file"]):
        (work / f).symlink_to(ROOT / f)
    shutil.copy(questions, work / "data" / "wattbot" / questions.name)
    params["data"]["questions"] = f"data/wattbot/{questions.name}"
    for key, value in top.items():
        params[key] = {**params[key], **value} if isinstance(value, dict) and key in params else value
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return work


def cold_cache(path: Path) -> Path:
    path.mkdir()
    home = Path(os.environ.get("TREERAG_CACHE_DIR") or Path.home() / ".cache" / "treerag")
    for d in SHARED_CACHE:
        if (home / d).exists():
            (path / d).symlink_to(home / d)
    return path


def llm_summary(log: Path) -> str:
    """The answer stage's last "LLM calls: ..." line (calls, cache hits, tokens paid)."""
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "LLM calls:" in ln]
    return lines[-1].split(" - ")[-1].strip() if lines else ""


def compare(tmp: Path) -> dict:
    """Submissions row by row (which questions and columns differ) and the retrieval's bytes."""
    rows = {}
    for name in ("local", "ray"):
        with (tmp / name / "submissions" / "submission.csv").open(newline="", encoding="utf-8") as f:
            rows[name] = {r["id"]: r for r in csv.DictReader(f)}
    differ = {q: [c for c in r if r[c] != rows["ray"].get(q, {}).get(c)] for q, r in rows["local"].items()}
    retrieve = sorted(p.relative_to(tmp / "local").as_posix() for p in (tmp / "local/artifacts/retrieve").glob("*"))
    return {"same_submission": (tmp / "local/submissions/submission.csv").read_bytes()
            == (tmp / "ray/submissions/submission.csv").read_bytes(),
            "rows_differing": {q: {c: [rows["local"][q][c], rows["ray"][q].get(c)] for c in cs}
                               for q, cs in differ.items() if cs},
            "same_bytes": {f: (tmp / "local" / f).read_bytes() == (tmp / "ray" / f).read_bytes() for f in retrieve}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20, help="the first N train questions")
    ap.add_argument("--artifacts", type=Path, default=ROOT / "artifacts", help="a built project's artifacts/")
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--llm-base-url", default="", help="an OpenAI-compatible endpoint instead of the embedded model")
    args = ap.parse_args()
    missing = [a for a in CORPUS_ARTIFACTS if not (args.artifacts / a).is_dir()]
    if missing:
        raise SystemExit(f"--artifacts {args.artifacts}: no {', '.join(missing)} (build the corpus stages first)")
    tmp = Path(tempfile.mkdtemp(prefix="rayquestions"))
    questions = tmp / f"train_first{args.n}.csv"
    ids = first_questions(args.n, questions)
    result: dict = {"questions": ids, "cpus": os.cpu_count(), "artifacts": str(args.artifacts.resolve()),
                    "stages": {}, "llm": {}}
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    try:
        for name in args.engines.split(","):
            top: dict = {"llm": {"base_url": args.llm_base_url}} if args.llm_base_url else {}
            cl = cluster if name == "ray" else None
            if cl is not None:
                top.update({"engine": "ray", "ray": {"address": cl.start(nodes=2)}})
            work = project(tmp, name, args.artifacts.resolve(), questions, top)
            env = {**os.environ, "TREERAG_CACHE_DIR": str(cold_cache(tmp / f"cache-{name}")), "PYTHONPATH": str(work)}
            t0 = time.perf_counter()
            for stage in STAGES:
                result["stages"].setdefault(stage, {})[name] = m = run_stage(stage, work, env, cl)
                print(name, stage, m, flush=True)
            result.setdefault("total_wall_s", {})[name] = round(time.perf_counter() - t0, 1)
            result["llm"][name] = llm_summary(work / "answer.log")
    finally:
        cluster.stop()
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
    if args.engines == "local,ray":
        result.update(compare(tmp))
    print(json.dumps(result, indent=1))
    save_section(f"wattbot-train-first{args.n}", result)
    print("work folder kept for inspection:", tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
