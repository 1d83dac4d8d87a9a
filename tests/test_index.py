"""The LanceDB + BM25 index: batched dense search, reference exclusion, author/year keywords."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.index.store import (
    Index,
    IndexParams,
    bm25_units,
    build_index,
    doc_descriptors,
    sentence_windows,
)


def small_inputs():
    """Nodes (3 paragraphs, one a reference entry, each with one sentence), their vectors, metadata."""
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
    return nodes, vectors, meta, np.stack(vecs)


def small_index(tmp_path):
    nodes, vectors, meta, vecs = small_inputs()
    info = build_index(nodes, vectors, meta, tmp_path, IndexParams(ann_min_rows=10_000), "toy")
    return Index(tmp_path), vecs, info


def test_batched_dense_equals_single_queries_and_excludes_references(tmp_path):
    ix, vecs, info = small_index(tmp_path)
    assert info == {"model": "toy", "dim": 8, "rows": 6, "ann": False, "bm25_units": 3}
    batch = ix.dense(vecs[[0, 4]], 4)
    singles = [ix.dense(vecs[i], 4)[0] for i in (0, 4)]
    # same ids in the same order; cosines only within a tolerance: a batched and a
    # single-row matrix product may use different BLAS kernels (differ in the last bit by CPU)
    assert [[n for n, _ in hits] for hits in batch] == [[n for n, _ in hits] for hits in singles]
    for b_hits, s_hits in zip(batch, singles, strict=True):
        assert [s for _, s in b_hits] == pytest.approx([s for _, s in s_hits], abs=1e-6)
    assert batch[0][0][1] > 0.99  # a vector finds itself first
    found = {n for hits in batch for n, _ in hits}
    assert not any(n.startswith("a:sec2") for n in found)  # the reference entry is excluded
    assert not any(n.startswith("a:sec2") for n, _ in ix.dense(vecs[2], 6)[0])  # even queried by its own vector
    assert all(n[0] != "a:sec2:p1" for n, _ in ix.keyword("Smith GPU power 2020", 3))


def test_keyword_search_matches_author_and_year_not_in_text(tmp_path):
    ix, _, _ = small_index(tmp_path)
    assert ix.keyword("the 2021 paper by Hopper", 3)[0][0] == ["b:sec1:p1"]
    assert [n for n, _ in ix.keyword("GPU watts", 3)] == [["a:sec1:p1"]]


def test_doc_descriptors_are_surnames_and_year():
    meta = pl.DataFrame({"id": ["x"], "title": ["T"], "year": ["2022"],
                         "citation": ["Jesse Dodge, Emma Strubell (2022). Measuring carbon. FAccT."]})
    assert doc_descriptors(meta) == {"x": "Dodge Strubell 2022"}


def test_exact_in_memory_search_matches_lance(tmp_path):
    """The in-memory exact path returns what a Lance flat search returns (ids and cosines)."""
    ix, vecs, _ = small_index(tmp_path)
    rng = np.random.default_rng(3)
    queries = rng.normal(size=(5, 8)).astype(np.float32)
    exact = ix.dense(queries, 3)
    lance = ix._dense_lance(queries, 3, ("sentence", "paragraph"))
    for e, la in zip(exact, lance):
        # a paragraph and its only sentence share a vector: compare as score-sorted sets
        assert sorted(round(s, 5) for _, s in e) == sorted(round(s, 5) for _, s in la)
        assert {n.split(":s")[0] for n, _ in e} == {n.split(":s")[0] for n, _ in la}
    assert ix.dense(queries, 2, levels=("sentence",))[0][0][0].endswith(":s1")


def test_dense_ties_are_deterministic_and_keep_k(tmp_path):
    ix, vecs, _ = small_index(tmp_path)
    hits = ix.dense(vecs[0], 1)[0]  # paragraph and sentence tie at cosine 1
    assert len(hits) == 1 and hits == ix.dense(vecs[0], 1)[0]
    assert hits[0][0] == "a:sec1:p1"  # the earlier row wins the tie


def test_sentence_windows_group_to_size_and_fold_a_short_tail():
    sents = [(f"s{i}", "x" * 190) for i in range(7)]  # 191 chars each with the joining space
    assert sentence_windows(sents, 500) == [["s0", "s1", "s2"], ["s3", "s4", "s5", "s6"]]
    assert sentence_windows(sents[:2], 500) == [["s0", "s1"]]
    assert sentence_windows([], 500) == []


def test_long_paragraph_gets_windows_besides_itself_and_a_window_is_found_first(monkeypatch):
    from stages.core.index import store

    filler = [f"Filler sentence number {i} about datacenter cooling and procurement policy." for i in range(14)]
    body = filler[:9] + ["The training job ran for 172 days and logged 4789 jobs."] + filler[9:]
    rows = [("d:sec1:p1", "d:sec1", "paragraph", "d", " ".join(body), None)]
    rows += [(f"d:sec1:p1:s{i}", "d:sec1:p1", "sentence", "d", t, None) for i, t in enumerate(body)]
    rows += [("d:sec1:p2", "d:sec1", "paragraph", "d", "A short paragraph about jobs.", None),
             ("d:sec1:p2:s0", "d:sec1:p2", "sentence", "d", "A short paragraph about jobs.", None)]
    nodes = pl.DataFrame(rows, orient="row",
                         schema=["node_id", "parent_id", "level", "doc_id", "text", "attachment_type"])
    meta = pl.DataFrame({"id": ["d"], "title": ["T"], "year": ["2019"], "citation": ["A. Strubell (2019). T."]})
    monkeypatch.setattr(store, "BM25_WINDOW_CHARS", 300)  # windows of ~4 of these sentences
    units = bm25_units(nodes, meta)
    ids = units["node_ids"].to_list()
    assert ids[0] == ["d:sec1:p1"] and ["d:sec1:p2"] in ids  # paragraphs stay units
    windows = [w for w in ids if w[0].count(":") == 3]
    assert len(windows) >= 3 and sum(len(w) for w in windows) == len(body)  # windows tile the paragraph
    assert all(units.filter(pl.col("node_id") == w[0])["level"].item() == "sentence" for w in windows)
    # the window holding the matching sentence outranks the long paragraph it came from
    from stages.core.index.keywords import KeywordIndex, tokenize
    top = KeywordIndex(units["tokens"].to_list()).search(tokenize("172 days 4789 jobs"), 1)[0][0]
    assert "d:sec1:p1:s9" in ids[top] and len(ids[top]) < len(body)


def test_named_docs_come_from_the_cards_stored_with_the_index(tmp_path):
    ix, _, _ = small_index(tmp_path)
    assert (tmp_path / "doc_cards.json").exists()
    assert ix.named_docs("GPU power") == []  # one title word names nothing
    assert [d.doc_id for d in ix.named_docs("In the 2024 paper by Lovelace, what power?")] == ["a"]
    assert [d.doc_id for d in ix.named_docs("the Energy study by Hopper (2021)")] == ["b"]


def test_doc_weights_prior_in_both_lists(tmp_path):
    ix, vecs, _ = small_index(tmp_path)
    plain = ix.keyword("electricity of the 2024 Lovelace GPU", 3)
    boosted = ix.keyword("electricity of the 2024 Lovelace GPU", 3, doc_weights={"a": 2.0})
    assert [n for n, _ in boosted][0] == ["a:sec1:p1"]
    a_plain = dict((n[0], s) for n, s in plain)["a:sec1:p1"]
    assert dict((n[0], s) for n, s in boosted)["a:sec1:p1"] == pytest.approx(2 * a_plain)
    assert ix.keyword("GPU", 3, doc_weights={}) == ix.keyword("GPU", 3)  # no weights: plain BM25
    # dense: a prior reorders
    prior = ix.dense(vecs[4], 4, doc_weights={"a": 100.0})[0]
    plain_dense = ix.dense(vecs[4], 4)[0]
    assert plain_dense[0][0].startswith("b:")
    a_sim = dict(plain_dense)["a:sec1:p1"]
    assert a_sim > 0 and prior[0] == ("a:sec1:p1", pytest.approx(100 * a_sim, rel=1e-5))
    lance_prior = ix._dense_lance(vecs[[4]], 4, ("sentence", "paragraph"), {"a": 100.0})[0]
    assert sorted(round(s, 4) for _, s in lance_prior) == sorted(round(s, 4) for _, s in prior)


def lance_rows_of(out_dir):
    import lancedb

    return lancedb.connect(str(out_dir / "lance")).open_table("nodes").to_arrow()


def test_vectors_streamed_from_parquet_in_small_batches_give_the_same_table(tmp_path, monkeypatch):
    """The index stage streams the vectors file into Lance a batch at a time (bounded memory): the
    table is the one the whole frame gives, row for row, also when batches split the rows."""
    from stages.core.common.artifacts import write_parquet
    from stages.core.index import store

    nodes, vectors, meta, _ = small_inputs()
    params = IndexParams(ann_min_rows=10_000)
    whole = build_index(nodes, vectors, meta, tmp_path / "whole", params, "toy")
    vec_path = write_parquet(vectors, tmp_path / "vectors.parquet")
    monkeypatch.setattr(store, "LANCE_BATCH_ROWS", 4)  # 6 rows: two batches
    assert build_index(nodes, vec_path, meta, tmp_path / "streamed", params, "toy") == whole
    assert lance_rows_of(tmp_path / "streamed").equals(lance_rows_of(tmp_path / "whole"))
    assert lance_rows_of(tmp_path / "whole")["node_id"].to_pylist() == vectors["node_id"].to_list()
    # a vector whose node the tree lacks gets no row (as the whole frame's inner join did)
    fewer = nodes.filter(pl.col("node_id") != "b:sec1:p1")
    assert build_index(fewer, vec_path, meta, tmp_path / "fewer", params, "toy")["rows"] == 5


def test_missing_vectors_file_names_the_stage_that_writes_it(tmp_path):
    nodes, _, meta, _ = small_inputs()
    with pytest.raises(FileNotFoundError, match="vectors.parquet: artifact not found.*embed stage"):
        build_index(nodes, tmp_path / "vectors.parquet", meta, tmp_path / "ix", IndexParams(), "toy")
