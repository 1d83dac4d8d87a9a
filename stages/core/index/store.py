"""The searchable index: a LanceDB table of node vectors and a BM25 unit table.

Dense: one Lance table (node_id, level, doc_id, text, page, excluded, vector),
searched by cosine with a level prefilter; an IVF_PQ index is built only above
`index.ann_min_rows` rows (below it exact search is both exact and faster).
Keyword: paragraphs, table rows and ~500-char sentence windows of long
paragraphs, each tokenised together with its document's
author surnames and year, because questions name papers by author and year
("the 2022 paper by Smith et al.") and no passage says that.
Document cards (`doc_cards.json`, stages/core/index/cards.py): what identifies each
document (metadata row and first-page title block), from which `named_docs` decides
the documents a question names; `dense` and `keyword` then weight or restrict to them.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lancedb
import numpy as np
import polars as pl
import pyarrow as pa

from stages.core.common import storage
from stages.core.common.artifacts import parquet_batches
from stages.core.index.cards import CARDS, NamedDoc, build_cards, read_namer, word_docs, write_cards
from stages.core.index.keywords import KeywordIndex, tokenize

TABLE = "nodes"
LANCE_COLUMNS = ("node_id", "level", "doc_id", "text", "page", "excluded", "vector")
# vector rows written to Lance at a time (~27 MB at 384 dimensions): the index stage's memory follows the
# batch, not the corpus
LANCE_BATCH_ROWS = 16_384
SEARCH_LEVELS = ("sentence", "paragraph")
# BM25 also indexes sentence windows of about this many characters of every paragraph longer than twice
# it: length normalisation buries a long paragraph whose one sentence matches (bm25_units)
BM25_WINDOW_CHARS = 500
# characters of the first page's front matter (title block) kept on each document card, for naming
CARD_CHARS = 300


@dataclass
class IndexParams:
    """The `index:` section of params.yaml."""

    ann_min_rows: int = 500_000


def doc_descriptors(metadata: pl.DataFrame) -> dict[str, str]:
    """'author surnames year' per doc id, from metadata.csv's citation column.

    Only surnames and year: measured on train_QA, adding the whole title to every
    unit lowered BM25 gold-doc recall at 1,000 tokens (0.97 -> 0.95), since title
    words then match every paragraph of the document; surnames and year did not.
    """
    out: dict[str, str] = {}
    for row in metadata.iter_rows(named=True):
        authors = re.split(r"\(\d{4}\)", row.get("citation") or "")[0]
        surnames = [a.strip(" .").split()[-1] for a in authors.split(",") if a.strip(" .")]
        out[row["id"]] = " ".join([*surnames, row.get("year") or ""]).strip()
    return out


def excluded_mask(nodes: pl.DataFrame) -> pl.Expr:
    """Reference-list and front-matter nodes are kept in the index but excluded from search by default."""
    cols = [c for c in ("is_reference", "is_front_matter") if c in nodes.columns]
    expr = pl.lit(False)
    for c in cols:
        expr = expr | pl.col(c).fill_null(False)
    return expr


def sentence_windows(sentences: list[tuple[str, str]], min_chars: int) -> list[list[str]]:
    """Consecutive (id, text) sentences grouped until a group holds at least `min_chars`;
    a short tail joins the group before it."""
    groups: list[list[str]] = []
    ids: list[str] = []
    size = 0
    for sid, text in sentences:
        ids.append(sid)
        size += len(text) + 1
        if size >= min_chars:
            groups.append(ids)
            ids, size = [], 0
    if ids:
        if groups and size < min_chars // 2:
            groups[-1] += ids
        else:
            groups.append(ids)
    return groups


def bm25_units(nodes: pl.DataFrame, metadata: pl.DataFrame) -> pl.DataFrame:
    """Keyword units with their tokens: paragraphs, every sentence of a table (its rows),
    and the ~BM25_WINDOW_CHARS sentence windows of every paragraph longer than twice that,
    in addition to the whole paragraph.

    Why windows: BM25's length normalisation buries a long paragraph whose one
    sentence matches (measured: a 1,136-char paragraph holding a question's evidence was
    keyword rank 19); a ~500-char window is found at the rank a short paragraph would be.
    The whole paragraph stays a unit too: on train_QA, windows alone lost evidence
    recall at 1k and 4k tokens that paragraphs plus windows (with bm25_k 16) kept.
    `node_ids` lists the nodes a unit's text comes from; `node_id` is the first of them.
    """
    desc = doc_descriptors(metadata)
    nodes = nodes.with_columns(excluded_mask(nodes).alias("excluded"))
    paras = nodes.filter(pl.col("level") == "paragraph")
    sentences: dict[str, list[tuple[str, str]]] = {}
    for row in nodes.filter(pl.col("level") == "sentence").select("node_id", "parent_id", "text").iter_rows():
        sentences.setdefault(row[1], []).append((row[0], row[2] or ""))
    rows: list[tuple[str, list[str], str, str, bool, str]] = []
    for p in paras.iter_rows(named=True):
        text, sents = p["text"] or "", sentences.get(p["node_id"], [])
        rows.append((p["node_id"], [p["node_id"]], p["doc_id"], "paragraph", p["excluded"], text))
        if p["attachment_type"] == "table":
            rows += [(sid, [sid], p["doc_id"], "sentence", p["excluded"], st) for sid, st in sents]
        elif len(text) > 2 * BM25_WINDOW_CHARS and len(sents) > 1:
            text_of = dict(sents)
            for ids in sentence_windows(sents, BM25_WINDOW_CHARS):
                rows.append((ids[0], ids, p["doc_id"], "sentence", p["excluded"], " ".join(text_of[i] for i in ids)))
    tokens = [tokenize(f"{desc.get(doc, doc)} {text}") for _, _, doc, _, _, text in rows]
    return pl.DataFrame(
        {"node_id": [r[0] for r in rows], "node_ids": [r[1] for r in rows], "doc_id": [r[2] for r in rows],
         "level": [r[3] for r in rows], "excluded": [r[4] for r in rows], "tokens": tokens},
        schema={"node_id": pl.String, "node_ids": pl.List(pl.String), "doc_id": pl.String, "level": pl.String,
                "excluded": pl.Boolean, "tokens": pl.List(pl.String)},
    )


def vector_batches(vectors: pl.DataFrame | Path) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The embed stage's vectors (a frame, or its Parquet file read a batch at a time) as Arrow batches."""
    if isinstance(vectors, pl.DataFrame):
        table = vectors.to_arrow()
        return table.schema, iter(table.to_batches(max_chunksize=LANCE_BATCH_ROWS))
    return parquet_batches(vectors, LANCE_BATCH_ROWS, "embed")


