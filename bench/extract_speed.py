"""extract CPU seconds per page on table-heavy PDFs, before and after the one-extraction cell reader.

    python bench/extract_speed.py                  # fetch/build the PDFs once, then before + after
    python bench/extract_speed.py --no-before      # after only (the old reader costs minutes)
    python bench/extract_speed.py --gen-pages 200

Two corpora, both under bench/data/ (git-ignored, made by this script):
- generated: `--gen-pages` pages like a financial statement (PyMuPDF): a heading, a
  paragraph, and three ruled tables per page (12 rows x 5 columns, multi-word labels,
  "$ 1,234.5" and "(567)" numbers), plus a few pages of plain text;
- real: PDFs from Debian documentation packages (`apt-get download`, `dpkg-deb -x`):
  manuals and guides with ruled tables (ReportLab's user guide, xcolor, pdfpages,
  microtype, booktabs, a beamer talk) and one with almost none (R-intro).

Each corpus runs through the real extract code (extract_corpus, extract.workers=1, so
every file's CPU time is time.process_time in this process) twice: "after" is the code
as it is; "before" swaps in the reader and table search kept below as they were
(get_textbox per cell, find_tables on every page). The artifacts (documents, blocks,
images frames and PNGs) of the two runs are compared by sha256, and every table cell of
the real PDFs is compared one by one (old get_textbox reading vs PageChars).
Results: bench/results/extract_speed.json.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pymupdf  # noqa: E402

from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.extract import loaders as corpus_loaders  # noqa: E402
from stages.core.extract import pdf as pdf_mod  # noqa: E402
from stages.core.extract.loaders import ExtractParams, extract_corpus, to_frames  # noqa: E402

DATA = ROOT / "bench" / "data" / "extract_speed"
OUT = ROOT / "bench" / "results" / "extract_speed.json"
PACKAGES = ["python-reportlab-doc", "texlive-latex-recommended-doc", "r-doc-pdf"]
REAL = ["reportlab-userguide.pdf", "xcolor.pdf", "pdfpages.pdf", "microtype.pdf", "booktabs.pdf",
        "beamerexample-conference-talk.pdf", "R-intro.pdf"]
LABELS = ("Net revenues", "Cost of sales", "Research and development", "Selling, general and administrative",
          "Operating income", "Interest expense, net", "Income before income taxes", "Provision for income taxes",
          "Net income", "Cash and cash equivalents", "Accounts receivable, net", "Total current assets",
          "Property and equipment, net", "Goodwill and intangible assets", "Total liabilities")
PROSE = ("The following table presents our consolidated results of operations for the periods indicated, "
         "in millions except per share amounts, as reported in accordance with generally accepted accounting "
         "principles in the United States.").split()


# ---- the code as it was before (kept here for comparison only) ---------------------------------------------
def old_read_table_cells(page: pymupdf.Page, table, chars=None) -> list[list[str]]:  # noqa: ANN001
    """Cell text via get_textbox per cell rect: one text page per cell."""
    out = []
    for row in table.rows:
        out.append([pdf_mod._clean_cell(page.get_textbox(pymupdf.Rect(c))) if c is not None else ""
                    for c in row.cells])
    out = [r for r in out if any(r)]
    if not out:
        return out
    width = max(len(r) for r in out)
    out = [r + [""] * (width - len(r)) for r in out]
    keep = [j for j in range(width) if any(r[j] for r in out)]
    return [[r[j] for j in keep] for r in out]


def old_find_page_tables(page: pymupdf.Page, max_drawings: int, use_layout: bool = False):  # noqa: ANN201
    if max_drawings and len(page.get_cdrawings()) > max_drawings:
        return [], True
    try:
        return list(page.find_tables(use_layout=use_layout).tables), False
    except Exception:
        return [], False


# ---- corpora -------------------------------------------------------------------------------------------------
def _money(rnd: random.Random) -> str:
    v = rnd.uniform(-5000, 50000)
    s = f"{abs(v):,.1f}"
    return f"({s})" if v < 0 else f"$ {s}"


def make_financial(path: Path, pages: int, seed: int) -> None:
    """Pages like a 10-K's statements: three ruled 12x5 tables per page, prose between."""
    rnd = random.Random(seed)
    doc = pymupdf.open()
    for pno in range(pages):
        page = doc.new_page()
        page.insert_text((54, 48), f"Item {pno % 9 + 1}. Consolidated Statements, part {pno + 1}", fontsize=12,
                         fontname="hebo")
        if pno % 10 == 9:  # a page of plain text: no drawings, no table search
            for i in range(50):
                page.insert_text((54, 72 + 13 * i), " ".join(rnd.choice(PROSE) for _ in range(14)), fontsize=9)
            continue
        y = 62.0
        for _t in range(3):
            page.insert_text((54, y + 10), " ".join(rnd.choice(PROSE) for _ in range(16)), fontsize=8)
            xs = [54, 250, 330, 410, 490, 560]
            ys = [y + 18 + 16 * r for r in range(13)]
            for yy in ys:
                page.draw_line((xs[0], yy), (xs[-1], yy), width=0.5)
            for xx in xs:
                page.draw_line((xx, ys[0]), (xx, ys[-1]), width=0.5)
            head = ["(in millions)", "Fiscal 2024", "Fiscal 2023", "Change $", "Change %"]
            for r in range(12):
                row = head if r == 0 else [rnd.choice(LABELS)] + [_money(rnd) for _ in range(3)] + [
                    f"{rnd.uniform(-40, 40):.1f} %"]
                for c, cell in enumerate(row):
                    page.insert_text((xs[c] + 3, ys[r] + 11.5), cell, fontsize=7.5)
            y = ys[-1] + 8
    doc.save(str(path))


