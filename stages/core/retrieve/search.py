"""Glue for one question: embed its queries, search dense and BM25, build the context."""
from __future__ import annotations

import math
import re
from itertools import zip_longest
from pathlib import Path

import polars as pl
from tqdm import tqdm

from stages.core.embed.embedder import Embedder, EmbeddingCache, embed_texts
from stages.core.index.store import Index
from stages.core.plan.metrics import operand_items, operand_names
from stages.core.retrieve.params import RETRY_K_FACTOR, Depth, RetrieveParams
from stages.core.retrieve.ranking import RetrievedUnit, build_context, extend_context
from stages.core.retrieve.statements import StatementPages, asked_kinds, statement_words_apart
from stages.core.tree.navigate import TreeView

# retrieve.named_docs prior: a named document's units score x(1 + this x its naming confidence), so a
# confidently named document doubles its units' scores and still leaves the rest of the corpus in reach
DOC_PRIOR = 1.0
# units of the asked statements' pages (statements.py) that lead a named filing's keyword list: a metric
# takes several line items, often of two statements, and a row costs ~40 tokens, so five rows leave most of
# the budget to the rest (FinanceBench all 62: 2, 3, 4, 5, 6, 8 give page_all at 2x 0.73, 0.77, 0.80, 0.81,
# 0.81, 0.81; page_any 0.91 for all of them)
STATEMENT_UNITS = 5

CONTEXT_SCHEMA = {
    "question_id": pl.String, "attempt": pl.Int32, "rank": pl.Int32, "node_id": pl.String, "doc_id": pl.String,
    "score": pl.Float64, "frequency": pl.Int32, "source": pl.String, "page": pl.Int64, "n_tokens": pl.Int32,
    "media": pl.String, "text": pl.String,
}


def with_plurals(words: str) -> str:
    """Each word also with an "s": keyword search does not stem, and statements label a line "Revenues" as
    often as "Revenue"."""
    return " ".join(f"{w} {w}s" if w.isalpha() and not w.endswith("s") else w for w in words.split())


