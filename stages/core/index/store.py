"""The searchable index: a LanceDB table of node vectors and a BM25 unit table.

Dense: one Lance table (node_id, level, doc_id, text, page, excluded, vector),
searched by cosine with a level prefilter; an IVF_PQ index is built only above
`index.ann_min_rows` rows (below it exact search is both exact and faster).
Keyword: paragraphs, table rows and ~500-char sentence windows of long
paragraphs, each tokenised together with its document's
author surnames and year, because questions name papers by author and year
("the 2022 paper by Dodge et al.") and no passage says that.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import lancedb
import numpy as np
import polars as pl

from stages.core.index.keywords import KeywordIndex, tokenize

TABLE = "nodes"
SEARCH_LEVELS = ("sentence", "paragraph")


@dataclass
class IndexParams:
    """The `index:` section of params.yaml."""

    ann_min_rows: int = 500_000
    bm25_window_chars: int = 500


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


def doc_profiles(metadata: pl.DataFrame) -> pl.DataFrame:
    """What a question naming a paper can match, per document: its title, author surnames and
    year (metadata.csv), tokenised; searched as a document prior, never added to every unit."""
    desc = doc_descriptors(metadata)
    rows = [(r["id"], tokenize(f"{r.get('title') or ''} {desc.get(r['id'], '')}")) for r in metadata.iter_rows(named=True)]
    return pl.DataFrame({"doc_id": [r[0] for r in rows], "tokens": [r[1] for r in rows]},
                        schema={"doc_id": pl.String, "tokens": pl.List(pl.String)})


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


def bm25_units(nodes: pl.DataFrame, metadata: pl.DataFrame, window_chars: int = 0) -> pl.DataFrame:
    """Keyword units with their tokens: paragraphs, every sentence of a table (its rows),
    and, when `window_chars` > 0, the ~`window_chars` sentence windows of every
    paragraph longer than twice that, in addition to the whole paragraph.

    Why windows: BM25's length normalisation buries a long paragraph whose one
    sentence matches (measured: the 1,136-char paragraph holding q153's evidence was
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
        elif window_chars > 0 and len(text) > 2 * window_chars and len(sents) > 1:
            text_of = dict(sents)
            for ids in sentence_windows(sents, window_chars):
                rows.append((ids[0], ids, p["doc_id"], "sentence", p["excluded"], " ".join(text_of[i] for i in ids)))
    tokens = [tokenize(f"{desc.get(doc, doc)} {text}") for _, _, doc, _, _, text in rows]
    return pl.DataFrame(
        {"node_id": [r[0] for r in rows], "node_ids": [r[1] for r in rows], "doc_id": [r[2] for r in rows],
         "level": [r[3] for r in rows], "excluded": [r[4] for r in rows], "tokens": tokens},
        schema={"node_id": pl.String, "node_ids": pl.List(pl.String), "doc_id": pl.String, "level": pl.String,
                "excluded": pl.Boolean, "tokens": pl.List(pl.String)},
    )


def build_index(nodes: pl.DataFrame, vectors: pl.DataFrame, metadata: pl.DataFrame, out_dir: Path,
                params: IndexParams, model: str) -> dict[str, object]:
    """Write the Lance table and BM25 units under `out_dir`; return index stats."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dim = vectors["vector"].dtype.size  # type: ignore[union-attr]
    table = (
        vectors.join(nodes.select("node_id", "text", "page", excluded_mask(nodes).alias("excluded")), on="node_id")
        .select("node_id", "level", "doc_id", "text", "page", "excluded", "vector")
    )
    db = lancedb.connect(str(out_dir / "lance"))
    tbl = db.create_table(TABLE, data=table.to_arrow(), mode="overwrite")
    ann = table.height >= params.ann_min_rows
    if ann:
        tbl.create_index(metric="cosine", vector_column_name="vector",
                         num_partitions=max(1, int(np.sqrt(table.height))), num_sub_vectors=max(1, dim // 8))
    units = bm25_units(nodes, metadata, params.bm25_window_chars)
    units.write_parquet(out_dir / "bm25_units.parquet")
    doc_profiles(metadata).write_parquet(out_dir / "doc_profiles.parquet")
    info = {"model": model, "dim": dim, "rows": table.height, "ann": ann, "bm25_units": units.height}
    (out_dir / "index.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


class Index:
    """Read side: dense search and BM25 over the persisted units.

    Below `ann_min_rows` the Lance table's vectors are held in memory and searched
    exactly by one matrix product (about 2 ms for 27k x 384 on this CPU, where a Lance
    flat scan costs 70-100 ms per call); above it the Lance ANN index is queried."""

    def __init__(self, out_dir: Path) -> None:
        self.info = json.loads((out_dir / "index.json").read_text(encoding="utf-8"))
        self._tbl = lancedb.connect(str(out_dir / "lance")).open_table(TABLE)
        self._exact: dict[tuple[tuple[str, ...], bool], tuple[np.ndarray, np.ndarray]] = {}
        if not self.info.get("ann"):
            rows = self._tbl.to_arrow().select(["node_id", "level", "excluded", "vector"])
            mat = np.asarray(rows["vector"].combine_chunks().flatten().to_numpy(), dtype=np.float32)
            mat = mat.reshape(rows.num_rows, -1)
            norms = np.linalg.norm(mat, axis=1, keepdims=True)
            self._mat = mat / np.where(norms == 0, 1.0, norms)
            self._ids = np.asarray(rows["node_id"].to_pylist(), dtype=object)
            self._levels = np.asarray(rows["level"].to_pylist(), dtype=object)
            self._excluded = np.asarray(rows["excluded"].to_pylist(), dtype=bool)
        units = pl.read_parquet(out_dir / "bm25_units.parquet")
        self.units = units
        self._kw = {
            excl: KeywordIndex(units.filter(~pl.col("excluded") | pl.lit(excl))["tokens"].to_list())
            for excl in (False, True)
        }
        self._unit_ids = {
            excl: units.filter(~pl.col("excluded") | pl.lit(excl))["node_ids"].to_list() for excl in (False, True)
        }
        self._unit_docs = {
            excl: np.asarray(units.filter(~pl.col("excluded") | pl.lit(excl))["doc_id"].to_list(), dtype=object)
            for excl in (False, True)
        }
        prof_path = out_dir / "doc_profiles.parquet"
        prof = pl.read_parquet(prof_path) if prof_path.exists() else pl.DataFrame(
            {"doc_id": [], "tokens": []}, schema={"doc_id": pl.String, "tokens": pl.List(pl.String)})
        self._profile_docs = prof["doc_id"].to_list()
        self._profiles = KeywordIndex(prof["tokens"].to_list())

    def dense(self, qvecs: np.ndarray, k: int, levels: tuple[str, ...] = SEARCH_LEVELS,
              include_excluded: bool = False) -> list[list[tuple[str, float]]]:
        """Per query vector, the top-k (node_id, cosine similarity) among `levels`."""
        qvecs = np.atleast_2d(np.asarray(qvecs, dtype=np.float32))
        if self.info.get("ann"):
            return self._dense_lance(qvecs, k, levels, include_excluded)
        return self._dense_exact(qvecs, k, levels, include_excluded)

    def _subset(self, levels: tuple[str, ...], include_excluded: bool) -> tuple[np.ndarray, np.ndarray]:
        """The searchable rows (matrix, ids) for a level filter, built once per filter."""
        key = (tuple(levels), include_excluded)
        if key not in self._exact:
            keep = np.isin(self._levels, list(levels))
            if not include_excluded:
                keep &= ~self._excluded
            self._exact[key] = (np.ascontiguousarray(self._mat[keep]), self._ids[keep])
        return self._exact[key]

    def _dense_exact(self, qvecs: np.ndarray, k: int, levels: tuple[str, ...],
                     include_excluded: bool) -> list[list[tuple[str, float]]]:
        mat, ids = self._subset(levels, include_excluded)
        if len(ids) == 0:
            return [[] for _ in qvecs]
        norms = np.linalg.norm(qvecs, axis=1, keepdims=True)
        sims = (qvecs / np.where(norms == 0, 1.0, norms)) @ mat.T
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
                     include_excluded: bool) -> list[list[tuple[str, float]]]:
        """ANN search in Lance; all queries in one batched search (several times
        faster than one search per query)."""
        where = "level IN (" + ",".join(f"'{lv}'" for lv in levels) + ")"
        if not include_excluded:
            where += " AND NOT excluded"
        query = list(qvecs) if len(qvecs) > 1 else qvecs[0]
        q = (self._tbl.search(query).distance_type("cosine").where(where, prefilter=True)
             .nprobes(20).refine_factor(10))
        rows = q.select(["node_id", "_distance"]).limit(k).to_arrow()
        qi = rows["query_index"].to_pylist() if "query_index" in rows.column_names else [0] * rows.num_rows
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(qvecs))]
        for i, n, d in zip(qi, rows["node_id"].to_pylist(), rows["_distance"].to_pylist()):
            out[i].append((n, 1.0 - float(d)))
        for hits in out:
            hits.sort(key=lambda h: -h[1])
        return out

    def named_docs(self, query: str, min_share: float = 0.6) -> set[str]:
        """Documents the question names (title words, author surnames, year): those whose
        profile scores at least `min_share` of the best, when the best matches two or more
        profile words ('the 2022 paper by Dodge et al.', 'the Power Hungry Processing study')."""
        toks = tokenize(query)
        if not self._profile_docs or not toks:
            return set()
        scores = self._profiles.scores(toks)
        best = int(np.argmax(scores))
        prof = self._profiles_tokens()[best]
        if scores[best] <= 0 or len(set(toks) & prof) < 2:
            return set()
        return {d for d, s in zip(self._profile_docs, scores) if s >= min_share * scores[best]}

    def _profiles_tokens(self) -> list[set[str]]:
        if not hasattr(self, "_prof_sets"):
            vocab = {i: w for w, i in self._profiles._vocab.items()}
            w = self._profiles._weights
            self._prof_sets = [set() for _ in self._profile_docs]
            if w is not None:
                coo = w.tocoo()
                for r, c in zip(coo.row, coo.col):
                    self._prof_sets[r].add(vocab[c])
        return self._prof_sets

    def keyword(self, query: str, k: int, include_excluded: bool = False,
                doc_prior: float = 0.0) -> list[tuple[list[str], float]]:
        """Top-k (node ids, BM25 score) over paragraphs, table rows and sentence windows; with
        `doc_prior` > 0 the units of the documents the question names score (1 + doc_prior) times."""
        ids = self._unit_ids[include_excluded]
        kw = self._kw[include_excluded]
        if doc_prior <= 0:
            return [(ids[i], s) for i, s in kw.search(tokenize(query), k)]
        named = self.named_docs(query)
        toks = tokenize(query)
        if not named or not toks or k <= 0:
            return [(ids[i], s) for i, s in kw.search(toks, k)]
        scores = kw.scores(toks) * np.where(np.isin(self._unit_docs[include_excluded], list(named)), 1 + doc_prior, 1.0)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in top if scores[i] > 0]
