"""extract CPU seconds per page on annual-report filings: find_tables as PyMuPDF ships it, vs ours.

    nice -n 19 python bench/extract_filings.py                 # 5 filings + tests/data/corpus2
    nice -n 19 python bench/extract_filings.py --filings 10    # the 10 filings of the reported numbers
    nice -n 19 python bench/extract_filings.py --filings 0 --no-before --no-corpus2   # every filing, ours only

The filings are FinanceBench's (`--data`, default ../shared/financebench next to the
repository; never copied into git): `--filings N` takes N spread evenly over the sorted
file names (0 = all). Each corpus goes through the real extract code (extract_corpus,
extract.workers=1, so time.process_time in this process is all of its CPU) three times:
"before" with find_tables run on every page with drawings and building its character list
itself (pymupdf.table.make_chars), "chars" with our character list (table_chars.py) on every
such page, "after" as the code is (also no table search where the drawings make no vertical
edge: table_rules.py). All write the stage's artifacts (documents, blocks, images frames and
PNGs) to the same folder, and their sha256 must match.
Results: bench/results/extract_filings.json.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import stages.core.extract.pdf as pdf_mod
from stages.core.common.artifacts import write_parquet
from stages.core.extract.loaders import ExtractParams, extract_corpus, to_frames

DATA = ROOT.parent / "shared" / "financebench"
CORPUS2 = ROOT / "tests" / "data" / "corpus2" / "corpus"


def artifacts_sha(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(out)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def run_once(corpus: Path, out: Path, chars: bool = True, rules: bool = True) -> dict[str, object]:
    """One extraction into `out` (emptied first): CPU s, pages, artifacts sha256. ``chars``: our
    character list for find_tables; ``rules``: no table search where no vertical edge can be."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "images").mkdir(parents=True)
    saved = pdf_mod.fast_table_chars, pdf_mod.may_hold_ruled_table
    if not chars:
        pdf_mod.fast_table_chars = contextlib.nullcontext  # find_tables as PyMuPDF ships it
    if not rules:
        pdf_mod.may_hold_ruled_table = lambda rotation, paths: True
    try:
        t = time.process_time()
        result = extract_corpus(corpus, ExtractParams(workers=1), out / "images", progress=False)
        cpu = time.process_time() - t
    finally:
        pdf_mod.fast_table_chars, pdf_mod.may_hold_ruled_table = saved
    documents, blocks, images = to_frames(result)
    for name, df in (("documents", documents), ("blocks", blocks), ("images", images)):
        write_parquet(df, out / f"{name}.parquet")
    pages = int(documents["n_pages"].sum())
    return {"pages": pages, "cpu_s": round(cpu, 2), "cpu_s_per_page": round(cpu / pages, 4),
            "sha256": artifacts_sha(out)}


def sample_corpus(data: Path, n: int, tmp: Path) -> tuple[Path, list[str]]:
    """N filings spread over the sorted names, hard-linked into `tmp` (0 = all)."""
    files = sorted((data / "corpus").glob("*.pdf"))
    if n:
        files = [files[round(i * (len(files) - 1) / max(n - 1, 1))] for i in range(n)]
    tmp.mkdir(parents=True, exist_ok=True)
    for f in files:
        try:
            os.link(f, tmp / f.name)
        except OSError:
            shutil.copy2(f, tmp / f.name)
    return tmp, [f.stem for f in files]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--filings", type=int, default=5, help="filings in the sample; 0 = all")
    ap.add_argument("--no-corpus2", action="store_true")
    ap.add_argument("--no-before", action="store_true", help="the code as it is only (no comparison)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "extract_filings.json")
    args = ap.parse_args()
    res: dict[str, object] = {"command": "python bench/extract_filings.py " + " ".join(sys.argv[1:]),
                              "cpu_cores": os.cpu_count(), "target_cpu_s_per_page": 0.1, "corpora": {}}
    with tempfile.TemporaryDirectory() as td:
        corpora = []
        if args.filings >= 0 and args.data.exists():
            corpus, names = sample_corpus(args.data, args.filings, Path(td) / "filings")
            corpora.append(("filings", corpus, names))
        if not args.no_corpus2:
            corpora.append(("corpus2", CORPUS2, sorted(p.stem for p in CORPUS2.glob("*.pdf"))))
        for label, corpus, names in corpora:
            after = run_once(corpus, Path(td) / "out")
            row: dict[str, object] = {"files": names, "after": after}
            if not args.no_before:
                before = run_once(corpus, Path(td) / "out", chars=False, rules=False)
                chars = run_once(corpus, Path(td) / "out", rules=False)
                row.update(before=before, chars=chars,
                           identical_artifacts=before["sha256"] == chars["sha256"] == after["sha256"],
                           speedup=round(float(before["cpu_s"]) / max(float(after["cpu_s"]), 1e-9), 2),
                           speedup_of_rules=round(float(chars["cpu_s"]) / max(float(after["cpu_s"]), 1e-9), 2))
            res["corpora"][label] = row  # type: ignore[index]
            print(label, json.dumps({k: v for k, v in row.items() if k != "files"}), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
