"""The per-document stages, `engine: local` against `engine: ray` on two one-CPU Ray nodes on 127.0.0.1 (issue 46):
wall, CPU s and the artifacts' bytes per stage.

A corpus of `--pages` generated 10-K-like pages (bench/extract_speed.make_financial: three ruled 12x5 tables
per page, prose between; files of 100 pages) runs extract, caption, build_tree and embed (MiniLM, torch, every
text through the model) as `python -m stages.<stage>` in a folder of its own per engine, each with a fresh
TREERAG_CACHE_DIR. CPU s: the stage process and its children (os.wait4) plus, for ray, what the cluster's
processes (raylets, GCS, workers: tests/ray_cluster.py) used during the stage (/proc/<pid>/stat sampled
every 0.5 s: a job's workers exit with the stage). Writes bench/results/ray_stages.json.

    python bench/ray_stages.py [--pages 200]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from bench.extract_speed import make_financial  # noqa: E402
from ray_cluster import RayCluster  # noqa: E402

STAGES = ("extract", "caption", "build_tree", "embed")
OUTS = ("artifacts/extract/documents.parquet", "artifacts/extract/blocks.parquet", "artifacts/extract/images.parquet",
        "artifacts/tree/nodes.parquet", "artifacts/embed/vectors.parquet")
TICK = os.sysconf("SC_CLK_TCK")


def cluster_cpu(cluster: RayCluster | None, seen: dict[int, int]) -> None:
    """Record in ``seen`` the CPU ticks of each of the cluster's processes (a job's workers exit with it)."""
    for p in cluster.pids() if cluster else ():
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            seen[p] = int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            continue


def run_stage(stage: str, work: Path, env: dict[str, str], cluster: RayCluster | None) -> dict:
    before: dict[int, int] = {}
    cluster_cpu(cluster, before)
    seen = dict(before)
    t0 = time.perf_counter()
    log = work / f"{stage}.log"
    with log.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", f"stages.{stage}"], cwd=work, env=env, stdout=f,
                                stderr=subprocess.STDOUT)
        while True:  # sample the cluster's processes every 0.5 s: a worker's last < 0.5 s is missed
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            cluster_cpu(cluster, seen)
            if pid:
                break
            time.sleep(0.5)
    out = log.read_bytes()
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{stage} failed:\n{out.decode(errors='replace')[-3000:]}")
    return {"wall_s": round(wall, 1), "driver_cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
            "cluster_cpu_s": round((sum(seen.values()) - sum(before.values())) / TICK, 1)}


def project(tmp: Path, name: str, corpus: Path, engine: dict) -> Path:
    work = tmp / name
    work.mkdir()
    shutil.copytree(ROOT / "stages", work / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"] = {**params["data"], "corpus_dir": str(corpus), "metadata": ""}
    params["embed"]["backend"] = "torch"
    params.update(engine)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return work


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="raystages"))
    corpus = tmp / "corpus"
    corpus.mkdir()
    for i in range(0, args.pages, 100):
        make_financial(corpus / f"gen{i // 100:03d}.pdf", min(100, args.pages - i), seed=i)
    result: dict = {"pages": args.pages, "cpus": os.cpu_count(), "stages": {}}
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    try:
        runs = {"local": (None, {}), "ray": (cluster, {"engine": "ray"})}
        for name, (cl, top) in runs.items():
            if cl is not None:
                top["ray"] = {"address": cl.start(nodes=2)}
            work = project(tmp, name, corpus, top)
            env = {**os.environ, "TREERAG_CACHE_DIR": str(tmp / f"cache-{name}"), "PYTHONPATH": str(work)}
            for stage in STAGES:
                result["stages"].setdefault(stage, {})[name] = m = run_stage(stage, work, env, cl)
                print(name, stage, m, flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
    result["same_bytes"] = {f: (tmp / "local" / f).read_bytes() == (tmp / "ray" / f).read_bytes() for f in OUTS}
    result["embed_metrics"] = {n: json.loads((tmp / n / "metrics/embed.json").read_text()) for n in ("local", "ray")}
    print(json.dumps(result, indent=1))
    (ROOT / "bench" / "results" / "ray_stages.json").write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
