"""How extract, caption, build_tree, embed and index grow with pages: wall, CPU s and peak RSS per stage.

    python bench/stage_scale.py                           # 100, 500, 1000, 2000 pages (embed sampled from 500 up)
    python bench/stage_scale.py --points 100 500 --embed-sample 1.0   # every text through the model
    python bench/stage_scale.py --plot-only               # redraw the PNG from the JSON

Each point is a corpus of real PDFs from Debian documentation packages (the ones
bench/extract_speed.py downloads into bench/data/extract_speed/real: manuals with ruled
tables) filling up to half its pages, smallest first, and the rest generated table-heavy
pages like a 10-K's statements (bench/extract_speed.make_financial: three ruled 12x5 tables
per page, prose between; files of 100 pages, one seed per file, so every point holds the
smaller points' generated files). A point runs in its own folder under bench/data/stage_scale/
with a params.yaml that is the repository's with `data.corpus_dir` / `data.metadata` pointed
at its corpus, and a fresh TREERAG_CACHE_DIR (no embedding is a cache hit). Each stage runs
as `python -m stages.<stage>` in that folder, exactly as DVC runs it, and is measured with
os.wait4: wall, user+sys CPU s (the extract workers' included: they are reaped children of
the stage) and ru_maxrss (the largest resident set of the stage's process tree: one process,
not the sum of the extract workers).

Embedding every text costs ~10 ms of CPU per text with MiniLM on 2 cores, so from
`--sample-from` pages on the embed stage runs with a fixed hash sample of its texts
(`--embed-sample`, default 0.1) through the model and a deterministic pseudo-vector for the
rest: the stage's own work (tree walk, cache, aggregation, Parquet) runs at full scale and
its RSS is measured, while the model time is measured on the sample and extrapolated
linearly in texts (the batches are sorted by length, so a uniform sample has the same mix).
The JSON says, per point, which numbers are measured and which extrapolated.
Results: bench/results/stage_scale.json and bench/results/stage_scale.png.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DATA = ROOT / "bench" / "data" / "stage_scale"
OUT = ROOT / "bench" / "results" / "stage_scale.json"
PNG = ROOT / "bench" / "results" / "stage_scale.png"
STAGES = ("extract", "caption", "build_tree", "embed", "index")
GEN_FILE_PAGES = 100


# ---- corpora -------------------------------------------------------------------------------------------------
def compose(pages: int, real: list[tuple[Path, int]]) -> list[Path]:
    """Real PDFs (smallest first) up to half of `pages`, then generated 100-page files up to `pages`."""
    from extract_speed import make_financial

    chosen, used = [], 0
    for path, n in sorted(real, key=lambda x: (x[1], x[0].name)):
        if used + n <= pages // 2:
            chosen.append(path)
            used += n
    gen_dir = DATA / "generated"
    gen_dir.mkdir(parents=True, exist_ok=True)
    i = 0
    while used < pages:
        n = min(GEN_FILE_PAGES, pages - used)
        path = gen_dir / f"filing_{i:03d}_{n}p.pdf"
        if not path.exists():
            make_financial(path, n, seed=1000 + i)
        chosen.append(path)
        used += n
        i += 1
    return chosen


def prepare_point(pages: int, real: list[tuple[Path, int]]) -> tuple[Path, list[Path]]:
    """A folder with corpus/ (symlinks), metadata.csv and params.yaml for one point."""
    import yaml

    files = compose(pages, real)
    work = DATA / f"p{pages}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "corpus").mkdir(parents=True)
    for f in files:
        (work / "corpus" / f.name).symlink_to(f.resolve())
    with (work / "metadata.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "type", "title", "year", "citation", "url"])
        for f in files:
            w.writerow([f.stem, "report", f.stem.replace("_", " "), 2024, f.stem, ""])
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"] = {**params["data"], "corpus_dir": "corpus", "metadata": "metadata.csv"}
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return work, files


# ---- the sampled embedder (runs inside the embed subprocess) -------------------------------------------------
class SampledEmbedder:
    """The real embedder on a fixed hash sample of the texts, a pseudo-vector for the rest."""

    def __init__(self, real, fraction: float) -> None:  # noqa: ANN001
        import numpy as np

        self._np = np
        self.real, self.fraction = real, fraction
        self.name, self.dim = real.name, real.dim
        self.texts = self.sampled = 0
        self.model_wall_s = self.model_cpu_s = 0.0

    def _in_sample(self, text: str) -> bool:
        h = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        return h / 2**64 < self.fraction

    def embed(self, texts):  # noqa: ANN001, ANN201
        np = self._np
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pick = [i for i, t in enumerate(texts) if self._in_sample(t)]
        if pick:
            w0, c0 = time.perf_counter(), time.process_time()
            out[pick] = self.real.embed([texts[i] for i in pick])
            self.model_wall_s += time.perf_counter() - w0
            self.model_cpu_s += time.process_time() - c0
        for i in set(range(len(texts))) - set(pick):
            seed = int.from_bytes(hashlib.sha256(texts[i].encode()).digest()[:4], "big")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        self.texts += len(texts)
        self.sampled += len(pick)
        return out


def sampled_embed_main(fraction: float, report: Path) -> None:
    """stages.embed.main with its embedder wrapped in SampledEmbedder; the sample's numbers to `report`."""
    import stages.embed as stage
    from stages.core.common.cli import run

    made: list[SampledEmbedder] = []
    real_make = stage.make_embedder

    def make(*a, **k):  # noqa: ANN002, ANN003, ANN202
        made.append(SampledEmbedder(real_make(*a, **k), fraction))
        return made[-1]

    stage.make_embedder = make
    run(stage.main, "embed")
    e = made[0]
    report.write_text(json.dumps({"fraction": fraction, "texts": e.texts, "sampled": e.sampled,
                                  "model_wall_s": e.model_wall_s, "model_cpu_s": e.model_cpu_s}))


