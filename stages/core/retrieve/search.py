"""Glue for one question: embed its queries, search dense and BM25, build the context."""
from __future__ import annotations

from pathlib import Path

import polars as pl
from tqdm import tqdm

from stages.core.embed.embedder import Embedder, EmbeddingCache, embed_texts
from stages.core.index.store import Index
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.ranking import RetrievedUnit, build_context, extend_context
from stages.core.tree.navigate import TreeView

CONTEXT_SCHEMA = {
    "question_id": pl.String, "attempt": pl.Int32, "rank": pl.Int32, "node_id": pl.String, "doc_id": pl.String,
    "score": pl.Float64, "frequency": pl.Int32, "source": pl.String, "page": pl.Int64, "n_tokens": pl.Int32,
    "media": pl.String, "text": pl.String,
}


class Retriever:
    """Everything retrieval needs, loaded once."""

    def __init__(self, index_dir: Path, nodes: pl.DataFrame, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.index = Index(index_dir)
        if self.index.info["dim"] != embedder.dim or self.index.info["model"] != embedder.name:
            raise ValueError(
                f"{index_dir}: index built with {self.index.info['model']} ({self.index.info['dim']}-d) but the query "
                f"embedder is {embedder.name} ({embedder.dim}-d); rebuild with `dvc repro index`"
            )
        self.tree = TreeView(nodes)
        self.embedder = embedder
        self.cache = cache

    def prepare(self, queries: list[str]) -> None:
        """Embed every question's queries in batches up front: one MiniLM call costs
        ~65 ms of fixed overhead on this CPU, so per-question embedding would dominate
        search (~5 ms); afterwards `retrieve` finds its query vectors in the cache."""
        embed_texts(queries, self.embedder, self.cache, desc="retrieve: embed queries")

    def doc_focus(self, question: str, p: RetrieveParams) -> tuple[dict[str, float] | None, bool]:
        """(document weights, search only them) for `retrieve.named_docs`: none -> (None, False);
        prior -> each named document weighs 1 + doc_prior x its naming confidence; filter -> only
        the named documents (None when the question names none)."""
        if p.named_docs == "none":
            return None, False
        named = self.index.named_docs(question, p.doc_share)
        if not named:
            return None, False
        if p.named_docs == "filter":
            return {d.doc_id: 1.0 for d in named}, True
        return {d.doc_id: 1.0 + p.doc_prior * d.confidence for d in named}, False

    def retrieve(self, queries: list[str], p: RetrieveParams, answer_unit: str | None = None) -> list[RetrievedUnit]:
        """Context units for one question's queries (query 0 is the question); `answer_unit`
        (the questions file's column) lets `retrieve.unit_boost` prefer units stating it."""
        vecs, _ = embed_texts(queries, self.embedder, self.cache, progress=False)
        incl = not p.exclude_references
        kw_query = queries[0] if p.bm25_query == "question" else " ".join(queries)
        weights, only = self.doc_focus(queries[0], p)
        keyword = (self.index.keyword(kw_query, p.bm25_k, include_excluded=incl, doc_weights=weights, only_docs=only)
                   if p.bm25_k else [])
        if only and p.bm25_k and len(keyword) < p.doc_filter_min:  # the named documents yield too little
            weights, only = None, False
            keyword = self.index.keyword(kw_query, p.bm25_k, include_excluded=incl)
        dense = self.index.dense(vecs, p.top_k, include_excluded=incl, doc_weights=weights, only_docs=only)
        focus = self.index.term_weights(queries[0]) if p.uses_focus else None
        return build_context(self.tree, dense, keyword, p, answer_unit, focus, queries[0])


def retrieve_attempts(retriever: Retriever, queries: list[str], p: RetrieveParams, max_retries: int,
                      retry_k_factor: float, answer_unit: str | None = None) -> list[list[RetrievedUnit]]:
    """Context of attempt 0, then each retry's wider context, which keeps the previous
    context as its prefix (so the LLM server reuses its cached prompt)."""
    units = retriever.retrieve(queries, p, answer_unit)
    attempts = [units]
    for attempt in range(1, max_retries + 1):
        wide = p.scaled(retry_k_factor**attempt)
        units = extend_context(units, retriever.retrieve(queries, wide, answer_unit), wide)
        attempts.append(units)
    return attempts


def retrieve_all(retriever: Retriever, queries_of: dict[str, list[str]], p: RetrieveParams, max_retries: int,
                 retry_k_factor: float, progress: bool = True, units_of: dict[str, str | None] | None = None,
                 ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Context rows of every question: (attempt 0 rows, retry rows), query vectors embedded up front;
    `units_of` maps a question id to its answer_unit (for `retrieve.unit_boost`).

    The retrieve stage and the answer benchmark both call this, so they build the same contexts.
    """
    retriever.prepare([x for qs in queries_of.values() for x in qs])
    rows: list[dict[str, object]] = []
    retry_rows: list[dict[str, object]] = []
    for qid, qs in tqdm(queries_of.items(), total=len(queries_of), desc="retrieve: questions", unit="q",
                        disable=not progress):
        attempts = retrieve_attempts(retriever, qs, p, max_retries, retry_k_factor, (units_of or {}).get(qid))
        rows += context_rows(qid, 0, attempts[0])
        for attempt, units in enumerate(attempts[1:], start=1):
            retry_rows += context_rows(qid, attempt, units)
    return rows, retry_rows


def context_rows(question_id: str, attempt: int, units: list[RetrievedUnit]) -> list[dict[str, object]]:
    """Rows of retrieve/contexts.parquet for one question and attempt."""
    return [
        {"question_id": question_id, "attempt": attempt, "rank": r, "node_id": u.key, "doc_id": u.doc_id,
         "score": u.score, "frequency": u.frequency, "source": u.source, "page": u.page, "n_tokens": u.n_tokens,
         "media": u.media, "text": u.text}
        for r, u in enumerate(units)
    ]
