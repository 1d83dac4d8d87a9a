"""embed: vectors for every tree node (leaves embedded, parents aggregated)."""
from __future__ import annotations

import logging
import time

from stages.core.common.artifacts import read_parquet, write_json, write_parquet
from stages.core.common.cli import run
from stages.core.common.params import load_params, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams
from stages.core.embed.pooled import engine_embedder
from stages.core.embed.tree_vectors import embed_tree
from stages.core.engine.local import open_engine
from stages.core.llm.params import LLMParams
from stages.core.llm.retry import RetryPolicy

NODES = "artifacts/tree/nodes.parquet"
OUT = "artifacts/embed/vectors.parquet"
METRICS = "metrics/embed.json"


def main() -> None:
    params = load_params()
    p = section(EmbedParams, "embed", params)
    nodes = read_parquet(NODES, "build_tree")
    t0 = time.perf_counter()
    llm = section(LLMParams, "llm", params)
    cache = EmbeddingCache()
    try:
        with open_engine(params, [llm.api_key_env]) as engine:
            res = embed_tree(nodes, engine_embedder(engine, p, llm.api_key_env, RetryPolicy.from_params(llm)),
                             cache, p)
    finally:
        cache.close()
    seconds = round(time.perf_counter() - t0, 2)
    write_parquet(res.vectors, OUT, metadata={"treerag.model": res.model, "treerag.dim": str(res.dim)})
    write_json(
        {"model": res.model, "dim": res.dim, "nodes": res.vectors.height, "texts": res.n_texts,
         "embedded_new": res.n_embedded, "cache_hits": res.n_texts - res.n_embedded, "seconds": seconds},
        METRICS,
    )
    logging.info("embed: %d nodes, %d texts (%d new, %d cached) in %.1fs", res.vectors.height, res.n_texts,
                 res.n_embedded, res.n_texts - res.n_embedded, seconds)


if __name__ == "__main__":
    run(main, "embed")
