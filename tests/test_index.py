"""The LanceDB + BM25 index: batched dense search, reference exclusion, author/year keywords."""
from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.index import Index, IndexParams, build_index, doc_descriptors


def small_index(tmp_path):
    texts = {"a:sec1:p1": "The A100 GPU draws 400 W.", "a:sec2:p1": "[1] Smith. GPU power, 2020.",
             "b:sec1:p1": "Training used 24 MWh of electricity."}
    rows, vecs = [], []
    rng = np.random.default_rng(0)
    for pid, text in texts.items():
        doc = pid.split(":")[0]
        ref = pid == "a:sec2:p1"
        rows.append((pid, pid.rsplit(":", 1)[0], "paragraph", doc, text, 1, ref))
        rows.append((pid + ":s1", pid, "sentence", doc, text, 1, ref))
        v = rng.normal(size=8).astype(np.float32)
        vecs += [v / np.linalg.norm(v)] * 2
    nodes = pl.DataFrame(rows, orient="row",
                         schema=["node_id", "parent_id", "level", "doc_id", "text", "page", "is_reference"]
                         ).with_columns(pl.lit(None, dtype=pl.String).alias("attachment_type"))
    vectors = nodes.select("node_id", "level", "doc_id").with_columns(
        pl.Series("vector", np.stack(vecs), dtype=pl.Array(pl.Float32, 8)))
    meta = pl.DataFrame({"id": ["a", "b"], "title": ["GPU", "Energy"], "year": ["2024", "2021"],
                         "citation": ["Ada Lovelace, Alan Turing (2024). GPU.", "Grace Hopper. (2021). Energy."]})
    info = build_index(nodes, vectors, meta, tmp_path, IndexParams(ann_min_rows=10_000), "toy")
    return Index(tmp_path), np.stack(vecs), info


def test_batched_dense_equals_single_queries_and_excludes_references(tmp_path):
    ix, vecs, info = small_index(tmp_path)
    assert info == {"model": "toy", "dim": 8, "rows": 6, "ann": False, "bm25_units": 3}
    batch = ix.dense(vecs[[0, 4]], 4)
    singles = [ix.dense(vecs[i], 4)[0] for i in (0, 4)]
    assert batch == singles
    assert batch[0][0][1] > 0.99  # a vector finds itself first
    found = {n for hits in batch for n, _ in hits}
    assert not any(n.startswith("a:sec2") for n in found)  # the reference entry is excluded
    with_refs = {n for n, _ in ix.dense(vecs[2], 6, include_excluded=True)[0]}
    assert "a:sec2:p1" in with_refs


def test_keyword_search_matches_author_and_year_not_in_text(tmp_path):
    ix, _, _ = small_index(tmp_path)
    assert ix.keyword("the 2021 paper by Hopper", 3)[0][0] == "b:sec1:p1"
    assert [n for n, _ in ix.keyword("GPU watts", 3)] == ["a:sec1:p1"]


def test_doc_descriptors_are_surnames_and_year():
    meta = pl.DataFrame({"id": ["x"], "title": ["T"], "year": ["2022"],
                         "citation": ["Jesse Dodge, Emma Strubell (2022). Measuring carbon. FAccT."]})
    assert doc_descriptors(meta) == {"x": "Dodge Strubell 2022"}
