"""Multi-query hybrid retrieval with consensus reranking and tree-aware context.

For one question and its planner queries:
1. dense top `top_k` per query over sentence and paragraph nodes;
2. cross-query rerank: ALPHA·minmax(frequency) + (1−ALPHA)·minmax(summed similarity), frequency
   counted over the raw per-query hits, before any dedup;
3. node-id dedup, then context expansion: a matched sentence becomes a window of
   ±SIBLINGS sentences of its paragraph; a matched paragraph stays whole;
4. tree dedup: a unit whose ancestor is already in the list is merged into it;
5. BM25 units (paragraphs, table rows, sentence windows of long paragraphs) fused with the dense
   list by weighted reciprocal rank fusion;
6. a long table cut to the rows the question asks about (table_trim.py), and units that hold a number
   in the question's answer unit (or are a table row of a unit-bearing question) scoring
   x(1 + UNIT_BOOST) (answer_unit.py);
7. `top_k_final` units, then a hard `max_context_tokens` budget that ends the context at the first
   unit that does not fit.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from stages.core.plan.metrics import Item
from stages.core.retrieve.answer_unit import UNIT_BOOST, holds_unit, unit_pattern
from stages.core.retrieve.params import Depth
from stages.core.retrieve.table_trim import trimmed_table
from stages.core.retrieve.units import RetrievedUnit, count_tokens
from stages.core.tree.navigate import TreeView, is_ancestor

__all__ = ["Hit", "RetrievedUnit", "build_context", "count_tokens", "extend_context", "rerank"]

ALPHA = 0.5  # rerank: weight of how many queries hit a node vs their summed similarity (equal shares)
SIBLINGS = 1  # sentences kept on each side of a matched sentence: its claim often spans the next one
RRF_K = 60  # reciprocal rank fusion's usual constant: the top ranks of both lists weigh about alike
BM25_WEIGHT = 2.0  # weight of the BM25 list vs the dense list in the fusion: exact terms (names, numbers) matter most


@dataclass
class Hit:
    """A node after cross-query aggregation."""

    node_id: str
    frequency: int = 0
    score: float = 0.0


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return np.ones_like(x) if hi - lo < 1e-12 else (x - lo) / (hi - lo)


def rerank(per_query: Sequence[Sequence[tuple[str, float]]]) -> list[Hit]:
    """Aggregate per-query hit lists into one ranking (frequency counted before dedup)."""
    hits: dict[str, Hit] = {}
    for results in per_query:
        for node_id, sim in results:
            h = hits.setdefault(node_id, Hit(node_id))
            h.frequency += 1
            h.score += sim
    items = list(hits.values())
    if not items:
        return []
    f = _minmax(np.array([h.frequency for h in items], dtype=float))
    s = _minmax(np.array([h.score for h in items], dtype=float))
    combined = ALPHA * f + (1 - ALPHA) * s
    order = sorted(range(len(items)), key=lambda i: (-combined[i], -items[i].score, items[i].node_id))
    return [items[i] for i in order]


def _unit_for(tree: TreeView, node_id: str) -> tuple[str, list[str]]:
    """(key, node ids) of the context unit around a matched node."""
    n = tree[node_id]
    if n.level == "sentence":
        para = tree.paragraph_of(node_id)
        if para and tree[para].attachment_type == "table":
            return node_id, [node_id]  # a table row stands alone (its text carries the header)
        return node_id, tree.window(node_id, SIBLINGS)
    return node_id, [node_id]


def _merge(units: list[RetrievedUnit], tree: TreeView) -> list[RetrievedUnit]:
    """Tree dedup: fold a unit into an earlier/later unit that contains it; merge sibling windows."""
    out: list[RetrievedUnit] = []
    for u in units:
        merged = False
        for v in out:
            if _covers(v, u):
                # v already holds u (or an ancestor of it): keep v, remember the evidence
                v.frequency = max(v.frequency, u.frequency)
                v.sources |= u.sources
                merged = True
                break
            if _covers(u, v):
                # u is an ancestor of v: v grows into u, keeping v's (better) rank
                v.key, v.node_ids, v.text, v.page, v.media = u.key, u.node_ids, u.text, u.page, u.media
                v.frequency = max(v.frequency, u.frequency)
                v.sources |= u.sources
                merged = True
                break
            if _same_parent_overlap(tree, v.node_ids, u.node_ids):
                ids = sorted(set(v.node_ids) | set(u.node_ids), key=_sentence_order(tree))
                v.node_ids, v.text = ids, " ".join(tree[i].text for i in ids)
                v.frequency = max(v.frequency, u.frequency)
                v.sources |= u.sources
                merged = True
                break
        if not merged:
            out.append(u)
    # a unit grown into an ancestor may now contain later units: one more pass
    if len(out) < len(units):
        final: list[RetrievedUnit] = []
        for u in out:
            if not any(_covers(v, u) for v in final):
                final.append(u)
        return final
    return out


def _sentence_order(tree: TreeView) -> Callable[[str], int]:
    def key(nid: str) -> int:
        parent = tree[nid].parent_id
        sibs = tree.children.get(parent, []) if parent else []
        return sibs.index(nid) if nid in sibs else 0
    return key


def _same_parent_overlap(tree: TreeView, a: list[str], b: list[str]) -> bool:
    """Two sentence windows of one paragraph that overlap or touch."""
    if not a or not b or tree[a[0]].level != "sentence" or tree[b[0]].level != "sentence":
        return False
    pa, pb = tree[a[0]].parent_id, tree[b[0]].parent_id
    if pa != pb or tree.paragraph_of(a[0]) is None:
        return False
    order = _sentence_order(tree)
    ia, ib = sorted(order(x) for x in a), sorted(order(x) for x in b)
    return ia[0] <= ib[-1] + 1 and ib[0] <= ia[-1] + 1


def _make_unit(tree: TreeView, key: str, ids: list[str], score: float, freq: int, source: str) -> RetrievedUnit:
    n = tree[ids[0]]
    text = " ".join(tree[i].text for i in ids)
    para = tree.paragraph_of(ids[0])
    media = tree[para].attachment_type if para else None
    return RetrievedUnit(key, n.doc_id, ids, text, score, freq, {source}, n.page, media=media)


def _fuse(dense_units: list[RetrievedUnit], kw_units: list[RetrievedUnit], tree: TreeView) -> list[RetrievedUnit]:
    """Dense and BM25 units merged by weighted reciprocal rank fusion, best first: a keyword unit that
    covers a dense unit (or vice versa) adds its RRF share to it."""
    fused: dict[int, float] = {}
    pool = dense_units + kw_units
    for rank, _ in enumerate(dense_units):
        fused[rank] = 1.0 / (RRF_K + rank + 1)
    for rank, _ in enumerate(kw_units):
        fused[len(dense_units) + rank] = BM25_WEIGHT / (RRF_K + rank + 1)
    order = sorted(range(len(pool)), key=lambda i: -fused[i])
    for i in order:
        pool[i].score = fused[i]
    merged = _merge([pool[i] for i in order], tree)
    for u in merged:
        u.score = sum(fused[i] for i in range(len(pool)) if _covers(u, pool[i]))
    return sorted(merged, key=lambda u: -u.score)


def build_context(
    tree: TreeView,
    dense_per_query: Sequence[Sequence[tuple[str, float]]],
    keyword_hits: Sequence[tuple[Sequence[str], float]],
    depth: Depth,
    answer_unit: str | None = None,
    focus: dict[str, float] | None = None,
    items: Sequence[Item] = (),
) -> list[RetrievedUnit]:
    """Rank, expand, dedup and fuse the hits of one question into budgeted context units.

    A keyword hit is (node ids of the unit's text, score): one paragraph or table row,
    or the sentences of a window. `answer_unit` (the questions file's column) drives the unit
    boost; `focus` (the question's keyword tokens and their idf) and `items` (the line items of the
    metric it names) drive the table trim."""
    dense_units = []
    for h in rerank(dense_per_query):
        key, ids = _unit_for(tree, h.node_id)
        dense_units.append(_make_unit(tree, key, ids, h.score, h.frequency, "dense"))
    dense_units = _merge(dense_units, tree)
    kw_units = _merge([_make_unit(tree, ids[0], list(ids), s, 0, "bm25") for ids, s in keyword_hits], tree)
    units = _fuse(dense_units, kw_units, tree)

    pattern = unit_pattern(answer_unit)
    if focus:
        units = [trimmed_table(tree, u, focus, items) for u in units]
    if pattern is not None:
        for u in units:
            if holds_unit(u, pattern):
                u.score *= 1 + UNIT_BOOST
        units = sorted(units, key=lambda u: -u.score)  # stable: ties keep the fused order
    return _fill_budget(units, depth)


def _cut(text: str, budget: int) -> str:
    """The longest prefix of `text` whose estimate fits `budget` tokens."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _fill_budget(units: list[RetrievedUnit], depth: Depth) -> list[RetrievedUnit]:
    """The first `top_k_final` units that fit `max_context_tokens`, in rank order: the first unit that
    does not fit ends the context, so a context is always a prefix of the ranking."""
    out: list[RetrievedUnit] = []
    used = 0
    for u in units:
        if len(out) >= depth.top_k_final:
            break
        u.n_tokens = count_tokens(u.text)
        if used + u.n_tokens > depth.max_context_tokens:
            if not out:  # the best unit alone is too long: cut it to the budget
                u.text = _cut(u.text, depth.max_context_tokens)
                u.n_tokens = count_tokens(u.text)
                out.append(u)
            break
        out.append(u)
        used += u.n_tokens
    return out


def _covers(u: RetrievedUnit, v: RetrievedUnit) -> bool:
    """True when unit `u` holds all of `v`'s nodes (same node or an ancestor)."""
    return all(any(a == b or is_ancestor(a, b) for a in u.node_ids) for b in v.node_ids)


def extend_context(prev: list[RetrievedUnit], wider: list[RetrievedUnit], depth: Depth) -> list[RetrievedUnit]:
    """A retry context: the previous context unchanged, then new units from a wider retrieval.

    Keeping the previous units first (and in order) lets the server reuse its cached
    prompt prefix, so a retry pays only for the added text.
    """
    out = list(prev)
    used = sum(u.n_tokens for u in out)
    seen = [nid for u in out for nid in u.node_ids]
    for u in wider:
        if len(out) >= depth.top_k_final:
            break
        if any(a == b or is_ancestor(a, b) or is_ancestor(b, a) for a in u.node_ids for b in seen):
            continue
        n = count_tokens(u.text)
        if used + n > depth.max_context_tokens:
            continue  # a smaller, lower-ranked unit may still fit
        u.n_tokens = n
        out.append(u)
        used += n
        seen += u.node_ids
    return out