def lance_rows(nodes: pl.DataFrame, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> pa.RecordBatchReader:
    """The Lance table's rows: each vector row with its node's text, page and `excluded` flag, in the
    vectors' order, made one batch at a time (a node without a vector has no row)."""
    lookup = nodes.select("node_id", "text", "page", excluded_mask(nodes).alias("excluded"))

    def rows(batch: pa.RecordBatch | pa.Table) -> pa.Table:
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        return frame.join(lookup, on="node_id", maintain_order="left").select(LANCE_COLUMNS).to_arrow()

    out = rows(schema.empty_table()).schema
    return pa.RecordBatchReader.from_batches(out, (b for batch in batches for b in rows(batch).to_batches()))


def build_index(nodes: pl.DataFrame, vectors: pl.DataFrame | Path, metadata: pl.DataFrame, out_dir: Path,
                params: IndexParams, model: str) -> dict[str, object]:
    """Write the Lance table and BM25 units under `out_dir`; return index stats. `vectors` is the embed
    stage's frame or its Parquet file; a file is streamed into Lance (memory bounded by LANCE_BATCH_ROWS)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    schema, batches = vector_batches(vectors)
    dim = schema.field("vector").type.list_size
    db = lancedb.connect(str(out_dir / "lance"))
    tbl = db.create_table(TABLE, data=lance_rows(nodes, schema, batches), mode="overwrite")
    rows = tbl.count_rows()
    ann = rows >= params.ann_min_rows
    if ann:
        tbl.create_index(metric="cosine", vector_column_name="vector",
                         num_partitions=max(1, int(np.sqrt(rows))), num_sub_vectors=max(1, dim // 8))
    units = bm25_units(nodes, metadata)
    units.write_parquet(out_dir / "bm25_units.parquet")
    cards = build_cards(metadata, nodes, CARD_CHARS)
    doc_tokens: dict[str, set[str]] = {}
    for doc, toks in zip(units["doc_id"].to_list(), units["tokens"].to_list()):
        doc_tokens.setdefault(doc, set()).update(toks)
    write_cards(out_dir / CARDS, cards, word_docs(cards, doc_tokens), len(doc_tokens))
    info = {"model": model, "dim": dim, "rows": rows, "ann": ann, "bm25_units": units.height}
    (out_dir / "index.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def doc_weight_array(docs: np.ndarray, doc_weights: dict[str, float]) -> np.ndarray:
    """Per row, the weight of its document: `doc_weights[doc]`, else 1."""
    out = np.full(len(docs), 1.0)
    for doc, w in doc_weights.items():
        out[docs == doc] = w
    return out


class Index:
    """Read side: dense search and BM25 over the persisted units, reference lists and front
    matter left out (they are kept in the index, flagged `excluded`).

    Below `ann_min_rows` the searched rows' vectors are held in memory and searched
    exactly by one matrix product (about 2 ms for 27k x 384 on this CPU, where a Lance
    flat scan costs 70-100 ms per call); above it the Lance ANN index is queried.
    Only the searched rows are held (read from Lance a batch at a time), not the table."""

    def __init__(self, out_dir: Path | str) -> None:
        """``out_dir``: the index folder, or its copy under an ``s3://`` URI (`ray.shared_store`)."""
        self.info = json.loads(storage.read_text(storage.join(out_dir, "index.json")))
        lance = storage.join(out_dir, "lance")
        self._tbl = lancedb.connect(lance, storage_options=storage.lance_options(lance)).open_table(TABLE)
        self._exact: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if not self.info.get("ann"):
            self._subset(SEARCH_LEVELS)  # the default search's rows, loaded once up front
        units = storage.read_parquet(storage.join(out_dir, "bm25_units.parquet"))
        self.units = units
        # the keyword weights (idf) count every unit, the excluded ones too; search covers the others
        self._idf = KeywordIndex(units["tokens"].to_list()).idf
        searched = units.filter(~pl.col("excluded"))
        self._kw = KeywordIndex(searched["tokens"].to_list())
        self._unit_ids = searched["node_ids"].to_list()
        self._unit_docs = np.asarray(searched["doc_id"].to_list(), dtype=object)
        self._unit_rows: dict[str, list[int]] | None = None  # a unit's first node id -> its searched rows
        self.namer = read_namer(storage.join(out_dir, CARDS))

    def dense(self, qvecs: np.ndarray, k: int, levels: tuple[str, ...] = SEARCH_LEVELS,
              doc_weights: dict[str, float] | None = None) -> list[list[tuple[str, float]]]:
        """Per query vector, the top-k (node_id, cosine similarity) among `levels`. With
        `doc_weights`, a positive similarity of a node of one of those documents counts
        times its weight (a prior)."""
        qvecs = np.atleast_2d(np.asarray(qvecs, dtype=np.float32))
        if self.info.get("ann"):
            return self._dense_lance(qvecs, k, levels, doc_weights)
        return self._dense_exact(qvecs, k, levels, doc_weights)

    def _subset(self, levels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The searchable rows (unit vectors, ids, doc ids) for a level filter, built once per filter."""
        key = tuple(levels)
        if key not in self._exact:
            self._exact[key] = self._searchable(levels)
        return self._exact[key]

    def _scan(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        return iter(self._tbl.search().select(columns).limit(None).to_batches(LANCE_BATCH_ROWS))

    def _searchable(self, levels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The unexcluded rows at `levels`, in table order, as L2-normalised vectors, ids and doc ids.
        Two passes over the table a batch at a time (which rows, then their vectors into one matrix
        of that size), so memory holds the searched rows once and never the whole table."""
        keep = np.concatenate([np.zeros(0, dtype=bool)] + [
            np.isin(b["level"].to_numpy(zero_copy_only=False), list(levels))
            & ~b["excluded"].to_numpy(zero_copy_only=False) for b in self._scan(["level", "excluded"])])
        n = int(keep.sum())
        mat = np.empty((n, int(self.info["dim"])), dtype=np.float32)
        ids, docs, at, start = np.empty(n, dtype=object), np.empty(n, dtype=object), 0, 0
        for b in self._scan(["node_id", "doc_id", "vector"]):
            rows = np.flatnonzero(keep[start:start + b.num_rows])
            start += b.num_rows
            vec = b["vector"].flatten().to_numpy().reshape(b.num_rows, -1)
            mat[at:at + len(rows)] = vec[rows]
            ids[at:at + len(rows)] = b["node_id"].to_numpy(zero_copy_only=False)[rows]
            docs[at:at + len(rows)] = b["doc_id"].to_numpy(zero_copy_only=False)[rows]
            at += len(rows)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat /= np.where(norms == 0, 1.0, norms)
        return mat, ids, docs

    def _dense_exact(self, qvecs: np.ndarray, k: int, levels: tuple[str, ...],
                     doc_weights: dict[str, float] | None = None) -> list[list[tuple[str, float]]]:
        mat, ids, docs = self._subset(levels)
        if len(ids) == 0:
            return [[] for _ in qvecs]
        norms = np.linalg.norm(qvecs, axis=1, keepdims=True)
        sims = (qvecs / np.where(norms == 0, 1.0, norms)) @ mat.T
        if doc_weights is not None:
            weight = doc_weight_array(docs, doc_weights).astype(np.float32)
            sims = np.where(sims > 0, sims * weight, sims)
        k = min(k, len(ids))
        out = []
        for row in sims:
            # every row tied with the k-th score competes; ties go to the earlier row
            kth = row[np.argpartition(-row, k - 1)[k - 1]]
            cand = np.flatnonzero(row >= kth)
            top = cand[np.argsort(-row[cand], kind="stable")][:k]
            out.append([(ids[i], float(row[i])) for i in top])
        return out

    def _dense_lance(self, qvecs: np.ndarray, k: int, levels: tuple[str, ...],
                     doc_weights: dict[str, float] | None = None) -> list[list[tuple[str, float]]]:
        """ANN search in Lance; all queries in one batched search (several times
        faster than one search per query). A document prior searches the named documents
        apart and merges the two lists by weighted similarity."""
        where = "level IN (" + ",".join(f"'{lv}'" for lv in levels) + ") AND NOT excluded"
        if doc_weights is None:
            return [[(n, sim) for n, sim, _ in hits] for hits in self._lance_search(qvecs, k, where)]
        named = "doc_id IN (" + ",".join("'" + d.replace("'", "''") + "'" for d in doc_weights) + ")"
        hits = self._lance_search(qvecs, k, f"{where} AND {named}") if doc_weights else [[] for _ in qvecs]
        out = []
        for named_hits, all_hits in zip(hits, self._lance_search(qvecs, k, where)):
            best = {n: sim * doc_weights.get(d, 1.0) if sim > 0 else sim for n, sim, d in [*named_hits, *all_hits]}
            out.append(sorted(best.items(), key=lambda h: -h[1])[:k])
        return out

    def _lance_search(self, qvecs: np.ndarray, k: int, where: str) -> list[list[tuple[str, float, str]]]:
        """Per query, the top-k (node_id, cosine similarity, doc_id) of the rows matching `where`."""
        query = list(qvecs) if len(qvecs) > 1 else qvecs[0]
        q = (self._tbl.search(query).distance_type("cosine").where(where, prefilter=True)
             .nprobes(20).refine_factor(10))
        rows = q.select(["node_id", "doc_id", "_distance"]).limit(k).to_arrow()
        qi = rows["query_index"].to_pylist() if "query_index" in rows.column_names else [0] * rows.num_rows
        out: list[list[tuple[str, float, str]]] = [[] for _ in range(len(qvecs))]
        for i, n, d, doc in zip(qi, rows["node_id"].to_pylist(), rows["_distance"].to_pylist(),
                                rows["doc_id"].to_pylist()):
            out[i].append((n, 1.0 - float(d), doc))
        for hits in out:
            hits.sort(key=lambda h: -h[1])
        return out

    def named_docs(self, question: str, share: float = 0.75) -> list[NamedDoc]:
        """The documents a question names (authors, title, metadata names, title block, narrowed
        by fiscal period and document type), best first, from the index's document cards."""
        return self.namer.name(question, share)

    def term_weights(self, text: str) -> dict[str, float]:
        """The BM25 idf of each distinct keyword token of `text` (0 for tokens no unit has)."""
        return {t: self._idf.get(t, 0.0) for t in set(tokenize(text))}

    def keyword(self, query: str, k: int, doc_weights: dict[str, float] | None = None,
                only: set[str] | None = None) -> list[tuple[list[str], float]]:
        """Top-k (node ids, BM25 score) over paragraphs, table rows and sentence windows. With
        `doc_weights` the units of those documents score times their weight (a prior); with `only`, just
        the units whose first node is one of those ids."""
        toks = tokenize(query)
        if doc_weights is None and only is None:
            return [(self._unit_ids[i], s) for i, s in self._kw.search(toks, k)]
        if not toks or k <= 0:
            return []
        scores = self._kw.scores(toks) * doc_weight_array(self._unit_docs, doc_weights or {})
        if only is not None:
            if self._unit_rows is None:
                self._unit_rows = {}
                for i, ids in enumerate(self._unit_ids):
                    self._unit_rows.setdefault(ids[0], []).append(i)
            rows = np.asarray(sorted({i for n in only for i in self._unit_rows.get(n, ())}), dtype=int)
            top = rows[np.argsort(-scores[rows], kind="stable")[:k]] if len(rows) else rows
        else:
            top = np.argsort(-scores, kind="stable")[:k]
        return [(self._unit_ids[i], float(scores[i])) for i in top if scores[i] > 0]
