"""extract wall time by extract.workers, and what extract.table_max_drawings saves.

    python bench/extract_workers.py                      # 40 generated PDFs, workers 1 and 2
    python bench/extract_workers.py --workers 1 2 --manuals 4 --papers 36

Generates (once, into --corpus) a corpus of PDFs like a real one: `--papers` papers
(`--paper-pages` pages of text, a ruled table, an embedded image) and `--manuals`
package manuals whose pages are full of vector drawings (TikZ/pgfplots-like: thousands
of separate paths). Then runs the real extract code (extract_corpus) for each worker
count, checks that the artifacts (documents, blocks, images frames and every PNG) are
byte-identical, and runs once more with the table search unbounded
(table_max_drawings=0) to show where a drawing-heavy manual's time goes.
Results: bench/results/extract_workers.json.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pymupdf  # noqa: E402

from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.extract import loaders as corpus_loaders  # noqa: E402
from stages.core.extract.loaders import ExtractParams, extract_corpus, to_frames  # noqa: E402
from stages.core.extract import pdf as pdf_mod  # noqa: E402
from stages.core.extract.pdf import TABLE_MAX_DRAWINGS, find_page_tables  # noqa: E402

OUT = ROOT / "bench" / "results" / "extract_workers.json"
WORDS = ("energy power GPU training inference carbon emissions data center model parameters water cooling "
         "efficiency hardware accelerator throughput latency measured total annual kWh MWh tCO2e").split()


def _png(w: int, h: int, seed: int) -> bytes:
    rnd = random.Random(seed)
    buf = bytes(rnd.randrange(256) for _ in range(w * h * 3))
    return pymupdf.Pixmap(pymupdf.csRGB, w, h, buf, False).tobytes("png")


def _text_lines(page: pymupdf.Page, rnd: random.Random, y0: float, n: int) -> float:
    y = y0
    for _ in range(n):
        page.insert_text((72, y), " ".join(rnd.choice(WORDS) for _ in range(12)) + f" {rnd.randint(1, 9999)}.",
                         fontsize=9)
        y += 12
    return y


def make_paper(path: Path, seed: int, pages: int) -> None:
    rnd = random.Random(seed)
    doc = pymupdf.open()
    for pno in range(pages):
        page = doc.new_page()
        page.insert_text((72, 60), f"{pno + 1} Section on {rnd.choice(WORDS)}", fontsize=13, fontname="hebo")
        y = _text_lines(page, rnd, 84, 25)
        if pno == 1:  # a ruled 6x3 table
            xs, ys = [72, 220, 340, 460], [y + 10 + 18 * r for r in range(7)]
            for yy in ys:
                page.draw_line((xs[0], yy), (xs[-1], yy))
            for xx in xs:
                page.draw_line((xx, ys[0]), (xx, ys[-1]))
            for r in range(6):
                for c in range(3):
                    page.insert_text((xs[c] + 4, ys[r] + 13), f"{rnd.choice(WORDS)} {rnd.randint(1, 999)}",
                                     fontsize=9)
            y = ys[-1] + 20
        if pno == 2:
            page.insert_image(pymupdf.Rect(72, y + 10, 312, y + 170), stream=_png(120, 80, seed))
            page.insert_text((72, y + 190), f"Figure 1: {rnd.choice(WORDS)} over time.", fontsize=9)
            y += 200
        _text_lines(page, rnd, y + 12, 20)
    doc.save(str(path))


def make_manual(path: Path, seed: int, pages: int, drawings: int) -> None:
    rnd = random.Random(seed)
    doc = pymupdf.open()
    for pno in range(pages):
        page = doc.new_page()
        page.insert_text((72, 60), f"{pno + 1} The \\draw command, part {pno}", fontsize=13, fontname="hebo")
        _text_lines(page, rnd, 80, 10)
        shape = page.new_shape()
        for k in range(drawings):  # separate paths, as TikZ writes them
            x, y = rnd.uniform(80, 520), rnd.uniform(220, 760)
            kind = k % 4
            if kind == 0:
                shape.draw_line((x, y), (x + rnd.uniform(-30, 30), y + rnd.uniform(-30, 30)))
            elif kind == 1:
                shape.draw_bezier((x, y), (x + 5, y - 10), (x + 15, y + 10), (x + 20, y))
            elif kind == 2:
                shape.draw_rect(pymupdf.Rect(x, y, x + rnd.uniform(2, 20), y + rnd.uniform(2, 20)))
            else:
                shape.draw_circle((x, y), rnd.uniform(1, 6))
            shape.finish(color=(0, 0, rnd.random()), width=0.4)
        shape.commit()
    doc.save(str(path))


def make_corpus(corpus: Path, papers: int, paper_pages: int, manuals: int, manual_pages: int, drawings: int) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    for i in range(papers):
        make_paper(corpus / f"paper{i:02d}.pdf", i, paper_pages)
    for i in range(manuals):
        make_manual(corpus / f"manual{i}.pdf", 1000 + i, manual_pages, drawings)


def list_schedule(costs: list[float], workers: int) -> float:
    """Makespan of jobs taken in order by the first free of `workers` (how the pool hands them out)."""
    free = [0.0] * workers
    for c in costs:
        i = free.index(min(free))
        free[i] += c
    return max(free)


def run(corpus: Path, params: ExtractParams) -> tuple[float, str, str, list[float]]:
    """(wall s, sha256 of the three frames + PNGs, stderr, CPU s per file) of one cold extract."""
    cpu: list[float] = []
    real_load_all = corpus_loaders.load_all

    def recording_load_all(*a, **k):  # type: ignore[no-untyped-def]
        outcomes = real_load_all(*a, **k)
        cpu.extend(o.cpu_s for o in outcomes)
        return outcomes

    corpus_loaders.load_all = recording_load_all
    try:
        return (*_run(corpus, params), cpu)  # type: ignore[return-value]
    finally:
        corpus_loaders.load_all = real_load_all


def _run(corpus: Path, params: ExtractParams) -> tuple[float, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        images = Path(tmp) / "images"
        images.mkdir()
        err = io.StringIO()
        real_err, sys.stderr = sys.stderr, err
        try:
            t0 = time.perf_counter()
            result = extract_corpus(corpus, params, images, progress=False)
            wall = time.perf_counter() - t0
        finally:
            sys.stderr = real_err
        h = hashlib.sha256()
        for df in to_frames(result):
            buf = io.BytesIO()
            df = df.with_columns(df["path"].str.replace(tmp, "TMP", literal=True)) if "path" in df.columns else df
            df.write_parquet(buf)
            h.update(buf.getvalue())
        for p in sorted(images.iterdir()):
            h.update(p.name.encode() + p.read_bytes())
    return wall, h.hexdigest(), err.getvalue()


def page_profile(pdf: Path) -> dict[str, float]:
    """ms per page of a manual: text extraction, counting drawings, the table search."""
    doc = pymupdf.open(str(pdf))
    t_text = t_count = t_tables = 0.0
    n_draw = 0
    for page in doc:
        t0 = time.perf_counter()
        page.get_text("dict")
        t1 = time.perf_counter()
        n_draw += len(page.get_cdrawings())
        t2 = time.perf_counter()
        find_page_tables(page, 0)
        t3 = time.perf_counter()
        t_text, t_count, t_tables = t_text + t1 - t0, t_count + t2 - t1, t_tables + t3 - t2
    n = doc.page_count
    return {"pages": n, "drawings_per_page": round(n_draw / n), "text_ms_per_page": round(1000 * t_text / n, 1),
            "count_drawings_ms_per_page": round(1000 * t_count / n, 1),
            "find_tables_ms_per_page": round(1000 * t_tables / n, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench-corpus40")
    ap.add_argument("--papers", type=int, default=36)
    ap.add_argument("--manuals", type=int, default=4)
    ap.add_argument("--paper-pages", type=int, default=8)
    ap.add_argument("--manual-pages", type=int, default=30)
    ap.add_argument("--drawings", type=int, default=2500, help="vector paths per manual page")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--no-unbounded", action="store_true", help="skip the run with the table search unbounded")
    args = ap.parse_args(argv)
    if args.regenerate:
        shutil.rmtree(args.corpus, ignore_errors=True)
    if not args.corpus.exists():
        t0 = time.perf_counter()
        make_corpus(args.corpus, args.papers, args.paper_pages, args.manuals, args.manual_pages, args.drawings)
        print(f"generated {args.papers} papers + {args.manuals} manuals in {args.corpus} "
              f"({time.perf_counter() - t0:.0f} s)")
    base = section(ExtractParams, "extract", load_params(ROOT / "params.yaml"))
    files = sorted(args.corpus.glob("*.pdf"))
    rows = []
    for w in args.workers:
        wall, sha, err, cpu = run(args.corpus, ExtractParams(**{**base.__dict__, "workers": w}))
        rows.append({"workers": w, "table_max_drawings": TABLE_MAX_DRAWINGS, "wall_s": round(wall, 2),
                     "parse_cpu_s": round(sum(cpu), 2), "idle_machine_estimate_s": round(list_schedule(cpu, w), 2),
                     "sha256": sha, "stderr_sha256": hashlib.sha256(err.encode()).hexdigest()})
        print(f"workers={w}: {wall:.1f} s wall, {sum(cpu):.1f} CPU s parsing")
    unbounded_wall, unbounded_sha, unbounded_cpu = 0.0, "", [0.0]
    if not args.no_unbounded:
        pdf_mod.TABLE_MAX_DRAWINGS = 0  # the table search on every page (one worker: this process)
        try:
            unbounded_wall, unbounded_sha, _, unbounded_cpu = run(
                args.corpus, ExtractParams(**{**base.__dict__, "workers": 1}))
        finally:
            pdf_mod.TABLE_MAX_DRAWINGS = TABLE_MAX_DRAWINGS
    manuals = [f for f in files if f.name.startswith("manual")]
    profile = page_profile(manuals[0]) if manuals else {}
    result = {
        "pdfs": len(files), "pages": sum(pymupdf.open(str(f)).page_count for f in files),
        "cpu_cores": os.cpu_count(), "load_avg_1min_at_end": round(os.getloadavg()[0], 2),
        "runs": rows, "identical_artifacts": len({r["sha256"] for r in rows}) == 1,
        "identical_warnings": len({r["stderr_sha256"] for r in rows}) == 1,
        "unbounded_table_search_workers_1_s": round(unbounded_wall, 2),
        "unbounded_table_search_parse_cpu_s": round(sum(unbounded_cpu), 2),
        "unbounded_identical_artifacts": unbounded_sha == rows[0]["sha256"],
        "manual_page_profile": profile,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['pdfs']} PDFs, {result['pages']} pages")
    print("| workers | wall s (measured) | CPU s parsing | wall on idle cores (list schedule of per-file CPU) |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['workers']} | {r['wall_s']} | {r['parse_cpu_s']} | {r['idle_machine_estimate_s']} |")
    print(f"identical artifacts: {result['identical_artifacts']}, identical warnings: {result['identical_warnings']}")
    if not args.no_unbounded:
        print(f"workers=1 with the table search unbounded (table_max_drawings=0): {unbounded_wall:.1f} s wall, "
              f"{sum(unbounded_cpu):.1f} CPU s parsing")
    print(f"a manual page: {profile}")
    print(f"(1-min load average at the end: {result['load_avg_1min_at_end']} on {os.cpu_count()} cores)")
    print(f"written {OUT.relative_to(ROOT)}")
    return 0 if result["identical_artifacts"] and result["identical_warnings"] else 1


if __name__ == "__main__":
    sys.exit(main())