def build_generated(folder: Path, pages: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"financial_{pages}p.pdf"
    if not path.exists():
        make_financial(path, pages, seed=pages)
    return [path]


def fetch_real(folder: Path) -> list[Path]:
    """The REAL PDFs, from the Debian packages (apt-get download + dpkg-deb -x), once."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = [n for n in REAL if not (folder / n).exists()]
    if missing:
        debs = DATA / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True)
        tree = DATA / "pkgs"
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
        for name in missing:
            found = sorted(p for p in tree.rglob(name) if p.is_file() and p.stat().st_size > 0)
            if not found:
                raise SystemExit(f"{name} is in none of {PACKAGES}")
            shutil.copy(found[0], folder / name)
    return [folder / n for n in REAL]


# ---- runs ----------------------------------------------------------------------------------------------------
def run_extract(corpus: Path, params: ExtractParams, before: bool) -> tuple[dict[str, float], str]:
    """({file: CPU s}, sha256 of the artifacts) of one extract, the old code swapped in if `before`."""
    cpu: dict[str, float] = {}
    real_load_all = corpus_loaders.load_all
    saved = pdf_mod.read_table_cells, pdf_mod.find_page_tables

    def recording_load_all(loader, jobs, *a, **k):  # type: ignore[no-untyped-def]
        outcomes = real_load_all(loader, jobs, *a, **k)
        cpu.update({j.path.name: o.cpu_s for j, o in zip(jobs, outcomes)})
        return outcomes

    corpus_loaders.load_all = recording_load_all
    if before:
        pdf_mod.read_table_cells, pdf_mod.find_page_tables = old_read_table_cells, old_find_page_tables
    try:
        with tempfile.TemporaryDirectory() as tmp:
            images = Path(tmp) / "images"
            images.mkdir()
            err, real_err = io.StringIO(), sys.stderr
            sys.stderr = err
            try:
                result = extract_corpus(corpus, params, images, progress=False)
            finally:
                sys.stderr = real_err
            h = hashlib.sha256()
            for df in to_frames(result):
                if "path" in df.columns:
                    df = df.with_columns(df["path"].str.replace(tmp, "TMP", literal=True))
                buf = io.BytesIO()
                df.write_parquet(buf)
                h.update(buf.getvalue())
            for p in sorted(images.iterdir()):
                h.update(p.name.encode() + p.read_bytes())
    finally:
        corpus_loaders.load_all = real_load_all
        pdf_mod.read_table_cells, pdf_mod.find_page_tables = saved
    return cpu, h.hexdigest()


def compare_cells(files: list[Path]) -> dict[str, int]:
    """Every find_tables cell of `files`: old get_textbox text vs PageChars text, raw and cleaned."""
    n = raw_diff = clean_diff = tables = 0
    for f in files:
        doc = pymupdf.open(str(f))
        for page in doc:
            ts, _ = old_find_page_tables(page, 2000)
            if not ts:
                continue
            chars = pdf_mod.PageChars(page)
            for t in ts:
                tables += 1
                for row in t.rows:
                    for c in row.cells:
                        if c is None:
                            continue
                        a, b = page.get_textbox(pymupdf.Rect(c)), chars.textbox(c)
                        n += 1
                        raw_diff += a != b
                        clean_diff += pdf_mod._clean_cell(a) != pdf_mod._clean_cell(b)
    return {"tables": tables, "cells": n, "cells_differing_raw": raw_diff, "cells_differing_cleaned": clean_diff}


def page_stats(files: list[Path]) -> dict[str, int]:
    pages = no_drawings = 0
    for f in files:
        doc = pymupdf.open(str(f))
        for page in doc:
            pages += 1
            no_drawings += not page.get_cdrawings()
    return {"pages": pages, "pages_without_drawings": no_drawings}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen-pages", type=int, default=60)
    ap.add_argument("--no-before", action="store_true", help="skip the runs with the old code")
    ap.add_argument("--no-real", action="store_true", help="generated PDFs only (no apt-get)")
    args = ap.parse_args(argv)
    base = section(ExtractParams, "extract", load_params(ROOT / "params.yaml"))
    params = ExtractParams(**{**base.__dict__, "workers": 1})
    corpora = {"generated": build_generated(DATA / "generated", args.gen_pages)}
    if not args.no_real:
        corpora["real"] = fetch_real(DATA / "real")
    result: dict = {"cpu_cores": os.cpu_count(), "extract_params": {k: v for k, v in params.__dict__.items()},
                    "target_cpu_s_per_page": 0.1, "corpora": {}}
    for name, files in corpora.items():
        corpus = files[0].parent
        stats = page_stats(files)
        entry: dict = {**stats, "files": {}}
        runs = {"after": run_extract(corpus, params, before=False)}
        if not args.no_before:
            runs["before"] = run_extract(corpus, params, before=True)
        for f in files:
            n = pymupdf.open(str(f)).page_count
            entry["files"][f.name] = {"pages": n, **{
                f"{k}_cpu_s_per_page": round(cpu[f.name] / n, 4) for k, (cpu, _) in runs.items()}}
        for k, (cpu, sha) in runs.items():
            entry[f"{k}_cpu_s"] = round(sum(cpu.values()), 2)
            entry[f"{k}_cpu_s_per_page"] = round(sum(cpu.values()) / stats["pages"], 4)
            entry[f"{k}_sha256"] = sha
        if "before" in runs:
            entry["identical_artifacts"] = runs["before"][1] == runs["after"][1]
            entry["speedup"] = round(entry["before_cpu_s"] / max(entry["after_cpu_s"], 1e-9), 1)
        entry["cell_comparison"] = compare_cells(files) if name == "real" else None
        result["corpora"][name] = entry
        print(f"{name}: {stats['pages']} pages ({stats['pages_without_drawings']} without drawings), "
              + ", ".join(f"{k} {entry[f'{k}_cpu_s']} CPU s = {entry[f'{k}_cpu_s_per_page']} CPU s/page"
                          for k in runs)
              + (f", identical artifacts: {entry['identical_artifacts']}" if "before" in runs else ""))
        for fname, row in entry["files"].items():
            print(f"  {fname}: {row}")
        if entry["cell_comparison"]:
            print(f"  cells, old get_textbox vs PageChars: {entry['cell_comparison']}")
    result["load_avg_1min_at_end"] = round(os.getloadavg()[0], 2)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {OUT.relative_to(ROOT)}")
    ok = all(e.get("identical_artifacts", True) for e in result["corpora"].values()) and all(
        not e["cell_comparison"] or e["cell_comparison"]["cells_differing_raw"] == 0
        for e in result["corpora"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
