"""Speed benchmarks (not tests): embed throughput and retrieval latency.

  python bench/speed.py embed            # stage embed (cache cold) vs the bare embedder, same texts
  python bench/speed.py retrieve         # ms per question on the built index
  python bench/speed.py scale --factors 10 100   # Lance search on synthetic 10x/100x copies, flat vs ANN

Needs `dvc repro index`. Results go to bench/results/speed_<what>.json.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import lancedb
import numpy as np
import polars as pl
import pyarrow as pa

from stages.core.common.dataio import read_questions
from stages.core.common.params import load_params, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.embed.tree_vectors import embed_tree
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.search import Retriever

RESULTS = Path("bench/results")


def bench_embed(limit: int) -> dict[str, float]:
    params = load_params()
    ep = section(EmbedParams, "embed", params)
    nodes = pl.read_parquet("artifacts/tree/nodes.parquet")
    docs = nodes.filter(pl.col("level") == "document")["doc_id"].to_list()
    # a subset of whole documents, so the tree stays consistent
    keep, n = [], 0
    for d in docs:
        n += nodes.filter((pl.col("doc_id") == d) & (pl.col("level") == "sentence")).height
        keep.append(d)
        if n >= limit:
            break
    sub = nodes.filter(pl.col("doc_id").is_in(keep))
    texts = sub.filter(pl.col("level") == "sentence")["text"].to_list()
    embedder = make_embedder(ep)
    embedder.embed(texts[:64])  # warm-up
    t0 = time.perf_counter()
    embedder.embed(texts)
    bare = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "e.sqlite")
        t0 = time.perf_counter()
        embed_tree(sub, embedder, cache, ep)
        stage = time.perf_counter() - t0
        t0 = time.perf_counter()
        embed_tree(sub, embedder, cache, ep)
        warm = time.perf_counter() - t0
        cache.close()
    return {"sentences": len(texts), "bare_s": round(bare, 2), "stage_cold_s": round(stage, 2),
            "ratio": round(stage / bare, 3), "stage_warm_cache_s": round(warm, 2),
            "bare_sentences_per_s": round(len(texts) / bare, 1)}


def bench_retrieve() -> dict[str, float]:
    """ms per question, query embedding included: cold (fresh embedding cache, so the
    queries are embedded) and warm (query vectors already cached, search only)."""
    params = load_params()
    rp = section(RetrieveParams, "retrieve", params)
    qs = read_questions(params["data"]["questions"])["question"].to_list()
    nodes = pl.read_parquet("artifacts/tree/nodes.parquet")
    embedder = make_embedder(section(EmbedParams, "embed", params))
    out: dict[str, float] = {"questions": len(qs)}
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "e.sqlite")
        t0 = time.perf_counter()
        r = Retriever(Path("artifacts/index"), nodes, embedder, cache)
        out["load_s"] = round(time.perf_counter() - t0, 2)
        r.retrieve(["warm-up query"], rp)
        query_sets = {"1_query": [[q] for q in qs],
                      "4_queries": [[q, q + " energy", q + " carbon", q + " model"] for q in qs]}
        for label, queries in query_sets.items():
            for temp in ("cold", "warm"):
                t0 = time.perf_counter()
                for qq in queries:
                    r.retrieve(qq, rp)
                out[f"ms_per_question_{label}_{temp}"] = round(1000 * (time.perf_counter() - t0) / len(qs), 1)
        # as the retrieve stage does it: all queries embedded in batches first, then searched
        cache2 = EmbeddingCache(Path(tmp) / "e2.sqlite")
        r.cache = cache2
        for label, queries in query_sets.items():
            t0 = time.perf_counter()
            r.prepare([x for qq in queries for x in qq])
            for qq in queries:
                r.retrieve(qq, rp)
            out[f"ms_per_question_{label}_stage_batched"] = round(1000 * (time.perf_counter() - t0) / len(qs), 1)
        cache.close()
        cache2.close()
    return out


def _arrow_block(vecs: np.ndarray, levels: np.ndarray, start: int) -> pa.Table:
    flat = pa.array(vecs.reshape(-1), type=pa.float32())
    return pa.table({"i": pa.array(np.arange(start, start + len(vecs))), "level": pa.array(levels),
                     "excluded": pa.array(np.zeros(len(vecs), dtype=bool)),
                     "vector": pa.FixedSizeListArray.from_arrays(flat, vecs.shape[1])})


def bench_scale(factors: list[int], n_queries: int = 20) -> dict[str, dict[str, float]]:
    """The corpus's search vectors replicated f times (each copy perturbed and
    re-normalised), searched three ways: exact in memory (one matrix product and a full
    argsort per query, no level filter: an upper bound on `Index`'s argpartition path
    below `index.ann_min_rows`), a Lance flat scan, and Lance IVF_PQ (nprobes 20,
    refine 10, as in `Index`), with the ANN's recall@16 against exact."""
    base = pl.read_parquet("artifacts/embed/vectors.parquet").filter(pl.col("level").is_in(["sentence", "paragraph"]))
    vecs = np.stack(base["vector"].to_numpy()).astype(np.float32)
    levels = np.array(base["level"].to_list())
    rng = np.random.default_rng(0)
    queries = vecs[rng.choice(len(vecs), n_queries, replace=False)]
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = lancedb.connect(tmp)
        for f in factors:
            allv = np.empty((len(vecs) * f, vecs.shape[1]), dtype=np.float32)
            for c in range(f):
                block = vecs if c == 0 else vecs + rng.normal(0, 0.02, vecs.shape).astype(np.float32)
                block /= np.linalg.norm(block, axis=1, keepdims=True)
                allv[c * len(vecs):(c + 1) * len(vecs)] = block
                data = _arrow_block(block, levels, c * len(vecs))
                if c == 0:
                    tbl = db.create_table(f"x{f}", data=data, mode="overwrite")
                else:
                    tbl.add(data)
            res: dict[str, float] = {"rows": float(len(allv))}
            t0 = time.perf_counter()
            exact = [np.argsort(-(allv @ q))[:16] for q in queries]
            res["numpy_exact_ms_per_query"] = round(1000 * (time.perf_counter() - t0) / len(queries), 1)
            where = "level IN ('sentence','paragraph') AND NOT excluded"
            for mode in ("flat", "ann"):
                if mode == "ann":
                    t0 = time.perf_counter()
                    tbl.create_index(metric="cosine", vector_column_name="vector",
                                     num_partitions=int(np.sqrt(len(allv))), num_sub_vectors=48)
                    res["ann_build_s"] = round(time.perf_counter() - t0, 1)
                found, t0 = [], time.perf_counter()
                for q in queries:
                    s = tbl.search(q).distance_type("cosine").where(where, prefilter=True).select(["i"])
                    if mode == "ann":
                        s = s.nprobes(20).refine_factor(10)
                    found.append(s.limit(16).to_arrow()["i"].to_numpy())
                res[f"lance_{mode}_ms_per_query"] = round(1000 * (time.perf_counter() - t0) / len(queries), 1)
                if mode == "ann":
                    res["ann_recall_at_16"] = round(float(np.mean(
                        [len(set(e.tolist()) & set(a.tolist())) / 16 for e, a in zip(exact, found)])), 3)
            out[f"{f}x"] = res
            print(f, res, flush=True)
            del allv
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["embed", "retrieve", "scale"])
    ap.add_argument("--limit", type=int, default=3000, help="embed: about this many sentences")
    ap.add_argument("--factors", type=int, nargs="+", default=[1, 10, 100])
    a = ap.parse_args()
    res = {"embed": lambda: bench_embed(a.limit), "retrieve": bench_retrieve, "scale": lambda: bench_scale(a.factors)}[a.what]()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"speed_{a.what}.json").write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
