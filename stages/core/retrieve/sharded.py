"""Retrieval on an engine: with `engine: ray`, questions are split into runs and each run is retrieved by a
pool actor that opens the index once: on a path every node reads, or (`ray.shared_store`) from the S3 folder
the driver put the index and the tree in.

The driver embeds every query first (through its embedding cache, as `retrieve_all` does); the actors get the
vectors with the work, so they load no model, and their rows are concatenated in question order: the
contexts are those of the local engine.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from stages.core.common import storage
from stages.core.common.artifacts import read_parquet
from stages.core.embed.embedder import EmbeddingCache
from stages.core.engine.local import chunks
from stages.core.engine.shared_store import folder_files
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.search import Retriever, retrieve_all

Rows = list[dict[str, object]]


class QueryVectors:
    """An Embedder that knows only the vectors it was given (they sit in the cache it is used with)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError(f"engine ray: {len(texts)} query text(s) were not embedded by the driver")


class RetrieveShard:
    """One actor's retriever: the index and the tree opened once, the query vectors in memory."""

    def __init__(self, index_dir: str, nodes_path: str, name: str, dim: int) -> None:
        self.cache = EmbeddingCache(Path(":memory:"))
        if storage.is_s3(index_dir):  # ray.shared_store: both from the driver's S3 folder
            index, nodes = index_dir, storage.read_parquet(nodes_path)
        else:
            index, nodes = Path(index_dir), read_parquet(nodes_path, "build_tree")
        self.retriever = Retriever(index, nodes, QueryVectors(name, dim), self.cache)

    def run(self, work: tuple[dict[str, list[str]], list[tuple[str, np.ndarray]], RetrieveParams, int,
                              dict[str, str | None]]) -> tuple[Rows, Rows]:
        queries_of, vectors, p, max_retries, units_of = work
        self.cache.put_many(vectors)
        return retrieve_all(self.retriever, queries_of, p, max_retries, progress=False, units_of=units_of)


def retrieve_on(engine: Any, retriever: Retriever, where: tuple[Path, str], queries_of: dict[str, list[str]],
                p: RetrieveParams, max_retries: int, units_of: dict[str, str | None]) -> tuple[Rows, Rows]:
    """`retrieve_all` on an engine (see the module docstring); ``where``: the index folder and the tree's
    nodes.parquet the retriever was opened on."""
    if engine.kind == "local":
        return retrieve_all(retriever, queries_of, p, max_retries, units_of=units_of)
    retriever.prepare([x for qs in queries_of.values() for x in qs])
    name = retriever.embedder.name
    index_dir, nodes_path = str(where[0]), where[1]
    if engine.store is not None:  # the nodes do not share this disk: the workers read both from S3
        folder = engine.store.put("retrieve", folder_files(where[0], "index") | {"nodes.parquet": Path(where[1])})
        index_dir, nodes_path = f"{folder}/index", f"{folder}/nodes.parquet"
    pool = engine.pool(partial(RetrieveShard, index_dir, nodes_path, name, retriever.embedder.dim))
    work = []
    for run in chunks(list(queries_of.items()), 4 * pool.size):
        keys = list(dict.fromkeys(EmbeddingCache.key(name, x) for _, qs in run for x in qs))
        found = retriever.cache.get_many(keys)
        work.append((dict(run), list(found.items()), p, max_retries, {q: units_of.get(q) for q, _ in run}))
    rows: Rows = []
    retry_rows: Rows = []
    for r, rr in pool.map("run", work):
        rows += r
        retry_rows += rr
    return rows, retry_rows
