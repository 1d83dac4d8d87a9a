"""Cross-query rerank, context expansion, tree dedup, fusion and the token budget."""
from __future__ import annotations

import polars as pl
import pytest

from stages.core.retrieval import RetrieveParams, build_context, count_tokens, rerank
from stages.core.tree_view import TreeView, is_ancestor


def make_tree() -> TreeView:
    rows = [("d", None, "document", 0, "Doc")]
    rows += [("d:sec1", "d", "section", 0, "Intro")]
    sents = {
        "d:sec1:p1": ["Alpha one.", "Alpha two.", "Alpha three.", "Alpha four.", "Alpha five."],
        "d:sec1:p2": ["Beta one.", "Beta two."],
        "d:sec1:p3": ["Gamma one."],
    }
    for j, (pid, ss) in enumerate(sents.items()):
        rows.append((pid, "d:sec1", "paragraph", j, " ".join(ss)))
        rows += [(f"{pid}:s{k + 1}", pid, "sentence", k, s) for k, s in enumerate(ss)]
    df = pl.DataFrame(rows, schema=["node_id", "parent_id", "level", "ordinal", "text"], orient="row")
    return TreeView(df.with_columns(pl.lit("d").alias("doc_id"), pl.lit(1).alias("page")))


def test_frequency_is_counted_before_dedup():
    per_query = [[("a", 0.5), ("b", 0.9)], [("a", 0.4)], [("a", 0.3), ("c", 0.95)]]
    ranked = rerank(per_query, "frequency", 0.5)
    assert [(h.node_id, h.frequency) for h in ranked] == [("a", 3), ("c", 1), ("b", 1)]
    assert ranked[0].score == pytest.approx(1.2)


def test_score_and_combined_rerank_orders():
    per_query = [[("a", 0.5), ("b", 0.9)], [("a", 0.45)]]
    assert [h.node_id for h in rerank(per_query, "score", 0.5)] == ["a", "b"]  # 0.95 > 0.9
    # alpha=0: pure min-max score; alpha=1: pure frequency
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.1)]], "combined", 0.0)] == ["b", "a"]
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.1)]], "combined", 1.0)] == ["a", "b"]


def test_sentence_expands_to_sibling_window_and_windows_merge():
    tree = make_tree()
    p = RetrieveParams(siblings=1, bm25_k=0, fusion="append", max_context_tokens=10_000)
    units = build_context(tree, [[("d:sec1:p1:s2", 0.9), ("d:sec1:p1:s3", 0.8)]], [], p)
    assert len(units) == 1
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4"]
    assert units[0].text == "Alpha one. Alpha two. Alpha three. Alpha four."


def test_tree_dedup_drops_descendants_of_included_paragraph():
    tree = make_tree()
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000)
    units = build_context(tree, [[("d:sec1:p2:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p3:s1", 0.7)]], [], p)
    assert [u.key for u in units] == ["d:sec1:p2", "d:sec1:p3:s1"]
    assert units[0].text == "Beta one. Beta two."
    assert not any(is_ancestor(a.key, b.key) for a in units for b in units)


def test_bm25_append_and_rrf_fusion():
    tree = make_tree()
    dense = [[("d:sec1:p1:s1", 0.9)]]
    kw = [(["d:sec1:p3"], 7.0), (["d:sec1:p1"], 3.0)]
    app = build_context(tree, dense, kw, RetrieveParams(siblings=0, fusion="append", max_context_tokens=10_000))
    # p1 (bm25) contains the dense sentence: merged into one unit, found by both
    assert [u.key for u in app] == ["d:sec1:p1", "d:sec1:p3"]
    assert app[0].source == "both"
    rrf = build_context(tree, dense, kw, RetrieveParams(siblings=0, fusion="rrf", max_context_tokens=10_000,
                                                        bm25_weight=1.0))
    assert [u.key for u in rrf] == ["d:sec1:p1", "d:sec1:p3"]
    assert rrf[0].score == pytest.approx(1 / 61 + 1 / 62)  # unweighted: dense rank 1 + bm25 rank 2


def test_bm25_sentence_window_hit_becomes_one_unit_and_merges_with_dense_window():
    tree = make_tree()
    kw = [(["d:sec1:p1:s3", "d:sec1:p1:s4"], 5.0), (["d:sec1:p3"], 2.0)]
    units = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], kw,
                          RetrieveParams(siblings=1, fusion="append", max_context_tokens=10_000))
    # dense window s1..s2 and the BM25 window s3..s4 touch: one unit s1..s4, found by both
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4"]
    assert units[0].text == "Alpha one. Alpha two. Alpha three. Alpha four."
    assert units[0].source == "both"
    assert [u.key for u in units[1:]] == ["d:sec1:p3"]


def test_budget_drops_lowest_ranked_units_first():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=9, chars_per_token=4.0)
    units = build_context(tree, dense, [], p)
    assert [u.key for u in units] == ["d:sec1:p3:s1", "d:sec1:p2"]
    assert sum(u.n_tokens for u in units) <= 9
    assert count_tokens("Beta one. Beta two.", 4.0) == 5


def test_top_k_final_caps_units():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    units = build_context(tree, dense, [], RetrieveParams(siblings=0, bm25_k=0, top_k_final=2, fusion="append"))
    assert len(units) == 2


def test_retry_context_keeps_previous_units_first_and_adds_new_ones():
    from stages.core.retrieval import extend_context

    tree = make_tree()
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000)
    first = build_context(tree, [[("d:sec1:p3:s1", 0.9)]], [], p)
    wider = build_context(tree, [[("d:sec1:p2", 0.95), ("d:sec1:p3:s1", 0.9), ("d:sec1:p1:s1", 0.5)]], [], p)
    ext = extend_context(first, wider, p)
    assert [u.key for u in ext] == ["d:sec1:p3:s1", "d:sec1:p2", "d:sec1:p1:s1"]
    assert ext[0] is first[0]
