"""One PDF of thousands of pages through the extract stage: peak RSS and CPU per page.

    nice -n 19 python bench/big_pdf.py                      # 2,000 pages from ../shared/financebench/corpus
    python bench/big_pdf.py --pages 500 --source tests/data/corpus2/corpus

Builds `--pages` pages by appending the source folder's PDFs (sorted by name, repeated as
needed) into one file with PyMuPDF, then runs `python -m stages.extract` in a throwaway
project whose corpus is that one file (this repository's params.yaml, `extract.workers` as
shipped): the largest single document a corpus may hold, where a per-document stage's
memory peaks. Writes pages, blocks, wall,
CPU s, CPU s/page and the stage's peak RSS to `--out` (default bench/results/big_pdf.json).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import polars as pl
import pymupdf
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.corpus2 import measure

SOURCE = ROOT.parent / "shared" / "financebench" / "corpus"


def build_pdf(source: Path, pages: int, out: Path) -> list[str]:
    """`pages` pages appended from the source PDFs in name order, repeated; the files used."""
    files = sorted(source.glob("*.pdf"))
    if not files:
        raise SystemExit(f"big_pdf: no PDF in {source}")
    big, used, i = pymupdf.open(), [], 0
    while big.page_count < pages:
        with pymupdf.open(files[i % len(files)]) as src:
            take = min(src.page_count, pages - big.page_count)
            big.insert_pdf(src, to_page=take - 1)
        used.append(files[i % len(files)].name)
        i += 1
    big.save(out, garbage=3, deflate=True)
    big.close()
    return used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--source", type=Path, default=SOURCE, help="folder of PDFs to take pages from")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "big_pdf.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="treerag-bigpdf-") as tmp:
        proj = Path(tmp)
        (proj / "data" / "corpus").mkdir(parents=True)
        pdf = proj / "data" / "corpus" / "big.pdf"
        used = build_pdf(args.source, args.pages, pdf)
        shutil.copytree(ROOT / "stages", proj / "stages", ignore=shutil.ignore_patterns("__pycache__"))
        params = yaml.safe_load((ROOT / "params.yaml").read_text())
        params["data"].update(corpus_dir="data/corpus", metadata="data/metadata.csv")
        (proj / "data" / "metadata.csv").write_text("id,type,title,year,citation,url\nbig,report,Big,2024,,\n")
        (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        costs = measure([sys.executable, "-m", "stages.extract"], proj, None, "big_pdf: extract")
        docs = pl.read_parquet(proj / "artifacts" / "extract" / "documents.parquet")
        blocks = pl.read_parquet(proj / "artifacts" / "extract" / "blocks.parquet")
        result = {"command": "python bench/big_pdf.py " + " ".join(sys.argv[1:]),
                  "pdf": {"pages": args.pages, "bytes": pdf.stat().st_size, "built_from": used},
                  "status": docs["status"].to_list(), "blocks": blocks.height,
                  "pages_with_blocks": blocks["page"].n_unique(),
                  **costs, "cpu_s_per_page": round(costs["cpu_s"] / args.pages, 4)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "pdf"}, indent=2))


if __name__ == "__main__":
    main()
