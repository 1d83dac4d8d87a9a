"""Draw table cells at random, for writing held-out table questions that no rule was fitted on.

    python bench/sample_table_cells.py --n 24 --seed 20261204 --cell-seed 7 > /tmp/tables.txt
    python bench/sample_table_cells.py --n 24 --seed 42 --cell-seed 8 --skip-seed 20261204 --skip-docs dodge2022
    python bench/sample_table_cells.py --n 24 --seed 7 --skip-questions data/wattbot/heldout_tables_QA.csv

Dev questions read while writing rules stop measuring those rules. This picks tables from the
corpus's own text (every line that starts a "Table N" / "TABLE IV" caption, not treerag's parse,
so tables the tree misses are drawn too) and, for each, a row and a column position as fractions
(row = floor(rowpick x data rows), column = floor(colpick x value columns)). It prints each
table's raw text around its caption; a person writes one question per drawn cell, in the labelled
set's style, before looking at any answer. `--skip-questions` leaves out the tables a labelled
file already asks about, so a new draw adds new tables. data/wattbot/heldout_tables_QA.csv was written this way
(docs/reader.md, "Held-out table questions").
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTION = re.compile(r"(?m)^(T ?able|TABLE)\s+([A-Z]?\d+|[IVX]+)\b[:.]?")
# "Table 2 shows ...": a sentence about a table, not its caption
MENTION = re.compile(r"(?:T ?able|TABLE)\s+\S+\s+"
                     r"(shows|lists|presents|summarizes|reports|gives|compares|in|and|of|for|we)\b")


def captions(corpus: Path) -> list[tuple[str, str, int]]:
    """(document id, table number, offset of its caption in the text), once per table."""
    out = []
    for f in sorted(corpus.glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        text, seen = d["text"], set()
        for m in CAPTION.finditer(text):
            line = text[m.start():text.find("\n", m.start())]
            if m.group(2) in seen or MENTION.match(line):
                continue
            seen.add(m.group(2))
            out.append((d["document_id"], m.group(2), m.start()))
    return out


def asked_tables(path: Path) -> set[tuple[str, str]]:
    """(document id, table number) of each question in a labelled CSV whose explanation names its table."""
    out = set()
    with path.open(encoding="utf-8-sig", newline="") as f:
        for row in csv.DictReader(f):
            m = re.match(r"\s*(?:T ?able|TABLE)\s+(\S+)", row.get("explanation") or "")
            docs = re.findall(r"[A-Za-z]+\d{4}[a-z]?", row.get("ref_id") or "")
            if m and docs:
                out.add((docs[0], m.group(1)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT / "data" / "wattbot" / "corpus")
    ap.add_argument("--n", type=int, default=24, help="tables to draw")
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--skip-seed", type=int, action="append", default=[],
                    help="leave out the tables an earlier draw (of the same --n) took")
    ap.add_argument("--skip-questions", type=Path, action="append", default=[],
                    help="a labelled CSV whose questions' tables are not drawn again (ref_id + 'Table N' explanation)")
    ap.add_argument("--skip-docs", nargs="*", default=[], help="documents whose tables cannot be read reliably")
    ap.add_argument("--cell-seed", type=int, default=None,
                    help="seed of the row and column picks (default: --seed + 1)")
    ap.add_argument("--chars", type=int, default=1300, help="raw text shown after each caption")
    args = ap.parse_args(argv)
    caps = captions(args.corpus)
    taken = {c for s in args.skip_seed for c in random.Random(s).sample(caps, args.n)}
    asked = {t for path in args.skip_questions for t in asked_tables(path)}
    pool = [c for c in caps if c not in taken and c[:2] not in asked and c[0] not in args.skip_docs]
    if len(pool) < args.n:
        print(f"only {len(pool)} tables left to draw from, asked for {args.n}", file=sys.stderr)
        return 2
    picks = random.Random(args.seed).sample(pool, args.n)
    cells = random.Random(args.seed + 1 if args.cell_seed is None else args.cell_seed)
    texts = {doc: json.loads((args.corpus / f"{doc}.json").read_text(encoding="utf-8"))["text"]
             for doc in {doc for doc, _, _ in picks}}  # each document read once
    for i, (doc, num, pos) in enumerate(picks):
        text = texts[doc]
        print(f"#### {i} {doc} Table {num}  rowpick={cells.random():.2f} colpick={cells.random():.2f}")
        print(text[max(0, pos - 900):pos + args.chars])
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
