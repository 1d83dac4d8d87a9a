"""Embedding on an engine: the local model runs as a pool, one single-threaded embedder per CPU (processes on
this machine under `engine: local`, actors under `engine: ray`), each loading the model once, and embeds the
texts the cache misses.

Why one thread each: the ONNX backends embed one text per pass, and a pass over a sentence's ~30 tokens is too
small to share between threads: on a 2-core CPU, two single-threaded processes embedded the 62 filings' 134,436
texts in 988 s wall and 1,826 CPU-s against one 2-thread process's 1,495 s and 2,232, the vectors byte-identical
(bench/results/embed_filings.json, "pool_all62").
`embed.threads` > 0 keeps one process with that many threads; torch keeps one process under `engine: local`.

`embed_texts` hands a local embedder runs of ``8 x embed.batch_size`` texts (sorted by length), which
sentence-transformers cuts into its batches; the pool gets the same runs, one per actor at a time, so every
batch holds the same texts as on one machine and the vectors are the same. An endpoint
(`embed.base_url`) stays with the driver: its `embed.max_concurrency` is the cap on requests in flight.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from stages.core.embed.embedder import Embedder, EmbedParams, local_model_dir, make_embedder

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


def _export_once(params: EmbedParams) -> None:
    """Make the ONNX file before the pool starts, so its processes do not each export it."""
    if params.backend == "torch":
        return
    from stages.core.embed.onnx_backend import onnx_model_file

    onnx_model_file(local_model_dir(), int8=params.backend == "onnx_int8")


def engine_embedder(engine: Any, params: EmbedParams, api_key_env: str, retry: Any) -> Embedder:
    """The stage's embedder: an endpoint's, or one in this process (torch, `embed.threads` set, one CPU), else
    a pool of single-threaded ones."""
    if params.base_url or (engine.kind == "local" and (params.backend == "torch" or params.threads
                                                         or (os.cpu_count() or 1) < 2)):
        return make_embedder(params, api_key_env, retry)
    _export_once(params)
    return PooledEmbedder(engine, params if params.threads else replace(params, threads=1))
