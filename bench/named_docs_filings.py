"""Questions that name their document, on generated filings: many companies, three filings each,
the same boilerplate in every filing, numbers that differ only by company and period.

  python bench/named_docs_filings.py                 # 12 companies x 3 filings, every named_docs mode
  python bench/named_docs_filings.py --companies 4   # smaller

The situation of issue 26's real filings, generated so it runs anywhere: every question names
the company and the fiscal period ("What was Corvid Aerospace's net revenue in fiscal 2024?"),
and the paragraph that answers ("Net revenue for fiscal 2024 was $612 million ...") does not
name the company, as a filing's financial discussion rarely does; the risk-factor and
forward-looking boilerplate, which does name it, is the same in every filing. metadata.csv
carries `company`, `fiscal_period` and `form_type` columns, the titles are only "Annual report" /
"Quarterly report", and each filing's first page states company, form and period.

The real index (stages/core/index: LanceDB, BM25, document cards), the real embedder of
params.yaml and the real retriever; per `retrieve.named_docs` mode it reports gold-document
recall (the gold filing is in the context), gold-page recall (the page that answers is) and
answer recall (the gold number is in the context) at the default budget, and how many
questions named their filing. Writes bench/results/named_docs_filings.json.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, embed_texts, make_embedder  # noqa: E402
from stages.core.index.store import Index, IndexParams, build_index  # noqa: E402
from stages.core.retrieve.params import RetrieveParams  # noqa: E402
from stages.core.retrieve.search import Retriever  # noqa: E402
from stages.core.tree.navigate import TreeView  # noqa: E402

FIRST = ["Corvid", "Halden", "Mirren", "Quarry", "Tessel", "Ostrava", "Bramble", "Kestrel", "Lumen", "Pallas",
         "Sorrel", "Vantor", "Wexford", "Yarrow", "Zephyr", "Arbor"]
SECOND = ["Aerospace", "Foods", "Semiconductor", "Logistics", "Pharmaceuticals", "Energy", "Retail", "Networks"]
FILINGS = (("10-K", "FY2023", "fiscal 2023", "Annual report"), ("10-K", "FY2024", "fiscal 2024", "Annual report"),
           ("10-Q", "Q3 FY2024", "the third quarter of fiscal 2024", "Quarterly report"))
BOILERPLATE = (
    "{c} is subject to risks related to competition, supply chain disruption and changes in customer demand, "
    "and its net revenue, gross margin and operating income may fluctuate from period to period.",
    "This report contains forward-looking statements about {c}'s net revenue, gross margin, research and "
    "development expenses, capital expenditures and employees, which involve risks and uncertainties.",
    "{c}'s results of operations for any quarter or fiscal year are not necessarily indicative of the results "
    "for any future period, and its number of full-time employees may change.",
    "The following discussion of {c}'s net revenue, gross margin and operating expenses should be read together "
    "with the consolidated financial statements and the notes to them.",
)
FACTS = (  # (question, fact paragraph), the value in {v}
    ("What was {c}'s net revenue in {p}?", "Net revenue for {p} was ${v} million, driven by higher unit volumes."),
    ("What gross margin did {c} report for {p}?", "Gross margin for {p} was {v} percent of net revenue."),
    ("How much did {c} spend on research and development in {p}?",
     "Research and development expenses for {p} were ${v} million."),
    ("How many full-time employees did {c} have at the end of {p}?",
     "At the end of {p} the workforce was {v} full-time employees."),
    ("What were {c}'s capital expenditures in {p}?", "Capital expenditures in {p} totaled ${v} million."),
)


def corpus(n_companies: int, seed: int = 26) -> tuple[pl.DataFrame, pl.DataFrame, list[dict[str, object]]]:
    """(nodes, metadata, questions) of the generated filings."""
    rng = random.Random(seed)
    names = [f"{FIRST[i % len(FIRST)]} {SECOND[(i * 3) % len(SECOND)]}" for i in range(n_companies)]
    node_rows: list[tuple[object, ...]] = []
    meta_rows, questions = [], []
    for c in names:
        for form, period, words, title in FILINGS:
            doc = f"{c.split()[0].lower()}-{form.lower()}-{period.replace(' ', '').lower()}"
            meta_rows.append({"id": doc, "type": "filing", "title": title, "year": period[-4:], "citation": "",
                              "url": "", "company": f"{c} Inc.", "fiscal_period": period, "form_type": form})
            paras = [(f"{c.upper()} INC. FORM {form} {title} for {words}", True)]
            facts = []
            for q, fact in FACTS:
                pct = "percent" in fact
                v = f"{rng.randint(20, 70)}.{rng.randint(1, 9)}" if pct else str(rng.randint(120, 990))
                facts.append((q.format(c=c, p=words), fact.format(p=words, v=v), v))
            body = [b.format(c=c) for b in BOILERPLATE] + [f for _, f, _ in facts]
            rng.shuffle(body)
            paras += [(t, False) for t in body]
            node_rows.append((doc, None, "document", doc, title, 0, 1, len(paras), False))
            node_rows.append((f"{doc}:sec0", doc, "section", doc, "", 0, 1, len(paras), False))
            for j, (text, front) in enumerate(paras):
                pid = f"{doc}:sec0:p{j}"
                node_rows += [(pid, f"{doc}:sec0", "paragraph", doc, text, j, j + 1, j + 1, front),
                              (f"{pid}:s0", pid, "sentence", doc, text, 0, j + 1, j + 1, front)]
            for q, fact, v in facts:
                questions.append({"question": q, "doc": doc, "page": 1 + paras.index((fact, False)), "value": v})
    nodes = pl.DataFrame(node_rows, orient="row", schema=[
        "node_id", "parent_id", "level", "doc_id", "text", "ordinal", "page", "page_end", "is_front_matter"],
    ).with_columns(pl.lit(None, dtype=pl.String).alias("attachment_type"), pl.lit(False).alias("is_reference"),
                   pl.lit(None, dtype=pl.String).alias("title"))
    return nodes, pl.DataFrame(meta_rows), questions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--companies", type=int, default=12)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "named_docs_filings.json"))
    args = ap.parse_args()
    params = load_params(ROOT / "params.yaml")
    rp = section(RetrieveParams, "retrieve", params)
    nodes, meta, questions = corpus(args.companies)
    embedder = make_embedder(section(EmbedParams, "embed", params))
    cache = EmbeddingCache()
    searchable = nodes.filter(pl.col("level").is_in(["paragraph", "sentence"]))
    vecs, _ = embed_texts(searchable["text"].to_list(), embedder, cache, desc="embed filings")
    vectors = searchable.select("node_id", "level", "doc_id").with_columns(
        pl.Series("vector", vecs, dtype=pl.Array(pl.Float32, embedder.dim)))
    report: dict[str, object] = {"companies": args.companies, "filings": meta.height, "questions": len(questions),
                                 "budget_tokens": rp.max_context_tokens, "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        build_index(nodes, vectors, meta, Path(tmp), section(IndexParams, "index", params), embedder.name)
        r = Retriever.__new__(Retriever)
        r.index, r.tree, r.embedder, r.cache = Index(Path(tmp)), TreeView(nodes), embedder, cache
        r.prepare([q["question"] for q in questions])  # type: ignore[misc]
        named = [r.index.named_docs(str(q["question"])) for q in questions]
        report["named_exactly_gold"] = sum([d.doc_id for d in n] == [q["doc"]] for n, q in zip(named, questions))
        report["named_with_gold"] = sum(q["doc"] in {d.doc_id for d in n} for n, q in zip(named, questions))
        print(f"{meta.height} filings of {args.companies} companies, {len(questions)} questions; "
              f"named exactly the gold filing: {report['named_exactly_gold']}, gold among named: "
              f"{report['named_with_gold']}")
        budget = rp.max_context_tokens
        print(f"| named_docs | gold-doc recall | gold-page recall | answer recall (at {budget} tokens) |")
        print("|---|---|---|---|")
        for mode in ("none", "prior"):
            p = replace(rp, named_docs=mode)
            doc = page = value = 0
            for q in questions:
                units = r.retrieve([str(q["question"])], p)
                gold = [u for u in units if u.doc_id == q["doc"]]
                doc += bool(gold)
                page += any(u.page == q["page"] for u in gold)
                value += any(str(q["value"]) in u.text for u in gold)
            n = len(questions)
            m = {"gold_doc_recall": round(doc / n, 4), "gold_page_recall": round(page / n, 4),
                 "answer_recall": round(value / n, 4)}
            report["modes"][mode] = m  # type: ignore[index]
            print(f"| {mode} | {m['gold_doc_recall']:.3f} | {m['gold_page_recall']:.3f} | {m['answer_recall']:.3f} |")
    cache.close()
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
