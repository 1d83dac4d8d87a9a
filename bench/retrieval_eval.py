"""Retrieval quality on labelled questions, no LLM: treerag vs two baselines.

  python bench/retrieval_eval.py                 # question alone (plan.n_queries: 1)
  python bench/retrieval_eval.py --plan artifacts/plan/queries.parquet   # with planner queries

Needs the built tree and index (`dvc repro index`). For each context budget it
reports gold-doc recall, evidence recall and mean context tokens for:
  treerag   the retrieve stage's retriever with params.yaml's retrieve section
  flat512   flat ~512-token chunks of each document, dense, same embedder
  bm25win   BM25 over ~500-character windows cut on sentence boundaries
Writes bench/results/retrieval[_plan].json and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.dataio import read_questions
from stages.core.embedder import EmbeddingCache, EmbedParams, embed_texts, make_embedder
from stages.core.keywords import KeywordIndex, tokenize
from stages.core.params import load_params, section
from stages.core.retrieval import RetrieveParams, count_tokens
from stages.core.retrieval_metrics import retrieval_metrics
from stages.core.retriever import Retriever

BUDGETS = (1000, 2000, 4000)


def budget_rows(qid: str, ranked: list[tuple[str, str]], budget: int, cpt: float) -> list[dict[str, object]]:
    """Take ranked (doc_id, text) units until the token budget is spent."""
    rows, used = [], 0
    for doc_id, text in ranked:
        n = count_tokens(text, cpt)
        if used + n > budget:
            break
        used += n
        rows.append({"question_id": qid, "doc_id": doc_id, "text": text, "n_tokens": n})
    return rows


def doc_sentences(nodes: pl.DataFrame) -> dict[str, list[str]]:
    """Non-reference sentences per document, in document order."""
    excl = pl.col("is_reference").fill_null(False) if "is_reference" in nodes.columns else pl.lit(False)
    s = nodes.filter((pl.col("level") == "sentence") & ~excl)
    return {d: g["text"].to_list() for (d,), g in s.group_by("doc_id", maintain_order=True)}


def windows(sents: list[str], min_chars: int) -> list[str]:
    """Consecutive sentences joined until a window holds at least `min_chars`."""
    out, cur = [], ""
    for s in sents:
        cur = f"{cur} {s}".strip()
        if len(cur) >= min_chars:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plan", help="queries.parquet from the plan stage (default: the question alone)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    params = load_params()
    rp = section(RetrieveParams, "retrieve", params)
    labels = read_questions(params["data"]["questions"])
    nodes = pl.read_parquet("artifacts/tree/nodes.parquet")
    cache = EmbeddingCache()
    embedder = make_embedder(section(EmbedParams, "embed", params))
    retriever = Retriever(Path("artifacts/index"), nodes, embedder, cache)
    queries = {r["id"]: [r["question"]] for r in labels.iter_rows(named=True)}
    if args.plan:
        plan = pl.read_parquet(args.plan).sort("question_id", "query_index")
        queries.update({q: g["query"].to_list() for (q,), g in plan.group_by("question_id")})

    sents = doc_sentences(nodes)
    flat = [(d, c) for d, ss in sents.items() for c in windows(ss, int(512 * rp.chars_per_token))]
    wins = [(d, w) for d, ss in sents.items() for w in windows(ss, 500)]
    flat_vecs, _ = embed_texts([c for _, c in flat], embedder, cache, desc="embed flat chunks")
    bm25 = KeywordIndex([tokenize(w) for _, w in wins])
    q_vecs, _ = embed_texts([r["question"] for r in labels.iter_rows(named=True)], embedder, cache, progress=False)

    results: dict[str, dict[int, dict[str, float]]] = {"treerag": {}, "flat512": {}, "bm25win": {}}
    for budget in BUDGETS:
        ours, fl, bw = [], [], []
        p = rp.scaled(budget / rp.max_context_tokens)  # depth and budget grow together, as in answer retries
        for qv, r in zip(q_vecs, labels.iter_rows(named=True)):
            qid = r["id"]
            units = retriever.retrieve(queries[qid], p)
            ours += [{"question_id": qid, "doc_id": u.doc_id, "text": u.text, "n_tokens": u.n_tokens} for u in units]
            order = np.argsort(-(flat_vecs @ qv))
            fl += budget_rows(qid, [flat[i] for i in order[:64]], budget, rp.chars_per_token)
            top = bm25.search(tokenize(" ".join(queries[qid])), 64)
            bw += budget_rows(qid, [wins[i] for i, _ in top], budget, rp.chars_per_token)
        schema = {"question_id": pl.String, "doc_id": pl.String, "text": pl.String, "n_tokens": pl.Int64}
        for name, rows in (("treerag", ours), ("flat512", fl), ("bm25win", bw)):
            results[name][budget] = retrieval_metrics(labels, pl.DataFrame(rows, schema=schema))
    cache.close()

    print(f"| method | {' | '.join(f'{b} tokens' for b in BUDGETS)} |")
    print(f"|---|{'---|' * len(BUDGETS)}")
    for name, by_budget in results.items():
        cells = [f"{m['gold_doc_recall']:.2f} / {m['evidence_recall']:.2f} ({m['mean_context_tokens']:.0f} tok)"
                 for m in by_budget.values()]
        print(f"| {name} | {' | '.join(cells)} |")
    out = Path(args.out or f"bench/results/retrieval{'_plan' if args.plan else ''}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"queries": "planner" if args.plan else "question", "results": results}, indent=2))


if __name__ == "__main__":
    main()
