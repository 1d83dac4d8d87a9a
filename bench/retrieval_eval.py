"""Retrieval quality on labelled questions, no LLM: treerag vs two baselines.

  python bench/retrieval_eval.py                       # dev_QA and train_QA, question alone (plan.n_queries: 1)
  python bench/retrieval_eval.py --sets dev            # one set
  python bench/retrieval_eval.py --plan artifacts/plan/queries.parquet --sets train   # with planner queries
  python bench/retrieval_eval.py -S retrieve.named_docs=prior --out /tmp/x.json  # a retrieve param changed
  python bench/retrieval_eval.py --artifacts /tmp/c2/artifacts --sets tests/data/corpus2/questions.csv  # another corpus

Needs the built tree and index (`dvc repro index`). For each question set and context
budget it reports gold-doc recall, evidence recall and mean context tokens for:
  treerag   the retrieve stage's retriever with params.yaml's retrieve section
  flat512   flat ~512-token chunks of each document, dense, same embedder
  bm25win   BM25 over ~500-character windows cut on sentence boundaries
Also: treerag's retrieval latency per question, evidence recall on the questions whose
evidence is only in a figure (reported apart), and every treerag miss at the default
budget with its cause (table | vocabulary | named_paper | figure | other), see miss_cause.
Naming: how many questions name a document (stages/core/index/cards.py) and whether the gold
document is among those named; with a `gold_page` column (tests/data/corpus2), gold-page recall:
a context unit of a gold document spans the gold page.
Writes bench/results/retrieval[_plan].json and prints Markdown tables.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.answer_eval import apply_overrides  # noqa: E402
from stages.core.common.dataio import read_questions  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.common.values import is_blank, ref_id_set  # noqa: E402
from stages.core.embed.embedder import (  # noqa: E402
    EmbeddingCache,
    EmbedParams,
    embed_texts,
    make_embedder,
)
from stages.core.index.keywords import KeywordIndex, tokenize, words  # noqa: E402
from stages.core.retrieve.metrics import evidence_found, retrieval_metrics  # noqa: E402
from stages.core.retrieve.params import RetrieveParams  # noqa: E402
from stages.core.retrieve.units import CHARS_PER_TOKEN, count_tokens  # noqa: E402
from stages.core.retrieve.search import Retriever  # noqa: E402

BUDGETS = (500, 1000, 2000)
SETS = {"dev": ROOT / "data" / "wattbot" / "dev_QA.csv", "train": ROOT / "data" / "wattbot" / "train_QA.csv"}
SCHEMA = {"question_id": pl.String, "doc_id": pl.String, "text": pl.String, "n_tokens": pl.Int64}
_FIGURE = re.compile(r"\bfig(?:ure)?\.?\s*\d", re.I)
_TABLE = re.compile(r"\btable\s+[A-Z]?\d", re.I)


def budget_rows(qid: str, ranked: list[tuple[str, str]], budget: int) -> list[dict[str, object]]:
    """Take ranked (doc_id, text) units until the token budget is spent."""
    rows, used = [], 0
    for doc_id, text in ranked:
        n = count_tokens(text)
        if used + n > budget:
            break
        used += n
        rows.append({"question_id": qid, "doc_id": doc_id, "text": text, "n_tokens": n})
    return rows


def doc_sentences(nodes: pl.DataFrame) -> dict[str, list[str]]:
    """Non-reference text per document in document order, as the baselines see it: sentences,
    and each table as its one markdown text (not treerag's row units with caption and header)."""
    excl = pl.col("is_reference").fill_null(False) if "is_reference" in nodes.columns else pl.lit(False)
    table_paras = nodes.filter(pl.col("attachment_type") == "table")["node_id"].to_list()
    keep = ((pl.col("level") == "sentence") & ~pl.col("parent_id").is_in(table_paras)) | pl.col("node_id").is_in(table_paras)
    s = nodes.filter(keep & ~excl)
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


def figure_only(row: dict[str, str], doc_text: dict[str, str]) -> bool:
    """Evidence the extracted text cannot hold: the label points at a figure and neither
    the value nor the quote is anywhere in the gold documents' text."""
    label = f"{row.get('explanation') or ''} {row.get('supporting_materials') or ''}"
    if not _FIGURE.search(label) or _TABLE.search(label):
        return False
    gold = ref_id_set(row.get("ref_id"))
    text = "\n".join(doc_text.get(d, "") for d in gold)
    return not evidence_found(row.get("answer_value") or "", row.get("supporting_materials") or "", text)


def miss_cause(row: dict[str, str], ctx_docs: set[str], doc_text: dict[str, str],
               doc_paras: dict[str, list[str]]) -> str:
    """Why a question's evidence is not in its context, in the issue's terms:
    figure (not in the extracted text at all), named_paper (gold document not retrieved),
    table (the label cites a table), vocabulary (the question shares under half of its
    content words with the gold paragraph that holds the evidence), else other (ranking)."""
    if figure_only(row, doc_text):
        return "figure"
    gold = ref_id_set(row.get("ref_id"))
    if not gold & ctx_docs:
        return "named_paper"
    label = f"{row.get('explanation') or ''} {row.get('supporting_materials') or ''}"
    if _TABLE.search(label):
        return "table"
    value, quote = row.get("answer_value") or "", row.get("supporting_materials") or ""
    paras = [p for d in gold for p in doc_paras.get(d, []) if evidence_found(value, quote, p)]
    q = set(words(row["question"]))
    if paras and q and max(len(q & set(words(p))) for p in paras) / len(q) < 0.5:
        return "vocabulary"
    return "other"


def page_spans(nodes: pl.DataFrame) -> dict[str, tuple[int, int]]:
    """node id -> (first page, last page)."""
    end = "page_end" if "page_end" in nodes.columns else "page"
    return {n: (int(a), int(b if b is not None else a)) for n, a, b in
            nodes.select("node_id", "page", end).iter_rows() if a is not None}


def gold_page_hit(row: dict[str, str], units: list, spans: dict[str, tuple[int, int]]) -> bool:
    """A unit of a gold document spans the row's gold_page."""
    gold, page = ref_id_set(row.get("ref_id")), int(row["gold_page"])
    return any(u.doc_id.lower() in gold and any(spans.get(n, (-1, -2))[0] <= page <= spans.get(n, (-1, -2))[1]
                                                 for n in u.node_ids) for u in units)


def naming_stats(labels: pl.DataFrame, retriever: Retriever, rp: RetrieveParams) -> dict[str, object]:
    """Questions that name a document, and whether the gold document is among the named."""
    n = named = right = 0
    wrong: list[dict[str, object]] = []
    for r in labels.iter_rows(named=True):
        gold = ref_id_set(r.get("ref_id"))
        if not gold:
            continue
        n += 1
        docs = retriever.index.named_docs(r["question"])
        if not docs:
            continue
        named += 1
        ids = {d.doc_id.lower() for d in docs}
        right += bool(ids & gold)
        if not ids & gold:
            wrong.append({"id": r["id"], "gold": sorted(gold), "named": [(d.doc_id, d.cues) for d in docs]})
    return {"with_gold_doc": n, "naming": named, "gold_named": right, "wrong": wrong}


def load_retriever(art: Path, params: dict) -> tuple[Retriever, pl.DataFrame, float]:
    """(retriever over art/index and art/tree with the params' embedder, the tree's nodes, seconds
    the index took to load); the caller closes ``retriever.cache``."""
    nodes = pl.read_parquet(art / "tree" / "nodes.parquet")
    embedder = make_embedder(section(EmbedParams, "embed", params))
    t0 = time.perf_counter()
    retriever = Retriever(art / "index", nodes, embedder, EmbeddingCache())
    return retriever, nodes, time.perf_counter() - t0


def eval_set(name: str, labels: pl.DataFrame, queries: dict[str, list[str]], retriever: Retriever,
             rp: RetrieveParams, nodes: pl.DataFrame, baselines: dict[str, object],
             budgets: tuple[int, ...], keep_units: bool = False) -> dict[str, object]:
    """Recalls of treerag (and the baselines, when given) at each budget, and the misses at the default
    budget; ``keep_units``: also the default budget's context units per question ("units")."""
    embedder, cache = retriever.embedder, retriever.cache
    q_vecs, _ = embed_texts([r["question"] for r in labels.iter_rows(named=True)], embedder, cache, progress=False)
    retriever.prepare([q for qs in queries.values() for q in qs])
    flat, flat_vecs, wins, bm25 = (baselines[k] for k in ("flat", "flat_vecs", "wins", "bm25"))
    paras = nodes.filter(pl.col("level") == "paragraph")
    doc_paras = {d: g["text"].to_list() for (d,), g in paras.group_by("doc_id")}
    doc_text = {d: "\n".join(t) for d, t in doc_paras.items()}
    rows_all = list(labels.iter_rows(named=True))
    fig = {r["id"] for r in rows_all if not is_blank(r.get("answer_value")) and figure_only(r, doc_text)}

    results: dict[str, dict[int, dict[str, float]]] = {"treerag": {}, "flat512": {}, "bm25win": {}}
    pages = "gold_page" in labels.columns
    spans = page_spans(nodes) if pages else {}
    misses: list[dict[str, object]] = []
    latency_ms = 0.0
    kept: dict[str, list] = {}
    for budget in budgets:
        ours, fl, bw = [], [], []
        factor = budget / rp.max_context_tokens  # depth and budget grow together, as in answer retries
        t0 = time.perf_counter()
        units_of = {r["id"]: retriever.retrieve(queries[r["id"]], rp, r.get("answer_unit"), factor) for r in rows_all}
        if budget == rp.max_context_tokens:
            latency_ms = 1000 * (time.perf_counter() - t0) / max(1, len(rows_all))
        for qv, r in zip(q_vecs, rows_all):
            qid = r["id"]
            ours += [{"question_id": qid, "doc_id": u.doc_id, "text": u.text, "n_tokens": u.n_tokens}
                     for u in units_of[qid]]
            if not flat:
                continue  # --no-baselines
            order = np.argsort(-(flat_vecs @ qv))
            fl += budget_rows(qid, [flat[i] for i in order[:64]], budget)
            top = bm25.search(tokenize(" ".join(queries[qid])), 64)
            bw += budget_rows(qid, [wins[i] for i, _ in top], budget)
        for method, rows in (("treerag", ours), ("flat512", fl), ("bm25win", bw)):
            if method != "treerag" and not flat:
                results.pop(method, None)
                continue
            frame = pl.DataFrame(rows, schema=SCHEMA)
            m = retrieval_metrics(labels, frame)
            m["evidence_recall_no_figures"] = retrieval_metrics(labels.filter(~pl.col("id").is_in(list(fig))),
                                                                frame)["evidence_recall"]
            results[method][budget] = m
        if pages:
            answerable = [r for r in rows_all if not is_blank(r.get("answer_value"))]
            hits = sum(gold_page_hit(r, units_of[r["id"]], spans) for r in answerable)
            results["treerag"][budget]["gold_page_recall"] = round(hits / max(1, len(answerable)), 4)
        if budget == rp.max_context_tokens:
            kept = units_of
            for r in rows_all:
                if is_blank(r.get("answer_value")):
                    continue
                units = units_of[r["id"]]
                if evidence_found(r["answer_value"], r.get("supporting_materials") or "",
                                  "\n".join(u.text for u in units)):
                    continue
                cause = miss_cause(r, {u.doc_id.lower() for u in units}, doc_text, doc_paras)
                misses.append({"id": r["id"], "cause": cause, "question": r["question"],
                               "answer_value": r["answer_value"], "ref_id": r["ref_id"],
                               "context_docs": sorted({u.doc_id for u in units}),
                               "named": [d.doc_id for d in retriever.index.named_docs(r["question"])]})
    return {"set": name, "questions": labels.height, "figure_only": len(fig),
            "named_docs": naming_stats(labels, retriever, rp),
            "ms_per_question": round(latency_ms, 1), "results": results,
            "miss_causes": dict(Counter(m["cause"] for m in misses)), "misses": misses,
            **({"units": kept} if keep_units else {})}


def compare_modes(args: argparse.Namespace, retriever: Retriever, rp: RetrieveParams, nodes: pl.DataFrame,
                  budgets: tuple[int, ...]) -> dict[str, dict[str, object]]:
    """treerag's recalls per `retrieve.named_docs` mode, and the questions each mode wins and loses
    (evidence at the default budget) against the first mode listed."""
    none = {"flat": [], "flat_vecs": np.zeros((0, 1)), "wins": [], "bm25": KeywordIndex([])}
    out: dict[str, dict[str, object]] = {}
    for set_name in args.sets:
        labels = read_questions(SETS.get(set_name, Path(set_name)))
        queries = {r["id"]: [r["question"]] for r in labels.iter_rows(named=True)}
        base_misses: set[str] | None = None
        print(f"\n{set_name}: treerag by retrieve.named_docs, gold-doc / evidence recall"
              f"{' / gold-page recall' if 'gold_page' in labels.columns else ''}")
        cols = " | ".join(f"{b} tokens" for b in budgets)
        print(f"| named_docs | {cols} | evidence won / lost at {rp.max_context_tokens} |")
        print(f"|---|{'---|' * len(budgets)}---|")
        for mode in args.modes:
            res = eval_set(set_name, labels, queries, retriever, replace(rp, named_docs=mode), nodes, none, budgets)
            misses = {m["id"] for m in res["misses"]}  # type: ignore[union-attr]
            base_misses = misses if base_misses is None else base_misses
            ours = res["results"]["treerag"]  # type: ignore[index]
            entry = {"results": ours, "miss_causes": res["miss_causes"], "misses": sorted(misses),
                     "won": sorted(base_misses - misses), "lost": sorted(misses - base_misses),
                     "ms_per_question": res["ms_per_question"]}
            out.setdefault(mode, {})[set_name] = entry
            cells = [f"{m['gold_doc_recall']:.3f} / {m['evidence_recall']:.3f}"
                     + (f" / {m['gold_page_recall']:.3f}" if "gold_page_recall" in m else "") for m in ours.values()]
            print(f"| {mode} | {' | '.join(cells)} | {entry['won']} / {entry['lost']} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+", default=["dev", "train"], help="dev, train or a labelled CSV path")
    ap.add_argument("--plan", help="queries.parquet from the plan stage (default: the question alone)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--modes", nargs="+", choices=["none", "prior"],
                    help="also measure treerag with each retrieve.named_docs mode (misses won/lost vs the first)")
    ap.add_argument("--no-baselines", action="store_true",
                    help="treerag only (no flat512 / bm25win baselines: no embedding of the corpus)")
    ap.add_argument("--artifacts", default=str(ROOT / "artifacts"), help="where tree/ and index/ are (another corpus)")
    ap.add_argument("-S", "--set", action="append", default=[], help="section.key=value override of params.yaml")
    args = ap.parse_args()
    params = apply_overrides(load_params(ROOT / "params.yaml"), args.set)
    rp = section(RetrieveParams, "retrieve", params)
    retriever, nodes, load_s = load_retriever(Path(args.artifacts), params)
    embedder, cache = retriever.embedder, retriever.cache

    sents = {} if args.no_baselines else doc_sentences(nodes)
    flat = [(d, c) for d, ss in sents.items() for c in windows(ss, int(512 * CHARS_PER_TOKEN))]
    wins = [(d, w) for d, ss in sents.items() for w in windows(ss, 500)]
    flat_vecs, _ = embed_texts([c for _, c in flat], embedder, cache, desc="embed flat chunks")
    baselines = {"flat": flat, "flat_vecs": flat_vecs, "wins": wins,
                 "bm25": KeywordIndex([tokenize(w) for _, w in wins])}

    budgets = tuple(sorted({*BUDGETS, rp.max_context_tokens}))  # the default budget too: its misses are listed
    report: dict[str, object] = {"queries": "planner" if args.plan else "question", "budgets": list(budgets),
                                 "overrides": args.set, "artifacts": args.artifacts,
                                 "index_load_s": round(load_s, 2), "sets": {}}
    for set_name in args.sets:
        path = SETS.get(set_name, Path(set_name))
        labels = read_questions(path)
        queries = {r["id"]: [r["question"]] for r in labels.iter_rows(named=True)}
        if args.plan:
            plan = pl.read_parquet(args.plan).sort("question_id", "query_index")
            queries.update({q: g["query"].to_list() for (q,), g in plan.group_by("question_id") if q in queries})
        res = eval_set(set_name, labels, queries, retriever, rp, nodes, baselines, budgets)
        report["sets"][set_name] = res  # type: ignore[index]
        n = next(iter(res["results"]["treerag"].values()))["answerable_questions"]  # type: ignore[index]
        print(f"\n{set_name}: {n} answerable ({res['figure_only']} figure-only), "
              f"gold-doc / evidence recall (evidence without figure-only), mean tokens; "
              f"treerag {res['ms_per_question']} ms/question")
        print(f"| method | {' | '.join(f'{b} tokens' for b in budgets)} |")
        print(f"|---|{'---|' * len(budgets)}")
        for method, by_budget in res["results"].items():  # type: ignore[union-attr]
            cells = [f"{m['gold_doc_recall']:.2f} / {m['evidence_recall']:.2f} ({m['evidence_recall_no_figures']:.2f})"
                     f" {m['mean_context_tokens']:.0f} tok" for m in by_budget.values()]
            print(f"| {method} | {' | '.join(cells)} |")
        print(f"misses at {rp.max_context_tokens} tokens by cause: {res['miss_causes']}")
        nd = res["named_docs"]  # type: ignore[index]
        print(f"named a document: {nd['naming']} of {nd['with_gold_doc']} questions with a gold document, "
              f"the gold one among them in {nd['gold_named']}")
        ours = res["results"]["treerag"]  # type: ignore[index]
        if "gold_page_recall" in next(iter(ours.values())):
            print("treerag gold-page recall: "
                  + ", ".join(f"{b}: {m['gold_page_recall']:.2f}" for b, m in ours.items()))
    if args.modes:
        report["by_mode"] = compare_modes(args, retriever, rp, nodes, budgets)
    cache.close()
    out = Path(args.out or ROOT / f"bench/results/retrieval{'_plan' if args.plan else ''}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
