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

from stages.core.dataio import read_questions
from stages.core.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.params import load_params, section
from stages.core.retrieval import RetrieveParams
from stages.core.retriever import Retriever
from stages.core.vectors import embed_tree

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
    params = load_params()
    rp = section(RetrieveParams, "retrieve", params)
    qs = read_questions(params["data"]["questions"])["question"].to_list()
    cache = EmbeddingCache()
    r = Retriever(Path("artifacts/index"), pl.read_parquet("artifacts/tree/nodes.parquet"),
                  make_embedder(section(EmbedParams, "embed", params)), cache)
    r.retrieve([qs[0]], rp)  # warm-up
    t0 = time.perf_counter()
    for q in qs:
        r.retrieve([q], rp)
    one = (time.perf_counter() - t0) / len(qs)
    queries = [[q, q + " energy", q + " carbon", q + " model"] for q in qs]
    t0 = time.perf_counter()
    for qq in queries:
        r.retrieve(qq, rp)
    four = (time.perf_counter() - t0) / len(qs)
    cache.close()
    return {"questions": len(qs), "ms_per_question_1_query": round(1000 * one, 1),
            "ms_per_question_4_queries": round(1000 * four, 1)}


def bench_scale(factors: list[int], n_queries: int = 50) -> dict[str, dict[str, float]]:
    base = pl.read_parquet("artifacts/embed/vectors.parquet").filter(pl.col("level").is_in(["sentence", "paragraph"]))
    vecs = np.stack(base["vector"].to_numpy()).astype(np.float32)
    rng = np.random.default_rng(0)
    queries = vecs[rng.choice(len(vecs), n_queries, replace=False)]
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = lancedb.connect(tmp)
        for f in factors:
            # synthetic copies: each copy perturbed a little and re-normalised
            copies = [vecs] + [vecs + rng.normal(0, 0.02, vecs.shape).astype(np.float32) for _ in range(f - 1)]
            allv = np.concatenate(copies)
            allv /= np.linalg.norm(allv, axis=1, keepdims=True)
            levels = np.tile(np.array(base["level"].to_list()), f)
            tbl = db.create_table(f"x{f}", data=pl.DataFrame({
                "level": levels, "excluded": np.zeros(len(allv), dtype=bool),
                "vector": allv}, schema={"level": pl.String, "excluded": pl.Boolean,
                                         "vector": pl.Array(pl.Float32, allv.shape[1])}).to_arrow())
            res: dict[str, float] = {"rows": float(len(allv))}
            for mode in ("flat", "ann"):
                if mode == "ann":
                    t0 = time.perf_counter()
                    tbl.create_index(metric="cosine", vector_column_name="vector",
                                     num_partitions=int(np.sqrt(len(allv))), num_sub_vectors=48)
                    res["ann_build_s"] = round(time.perf_counter() - t0, 1)
                t0 = time.perf_counter()
                for q in queries:
                    s = tbl.search(q).distance_type("cosine").where("level IN ('sentence','paragraph') AND NOT excluded",
                                                                     prefilter=True)
                    if mode == "ann":
                        s = s.nprobes(20).refine_factor(10)
                    s.limit(16).to_arrow()
                res[f"{mode}_ms_per_query"] = round(1000 * (time.perf_counter() - t0) / len(queries), 1)
            out[f"{f}x"] = res
            print(f, res, flush=True)
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