# ---- measuring -----------------------------------------------------------------------------------------------
def run_stage(stage: str, work: Path, env: dict[str, str], sample: float | None) -> dict:
    """Run one stage in `work`; wall, CPU and peak RSS from os.wait4."""
    if stage == "embed" and sample is not None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--embed-driver", str(sample)]
    else:
        cmd = [sys.executable, "-m", f"stages.{stage}"]
    log = (work / f"{stage}.log").open("w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    if proc.returncode != 0:
        tail = (work / f"{stage}.log").read_text()[-2000:]
        raise SystemExit(f"{stage} failed in {work} (exit {proc.returncode}):\n{tail}")
    return {"wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}


def artifact_counts(work: Path) -> dict:
    import polars as pl

    nodes = pl.read_parquet(work / "artifacts/tree/nodes.parquet", columns=["level"])
    vec = pl.read_parquet(work / "artifacts/embed/vectors.parquet", columns=["level"])
    emb = json.loads((work / "metrics/embed.json").read_text())
    blocks = pl.read_parquet(work / "artifacts/extract/blocks.parquet", columns=["doc_id"])
    return {"blocks": blocks.height, "nodes": nodes.height,
            "nodes_by_level": dict(sorted(nodes["level"].value_counts().iter_rows())),
            "vectors": vec.height, "embedded_texts": emb["texts"]}


def measure_point(pages: int, real: list[tuple[Path, int]], sample: float | None) -> dict:
    import pymupdf

    work, files = prepare_point(pages, real)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TREERAG_CACHE_DIR": str(work / "cache")}
    n_pages = sum(pymupdf.open(str(f)).page_count for f in files)
    point: dict = {"pages": n_pages, "files": len(files),
                   "real_pages": sum(n for p, n in real if p in files),
                   "embed_sample": sample if sample is not None else 1.0, "stages": {}}
    for stage in STAGES:
        r = run_stage(stage, work, env, sample)
        point["stages"][stage] = r
        print(f"  {pages} pages: {stage}: {r}", flush=True)
    point.update(artifact_counts(work))
    if sample is not None:
        s = json.loads((work / "embed_sample.json").read_text())
        e = point["stages"]["embed"]
        scale = s["texts"] / max(s["sampled"], 1)
        e["measured"] = {**{k: e[k] for k in ("wall_s", "cpu_s")}, "texts_through_model": s["sampled"],
                         "texts": s["texts"], "model_wall_s": round(s["model_wall_s"], 2),
                         "model_cpu_s": round(s["model_cpu_s"], 2)}
        e["wall_s"] = round(e["wall_s"] + s["model_wall_s"] * (scale - 1), 2)
        e["cpu_s"] = round(e["cpu_s"] + s["model_cpu_s"] * (scale - 1), 2)
        e["extrapolated"] = True
        print(f"  {pages} pages: embed extrapolated from {s['sampled']}/{s['texts']} texts: "
              f"{e['wall_s']} s wall, {e['cpu_s']} CPU s", flush=True)
    point["load_avg_1min_at_end"] = round(os.getloadavg()[0], 2)
    shutil.rmtree(work / "cache", ignore_errors=True)
    return point


def plot(result: dict, png: Path = PNG) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted(result["points"], key=lambda p: p["pages"])
    xs = [p["pages"] for p in pts]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for st in STAGES:
        a.plot(xs, [p["stages"][st]["cpu_s"] for p in pts], marker="o", label=st)
        b.plot(xs, [p["stages"][st]["peak_rss_mb"] for p in pts], marker="o", label=st)
    for p in pts:
        if p["stages"]["embed"].get("extrapolated"):
            a.annotate("sampled", (p["pages"], p["stages"]["embed"]["cpu_s"]), fontsize=7,
                       textcoords="offset points", xytext=(4, -10))
    a.set(xlabel="pages", ylabel="CPU s (user + sys)", title="CPU time per stage")
    b.set(xlabel="pages", ylabel="peak RSS (MB)", title="peak RSS per stage")
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("treerag stages vs pages (2-core CPU; real Debian manuals + generated 10-K-like tables)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"written {png}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, nargs="+", default=[100, 500, 1000, 2000])
    ap.add_argument("--embed-sample", type=float, default=0.1,
                    help="share of texts through the model from --sample-from pages up (1.0 = all)")
    ap.add_argument("--sample-from", type=int, default=500)
    ap.add_argument("--plot-only", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT, help="results JSON (the PNG goes beside it)")
    ap.add_argument("--embed-driver", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.embed_driver is not None:
        sampled_embed_main(args.embed_driver, Path("embed_sample.json"))
        return 0
    if args.plot_only:
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        return 0
    import pymupdf
    from extract_speed import DATA as XDATA
    from extract_speed import fetch_real

    real = [(p, pymupdf.open(str(p)).page_count) for p in fetch_real(XDATA / "real")]
    result: dict = {"cpu_cores": os.cpu_count(), "stages": list(STAGES), "points": [],
                    "note": "one process per stage (python -m stages.<stage>), os.wait4 rusage; peak RSS is the "
                            "largest process of the stage's tree; embed from --sample-from pages: model time "
                            "extrapolated from a hash sample of the texts (see the docstring)"}
    for pages in args.points:
        sample = args.embed_sample if pages >= args.sample_from and args.embed_sample < 1.0 else None
        print(f"point {pages} pages (embed sample {sample or 1.0})", flush=True)
        result["points"].append(measure_point(pages, real, sample))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")  # after every point: a killed run keeps its points
    print(f"written {args.out}")
    plot(result, args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
