"""Embedding on an engine: with `engine: ray` and the local model, an actor pool (one actor per CPU, each
loading the model once) embeds the texts the cache misses.

`embed_texts` hands a local embedder runs of ``8 x embed.batch_size`` texts (sorted by length), which
sentence-transformers cuts into its batches; the pool gets the same runs, one per actor at a time, so every
batch holds the same texts as on one machine and the vectors are the same. An endpoint
(`embed.base_url`) stays with the driver: its `embed.max_concurrency` is the cap on requests in flight.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from stages.core.embed.embedder import Embedder, EmbedParams, make_embedder

LOCAL_RUN = 8  # batches per embed() call that embed_texts gives an embedder of max_concurrency 1


class PooledEmbedder:
    """An Embedder whose `embed` spreads runs of ``LOCAL_RUN x batch_size`` texts over the pool."""

    def __init__(self, engine: Any, params: EmbedParams) -> None:
        self.pool = engine.pool(partial(make_embedder, params))
        self.name: str = self.pool.attr("name")
        self.dim: int = self.pool.attr("dim")
        self.run = LOCAL_RUN * params.batch_size
        # embed_texts gives an embedder batch_size x max(8, 2 x max_concurrency) texts per call: one run per actor
        self.max_concurrency = LOCAL_RUN // 2 * self.pool.size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        runs = [list(texts[i:i + self.run]) for i in range(0, len(texts), self.run)]
        if not runs:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(self.pool.map("embed", runs))


def engine_embedder(engine: Any, params: EmbedParams, api_key_env: str, retry: Any) -> Embedder:
    """The stage's embedder: the local engine's (or an endpoint's) as before, else an actor pool."""
    if engine.kind == "local" or params.base_url:
        return make_embedder(params, api_key_env, retry)
    return PooledEmbedder(engine, params)
