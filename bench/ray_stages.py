"""The per-document stages, `engine: local` against `engine: ray` on two one-CPU Ray nodes on 127.0.0.1 (issue 46):
wall, CPU s and the artifacts' bytes per stage.

The corpus: `--pages N` generated 10-K-like pages (bench/extract_speed.make_financial: three ruled 12x5 tables
per page, prose between; files of 100 pages), or `--corpus DIR` real PDFs: the first files of DIR sorted by name
whose pages sum to at least `--min-pages` (all of them without it), read in place through symlinks. The stages
(`--stages`, default extract,caption,build_tree,embed; index may be added: it does not use the engine, a
control) run as `python -m stages.<stage>` in a folder of its own per engine with params.yaml's settings
(embed: every text through the model, in a fresh TREERAG_CACHE_DIR per engine).

CPU s: the stage process and its children (os.wait4), plus for ray what the cluster's processes used during
the stage (raylets, GCS, agents and the task/actor workers under the raylets: cluster_cpu.ClusterCpu). The
workers of a job exit with it and a raylet reaps them without adding their CPU to its own children's count,
so their CPU is read from /proc while they live (every 0.2 s); `cluster_cpu_unseen_max_s` bounds what the
last interval of the workers that exited may have missed. Results go into one section of
bench/results/ray_stages.json (`--section`, default "pages-N" or the corpus folder's name and page count).

    python bench/ray_stages.py --pages 200
    python bench/ray_stages.py --corpus ../shared/financebench/corpus --min-pages 2000 \\
        --metadata ../shared/financebench/metadata.csv --stages extract,caption,build_tree,embed,index
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
from bench.cluster_cpu import ClusterCpu  # noqa: E402
from bench.extract_speed import make_financial  # noqa: E402
from ray_cluster import RayCluster  # noqa: E402

STAGES = ("extract", "caption", "build_tree", "embed", "index")
OUTS = {"extract": ("artifacts/extract/documents.parquet", "artifacts/extract/blocks.parquet",
                    "artifacts/extract/images.parquet"),
        "build_tree": ("artifacts/tree/nodes.parquet",), "embed": ("artifacts/embed/vectors.parquet",)}
RESULTS = ROOT / "bench" / "results" / "ray_stages.json"


def run_stage(stage: str, work: Path, env: dict[str, str], cluster: RayCluster | None) -> dict:
    """``python -m stages.<stage>`` in ``work``: wall, its own CPU and the cluster's during it."""
    cpu = ClusterCpu(cluster)
    t0 = time.perf_counter()
    log = work / f"{stage}.log"
    with log.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", f"stages.{stage}"], cwd=work, env=env, stdout=f,
                                stderr=subprocess.STDOUT)
        status, ru = cpu.follow(proc.pid)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{stage} failed:\n{log.read_bytes().decode(errors='replace')[-3000:]}")
    return {"wall_s": round(wall, 1), "driver_cpu_s": round(ru.ru_utime + ru.ru_stime, 1), **cpu.result()}


def pdf_pages(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as doc:
        return doc.page_count


def real_corpus(src: Path, min_pages: int, dest: Path) -> list[dict]:
    """Symlinks in ``dest`` to the first PDFs of ``src`` by name whose pages reach ``min_pages`` (0: all)."""
    files = sorted(src.glob("*.pdf"))
    if not files:
        raise SystemExit(f"--corpus {src}: no *.pdf files there")
    chosen, total = [], 0
    for f in files:
        if min_pages and total >= min_pages:
            break
        n = pdf_pages(f)
        total += n
        chosen.append({"file": f.name, "pages": n})
        (dest / f.name).symlink_to(f.resolve())
    if total < min_pages:
        raise SystemExit(f"--corpus {src}: all {len(files)} PDFs hold {total} pages, fewer than --min-pages "
                         f"{min_pages}")
    return chosen


def generated_corpus(pages: int, dest: Path) -> list[dict]:
    for i in range(0, pages, 100):
        make_financial(dest / f"gen{i // 100:03d}.pdf", min(100, pages - i), seed=i)
    files = sorted(dest.glob("*.pdf"))
    rows = "".join(f"{f.stem},report,Generated report {f.stem},2024,,\n" for f in files)
    (dest.parent / "metadata.csv").write_text("id,type,title,year,citation,url\n" + rows)
    return [{"file": f.name, "pages": pdf_pages(f)} for f in files]


def project(tmp: Path, name: str, corpus: Path, metadata: str, engine: dict) -> Path:
    work = tmp / name
    work.mkdir()
    shutil.copytree(ROOT / "stages", work / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"] = {**params["data"], "corpus_dir": str(corpus), "metadata": metadata}
    params.update(engine)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return work


def save_section(name: str, result: dict) -> None:
    """``result`` as section ``name`` of the results file (the other sections kept)."""
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[name] = result
    RESULTS.write_text(json.dumps(data, indent=1) + "\n")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--pages", type=int, default=200, help="generated 10-K-like pages")
    src.add_argument("--corpus", type=Path, help="a folder of real PDFs instead")
    ap.add_argument("--min-pages", type=int, default=0, help="with --corpus: the first files reaching this")
    ap.add_argument("--metadata", default="", help="with --corpus: its metadata.csv (generated pages get one)")
    ap.add_argument("--stages", default="extract,caption,build_tree,embed")
    ap.add_argument("--section", default="", help="the results file's section for this run")
    args = ap.parse_args()
    args.stages = args.stages.split(",")
    bad = [s for s in args.stages if s not in STAGES]
    if bad:
        ap.error(f"--stages: {', '.join(bad)} not among {', '.join(STAGES)}")
    if args.corpus is not None and not args.corpus.is_dir():
        ap.error(f"--corpus {args.corpus}: not a folder")
    if args.corpus is not None and not args.metadata:
        ap.error("--corpus needs --metadata (the stages read one row per document)")
    return args


def main() -> int:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="raystages"))
    corpus = tmp / "corpus"
    corpus.mkdir()
    files = real_corpus(args.corpus, args.min_pages, corpus) if args.corpus else generated_corpus(args.pages, corpus)
    pages = sum(f["pages"] for f in files)
    section = args.section or (f"{args.corpus.resolve().parent.name}-{pages}pages" if args.corpus
                               else f"generated-{pages}pages")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    result: dict = {"pages": pages, "files": files, "cpus": os.cpu_count(),
                    "embed_backend": params["embed"].get("backend"), "stages": {}}
    metadata = str(Path(args.metadata).resolve()) if args.metadata else str(tmp / "metadata.csv")
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    try:
        runs = {"local": (None, {}), "ray": (cluster, {"engine": "ray"})}
        for name, (cl, top) in runs.items():
            if cl is not None:
                top["ray"] = {"address": cl.start(nodes=2)}
            work = project(tmp, name, corpus, metadata, top)
            env = {**os.environ, "TREERAG_CACHE_DIR": str(tmp / f"cache-{name}"), "PYTHONPATH": str(work)}
            for stage in args.stages:
                result["stages"].setdefault(stage, {})[name] = m = run_stage(stage, work, env, cl)
                print(name, stage, m, flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
    outs = [f for s in args.stages for f in OUTS.get(s, ())]
    result["same_bytes"] = {f: (tmp / "local" / f).read_bytes() == (tmp / "ray" / f).read_bytes() for f in outs}
    if "embed" in args.stages:
        result["embed_metrics"] = {n: json.loads((tmp / n / "metrics/embed.json").read_text())
                                   for n in ("local", "ray")}
    print(json.dumps(result, indent=1))
    save_section(section, result)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
