"""Draw random corpus passages for writing a blind evaluation set (data/wattbot/blind_QA.csv).

Seeded and deterministic: the same seed over the same corpus gives the same passages.
Each draw picks a document uniformly at random, then a passage uniformly inside it, so
that no single (long) document dominates. Three kinds are drawn:

* prose  - a window of about 700 characters of running text, snapped to sentence starts;
* table  - a table caption ("Table 3: ...", "TABLE II") plus the lines after it (and a few
           lines before it, since PDF extraction often puts the cells above the caption);
* figure - a figure caption ("Figure 2: ...", "Fig. 4.") plus the first prose sentence
           that refers to that figure.

    python bench/draw_blind_passages.py --seed 20261205 --out /tmp/blind_passages.txt

The output is for the question writer only; keep it outside the repository.
"""
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "data" / "wattbot" / "corpus"

TABLE_CAPTION = re.compile(
    r"(?m)^[ \t]*(?:Table|TABLE)\s+([A-Z]?\d+|[IVX]+)\b(?:\s*[:.|]|\s*$|\s+[A-Z])")
TABLE_CAPTION_INLINE = re.compile(r"(?:Table|TABLE)\s+([A-Z]?\d+|[IVX]+)\s*:")
FIGURE_CAPTION = re.compile(
    r"(?m)^[ \t]*(?:Figure|FIGURE|Fig\.)\s*(\d+)\s*(?:[:.|]|\s+[A-Z])")


def load_docs(corpus: Path) -> dict[str, str]:
    docs = {}
    for p in sorted(corpus.glob("*.json")):
        d = json.loads(p.read_text(encoding="utf-8"))
        docs[d.get("document_id", p.stem)] = d.get("text", "")
    return docs


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def prose_window(text: str, pos: int, size: int = 700) -> tuple[int, str]:
    """A window of about `size` characters starting at the sentence start at or after pos."""
    m = re.compile(r"(?<=[.!?])\s+(?=[A-Z])").search(text, pos)
    start = m.end() if m and m.end() - pos < 400 else line_start(text, pos)
    end = min(len(text), start + size)
    m2 = re.compile(r"[.!?](?=\s)").search(text, end)
    if m2 and m2.end() - end < 300:
        end = m2.end()
    return start, text[start:end]


def table_captions(text: str) -> list[tuple[int, str]]:
    """(position, label) of each table caption; one per label (the first that looks like one)."""
    seen: dict[str, int] = {}
    for rx in (TABLE_CAPTION, TABLE_CAPTION_INLINE):
        for m in rx.finditer(text):
            label = m.group(1)
            prev = text[max(0, m.start() - 12):m.start()].lower()
            if re.search(r"(see|in|and|of|as|\()\s*$", prev):
                continue
            seen.setdefault(label, m.start())
    return sorted((pos, label) for label, pos in seen.items())


def figure_captions(text: str) -> list[tuple[int, str]]:
    seen: dict[str, int] = {}
    for m in FIGURE_CAPTION.finditer(text):
        seen.setdefault(m.group(1), m.start())
    return sorted((pos, label) for label, pos in seen.items())


def lines_around(text: str, pos: int, before: int, after: int) -> str:
    lines_before = text[:pos].split("\n")[-before - 1:-1] if before else []
    rest = text[pos:].split("\n")[: after + 1]
    block = ""
    if lines_before:
        block += "\n".join(lines_before) + "\n>>> "
    return block + "\n".join(rest)


def figure_mention(text: str, label: str, caption_pos: int) -> str:
    rx = re.compile(rf"(?:Figure|Fig\.)\s*{label}\b(?!\s*[:.]\s*[A-Z])")
    for m in rx.finditer(text):
        if abs(m.start() - caption_pos) < 5:
            continue
        s = max(text.rfind(". ", 0, m.start()) + 2, m.start() - 300)
        e = text.find(". ", m.end())
        e = len(text) if e < 0 else min(e + 1, m.end() + 400)
        return text[s:e]
    return ""


def draw_prose(rng: random.Random, docs: dict[str, str], n: int, used: set) -> list:
    """n prose windows: a document uniformly, then a character position uniformly in it."""
    ids = sorted(docs)
    out: list = []
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        doc = rng.choice(ids)
        text = docs[doc]
        if len(text) < 1000:
            continue
        start, passage = prose_window(text, rng.randrange(len(text) - 500))
        key = (doc, start // 700)
        if key in used:
            continue
        used.add(key)
        out.append(("prose", doc, start, passage))
    return out


def draw(docs: dict[str, str], seed: int, n_prose: int, n_table: int, n_figure: int,
         n_extra_prose: int = 0):
    rng = random.Random(seed)
    ids = sorted(docs)
    used: set[tuple[str, int]] = set()
    out = draw_prose(rng, docs, n_prose, used)
    for kind, finder, n, before, after in (
        ("table", table_captions, n_table, 8, 16),
        ("figure", figure_captions, n_figure, 0, 3),
    ):
        pools = {d: finder(docs[d]) for d in ids}
        pools = {d: p for d, p in pools.items() if p}
        taken: set[tuple[str, str]] = set()
        count = 0
        while count < n and any(len(p) > sum(1 for t in taken if t[0] == d)
                                for d, p in pools.items()):
            doc = rng.choice(sorted(pools))
            pos, label = rng.choice(pools[doc])
            if (doc, label) in taken:
                continue
            taken.add((doc, label))
            snippet = lines_around(docs[doc], pos, before, after)
            if kind == "figure":
                snippet += "\n--- prose mention ---\n" + figure_mention(docs[doc], label, pos)
            out.append((kind, doc, pos, f"[{kind} {label}]\n" + snippet))
            count += 1
    # a top-up of prose passages, drawn last from the same generator so that the passages
    # above stay the same whatever its size
    out += draw_prose(rng, docs, n_extra_prose, used)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--out", type=Path, default=Path("/tmp/blind_passages.txt"))
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--prose", type=int, default=170)
    ap.add_argument("--tables", type=int, default=75)
    ap.add_argument("--figures", type=int, default=35)
    ap.add_argument("--extra-prose", type=int, default=60,
                    help="prose passages drawn after the figures (numbered after them)")
    args = ap.parse_args()
    docs = load_docs(args.corpus)
    drawn = draw(docs, args.seed, args.prose, args.tables, args.figures, args.extra_prose)
    with open(args.out, "w", encoding="utf-8") as f:
        for i, (kind, doc, pos, text) in enumerate(drawn, 1):
            f.write(f"===== #{i:03d} {kind} doc={doc} pos={pos}\n{text}\n\n")
    counts = {k: sum(1 for d in drawn if d[0] == k) for k in ("prose", "table", "figure")}
    print(f"wrote {len(drawn)} passages to {args.out}: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
