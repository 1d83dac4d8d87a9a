"""Retriever glue: which text BM25 searches, and query embedding up front."""
from __future__ import annotations

import numpy as np
from test_retrieval import make_tree  # tests/ is on sys.path (conftest.py)

from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.search import Retriever


class SpyIndex:
    def __init__(self) -> None:
        self.keyword_queries: list[str] = []

    def dense(self, vecs, k, **doc_focus):
        return [[("d:sec1:p2:s1", 0.5)] for _ in vecs]

    def keyword(self, query, k, **doc_focus):
        self.keyword_queries.append(query)
        return [(["d:sec1:p3"], 1.0)]

    def term_weights(self, query):
        return {}


class CountingEmbedder:
    name, dim = "spy", 4

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def spy_retriever(tmp_path):
    from stages.core.embed.embedder import EmbeddingCache

    r = Retriever.__new__(Retriever)
    r.index, r.tree, r.embedder = SpyIndex(), make_tree(), CountingEmbedder()
    r.cache = EmbeddingCache(tmp_path / "e.sqlite")
    return r


def test_bm25_searches_the_question_alone(tmp_path):
    r = spy_retriever(tmp_path)
    queries = ["What is beta?", "beta keywords", "gamma rephrased"]
    units = r.retrieve(queries, RetrieveParams())
    assert r.index.keyword_queries == ["What is beta?"]
    assert {u.key for u in units} == {"d:sec1:p2:s1", "d:sec1:p3"}


def test_prepare_embeds_all_queries_in_one_batch_then_retrieve_embeds_nothing(tmp_path):
    r = spy_retriever(tmp_path)
    r.prepare(["q1", "q2", "q3"])
    assert r.embedder.calls == [3]
    r.retrieve(["q2"], RetrieveParams())
    assert r.embedder.calls == [3]  # served from the cache
    r.retrieve(["new query"], RetrieveParams())
    assert r.embedder.calls == [3, 1]