class Retriever:
    """Everything retrieval needs, loaded once."""

    def __init__(self, index_dir: Path | str, nodes: pl.DataFrame, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.index = Index(index_dir)
        if self.index.info["dim"] != embedder.dim or self.index.info["model"] != embedder.name:
            raise ValueError(
                f"{index_dir}: index built with {self.index.info['model']} ({self.index.info['dim']}-d) but the query "
                f"embedder is {embedder.name} ({embedder.dim}-d); rebuild with `dvc repro index`"
            )
        self.tree = TreeView(nodes)
        self.statements = StatementPages(nodes)
        self.embedder = embedder
        self.cache = cache

    def prepare(self, queries: list[str]) -> None:
        """Embed every question's queries in batches up front: one MiniLM call costs
        ~65 ms of fixed overhead on this CPU, so per-question embedding would dominate
        search (~5 ms); afterwards `retrieve` finds its query vectors in the cache."""
        embed_texts(queries, self.embedder, self.cache, desc="retrieve: embed queries")

    def doc_weights(self, question: str, p: RetrieveParams) -> dict[str, float] | None:
        """Per document the question names, the weight its units score with under `retrieve.named_docs:
        prior` (1 + DOC_PRIOR x its naming confidence); None with `none` or when it names none."""
        if p.named_docs == "none":
            return None
        named = self.index.named_docs(question)
        if not named:
            return None
        return {d.doc_id: 1.0 + DOC_PRIOR * d.confidence for d in named}

    def keyword_query(self, question: str, weights: dict[str, float] | None) -> str:
        """The question BM25 searches: under a document prior, without the names that named the documents
        (a company's name is on every page of its filings, so within them it only finds the pages that
        repeat it: exhibits, subsidiary lists), and with the year of each "FY2018" ("FY18") written out too, as a
        statement's period header writes it; as written otherwise."""
        if not weights:
            return question
        names = {n for d in self.index.named_docs(question) for c in d.cues if c.startswith("name:")
                 for n in c[5:].split("~")}
        for n in sorted(names, key=len, reverse=True):
            question = re.sub(rf"(?i)(?<![\w&]){re.escape(n)}(?:'s|’s)?(?![\w&])", " ", question)
        # "FY2018" / "FY 2018" also as the year a statement's column header writes
        question = re.sub(r"\b(?i:FY)\s?((?:19|20)\d\d)\b", r"FY\1 \1", question)
        return re.sub(r"\b(?i:FY)\s?(\d\d)\b", r"FY\1 20\1", question)  # "FY21": 2021

    def statement_lead(self, question: str, kw_query: str, weights: dict[str, float],
                       factor: float = 1.0) -> list[tuple[list[str], float]]:
        """The keyword hits on the pages of the statements the question asks about (statements.py) in the
        documents it names, best first: they lead the keyword list (none when it asks about none). Rows are
        ranked without the statements' names (statement_words_apart) and, for a metric, once per line item
        it is computed from (plan.metrics.operand_names: a "quick ratio" is no row, its operands are),
        the items taking turns, so a metric of two statements gets rows of both; when those words match
        fewer rows than the lead holds, the rows the statements' names match fill it, so the statement's
        page still leads."""
        kinds = asked_kinds(question)
        only = self.statements.node_ids(weights, kinds) if kinds else set()
        if not only:
            return []
        k = math.ceil(STATEMENT_UNITS * factor)
        apart = statement_words_apart(kw_query)
        rows = [self.index.keyword(f"{apart} {with_plurals(statement_words_apart(label))}", k, doc_weights=weights,
                                   only=only)
                for label in operand_names(question) or [""]]
        titled = self.index.keyword(kw_query, k, doc_weights=weights, only=only)
        lead: list[tuple[list[str], float]] = []
        have: set[tuple[str, ...]] = set()
        # each line item's best row in turn, then its second best, ...; then the rows the titles match
        for hit in [h for rank in zip_longest(*rows) for h in rank if h is not None] + titled:
            if tuple(hit[0]) not in have and len(lead) < k:
                have.add(tuple(hit[0]))
                lead.append(hit)
        return lead

    def retrieve(self, queries: list[str], p: RetrieveParams, answer_unit: str | None = None,
                 factor: float = 1.0) -> list[RetrievedUnit]:
        """Context units for one question's queries (query 0 is the question, which BM25 searches
        alone); `answer_unit` (the questions file's column) lets units stating it rank higher;
        `factor` multiplies the search depth and the budget (a retry's wider context)."""
        depth = Depth.of(p, factor)
        vecs, _ = embed_texts(queries, self.embedder, self.cache, progress=False)
        weights = self.doc_weights(queries[0], p)
        kw_query = self.keyword_query(queries[0], weights)
        keyword = self.index.keyword(kw_query, depth.bm25_k, doc_weights=weights)
        if weights:
            keyword = self.statement_lead(queries[0], kw_query, weights, factor) + keyword
        dense = self.index.dense(vecs, depth.top_k, doc_weights=weights)
        # a long table is cut to the rows of the question's words and, in a named filing, of its metric's line
        # items ("Total net revenues" for a turnover's revenue, not the "Net revenues" heading over empty cells)
        operands = with_plurals(" ".join(operand_names(queries[0]))) if weights else ""
        focus = self.index.term_weights(f"{queries[0]} {operands}")
        items = operand_items(queries[0]) if weights else []
        return build_context(self.tree, dense, keyword, depth, answer_unit, focus, items)


def retrieve_attempts(retriever: Retriever, queries: list[str], p: RetrieveParams, max_retries: int,
                      answer_unit: str | None = None) -> list[list[RetrievedUnit]]:
    """Context of attempt 0, then each retry's wider context (RETRY_K_FACTOR times the depth and budget
    per retry), which keeps the previous context as its prefix (so the LLM server reuses its cached prompt)."""
    units = retriever.retrieve(queries, p, answer_unit)
    attempts = [units]
    for attempt in range(1, max_retries + 1):
        factor = RETRY_K_FACTOR**attempt
        units = extend_context(units, retriever.retrieve(queries, p, answer_unit, factor), Depth.of(p, factor))
        attempts.append(units)
    return attempts


def retrieve_all(retriever: Retriever, queries_of: dict[str, list[str]], p: RetrieveParams, max_retries: int,
                 progress: bool = True, units_of: dict[str, str | None] | None = None,
                 ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Context rows of every question: (attempt 0 rows, retry rows), query vectors embedded up front;
    `units_of` maps a question id to its answer_unit.

    The retrieve stage and the answer benchmark both call this, so they build the same contexts.
    """
    retriever.prepare([x for qs in queries_of.values() for x in qs])
    rows: list[dict[str, object]] = []
    retry_rows: list[dict[str, object]] = []
    for qid, qs in tqdm(queries_of.items(), total=len(queries_of), desc="retrieve: questions", unit="q",
                        disable=not progress):
        attempts = retrieve_attempts(retriever, qs, p, max_retries, (units_of or {}).get(qid))
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
