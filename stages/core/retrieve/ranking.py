"""Multi-query hybrid retrieval with consensus reranking and tree-aware context.

For one question and its planner queries:
1. dense top `top_k` per query over sentence and paragraph nodes;
2. cross-query rerank: `frequency` (queries that hit the node, then summed score),
   `score` (summed similarity) or `combined` (α·minmax(freq) + (1−α)·minmax(score)).
   Frequency is counted over the raw per-query hits, before any dedup;
3. node-id dedup, then context expansion: a matched sentence becomes a window of
   ±`siblings` sentences of its paragraph; a matched paragraph stays whole;
4. tree dedup: a unit whose ancestor is already in the list is merged into it;
5. BM25 units (paragraphs, table rows, sentence windows of long paragraphs) appended after the dense list or fused
   with it by reciprocal rank fusion;
6. denser context (optional): units that hold a number in the question's answer unit
   (or are a table row of a unit-bearing question) score x(1 + `unit_boost`), and with
   `table_blocks` rows of one table share one block (caption and header once);
7. `top_k_final` units, then a hard `max_context_tokens` budget that drops the
   lowest-ranked units first.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from stages.core.index.keywords import tokenize
from stages.core.index.vocab import UNIT_SPELLINGS, unit_family_spellings
from stages.core.retrieve.params import RetrieveParams
from stages.core.tree.navigate import TreeView, is_ancestor
from stages.core.tree.tables import caption_abbreviations, table_block, table_parts


@dataclass
class Hit:
    """A node after cross-query aggregation."""

    node_id: str
    frequency: int = 0
    score: float = 0.0


@dataclass
class RetrievedUnit:
    """One block of context: a paragraph, a sentence window or a table row."""

    key: str  # node id that identifies the unit (paragraph id, or first matched sentence)
    doc_id: str
    node_ids: list[str]  # the nodes whose text is sent, in document order
    text: str
    score: float
    frequency: int = 0
    sources: set[str] = field(default_factory=set)
    page: int | None = None
    n_tokens: int = 0
    media: str | None = None  # attachment type (table|image) of the unit's paragraph

    @property
    def source(self) -> str:
        return "both" if len(self.sources) > 1 else next(iter(self.sources), "dense")


def count_tokens(text: str, chars_per_token: float, tokens_per_digit: float = 0.0) -> int:
    """Token estimate used for the context budget (no LLM tokenizer needed offline). With
    ``tokens_per_digit`` a digit costs that much and only the other characters count per
    ``chars_per_token``: tokenizers that split numbers into digits make a numeric table cost about
    twice its chars/4 (bench/retrieval_sweep.py --real-tokens measures the estimate against Qwen's)."""
    if tokens_per_digit <= 0:
        return max(1, math.ceil(len(text) / chars_per_token))
    digits = sum(c.isdigit() for c in text)
    return max(1, math.ceil((len(text) - digits) / chars_per_token + digits * tokens_per_digit))


def _tokens(text: str, p: RetrieveParams) -> int:
    return count_tokens(text, p.chars_per_token, p.tokens_per_digit)


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return np.ones_like(x) if hi - lo < 1e-12 else (x - lo) / (hi - lo)


def rerank(per_query: Sequence[Sequence[tuple[str, float]]], mode: str, alpha: float) -> list[Hit]:
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
    if mode == "frequency":
        items.sort(key=lambda h: (-h.frequency, -h.score, h.node_id))
    elif mode == "score":
        items.sort(key=lambda h: (-h.score, h.node_id))
    else:
        f = _minmax(np.array([h.frequency for h in items], dtype=float))
        s = _minmax(np.array([h.score for h in items], dtype=float))
        combined = alpha * f + (1 - alpha) * s
        order = sorted(range(len(items)), key=lambda i: (-combined[i], -items[i].score, items[i].node_id))
        items = [items[i] for i in order]
    return items


def _unit_for(tree: TreeView, node_id: str, siblings: int) -> tuple[str, list[str]]:
    """(key, node ids) of the context unit around a matched node."""
    n = tree[node_id]
    if n.level == "sentence":
        para = tree.paragraph_of(node_id)
        if para and tree[para].attachment_type == "table":
            return node_id, [node_id]  # a table row stands alone (its text carries the header)
        return node_id, tree.window(node_id, siblings)
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


def build_context(
    tree: TreeView,
    dense_per_query: Sequence[Sequence[tuple[str, float]]],
    keyword_hits: Sequence[tuple[Sequence[str], float]],
    p: RetrieveParams,
    answer_unit: str | None = None,
    focus: dict[str, float] | None = None,
    question: str | None = None,
) -> list[RetrievedUnit]:
    """Rank, expand, dedup and fuse the hits of one question into budgeted context units.

    A keyword hit is (node ids of the unit's text, score): one paragraph or table row,
    or the sentences of a window. `answer_unit` (the questions file's column) drives
    `unit_boost`; `focus` (the question's keyword tokens and their idf) drives `trim_tokens`; the
    `question`'s words drive `trim_table_quoted`."""
    ranked = rerank(dense_per_query, p.rerank, p.alpha)
    dense_units = []
    for h in ranked:
        key, ids = _unit_for(tree, h.node_id, p.siblings)
        dense_units.append(_make_unit(tree, key, ids, h.score, h.frequency, "dense"))
    dense_units = _merge(dense_units, tree)
    kw_units = _merge([_make_unit(tree, ids[0], list(ids), s, 0, "bm25") for ids, s in keyword_hits], tree)

    if p.fusion == "append":
        units = _merge(dense_units + kw_units, tree)
    else:
        fused: dict[int, float] = {}
        pool = dense_units + kw_units
        for rank, _ in enumerate(dense_units):
            fused[rank] = 1.0 / (p.rrf_k + rank + 1)
        for rank, _ in enumerate(kw_units):
            fused[len(dense_units) + rank] = p.bm25_weight / (p.rrf_k + rank + 1)
        # a keyword unit that covers a dense unit (or vice versa) adds its RRF share to it
        order = sorted(range(len(pool)), key=lambda i: -fused[i])
        units = []
        for i in order:
            pool[i].score = fused[i]
        merged = _merge([pool[i] for i in order], tree)
        for u in merged:
            u.score = sum(fused[i] for i in range(len(pool)) if _covers(u, pool[i]))
        units = sorted(merged, key=lambda u: -u.score)

    if p.trim_tokens > 0 and focus:
        units = [trimmed(tree, u, focus, p) for u in units]
    pattern = unit_pattern(answer_unit, p.unit_family)
    if p.trim_table_tokens > 0 and focus:
        units = [trimmed_table(tree, u, focus, p, pattern, question) for u in units]
    if pattern is not None and p.unit_boost > 0:
        for u in units:
            if holds_unit(u, pattern):
                u.score *= 1 + p.unit_boost
        units = sorted(units, key=lambda u: -u.score)  # stable: ties keep the fused order
    if p.coverage > 0 and focus:
        fused = p.coverage_layout == "fused"
        rank = {id(u): i for i, u in enumerate(units)}
        chosen = _fill_budget(tree, coverage_order(units, focus, p.coverage, keep_top=fused), p)
        # fused: only the choice follows coverage; the reader sees the chosen units in score order
        return sorted(chosen, key=lambda u: rank[id(u)]) if fused else chosen
    return _fill_budget(tree, units, p)


def coverage_order(units: list[RetrievedUnit], focus: dict[str, float], weight: float,
                   keep_top: bool = False) -> list[RetrievedUnit]:
    """Units in greedy order of fused score (as a share of the best) plus `weight` x the idf weight
    of the question keywords each adds to those before it (as a share of all the question's): a
    table row alone in naming "Altoona" then outranks a third paragraph on "health cost".
    `keep_top`: the best-scored unit is chosen first whatever it adds (train q166 lost its
    answer when a word-rich paragraph took the first place)."""
    total = sum(focus.values())
    if not units or total <= 0:
        return units
    top = max(u.score for u in units) or 1.0
    words = [question_keywords(u.text, focus) for u in units]
    covered: set[str] = set()
    left, order = list(range(len(units))), []

    def value(i: int) -> float:
        if keep_top and not order:
            return units[i].score  # the first pick: the best-scored unit, whatever it adds
        return units[i].score / top + weight * sum(focus[t] for t in words[i] - covered) / total

    while left:
        best = max(left, key=value)
        left.remove(best)
        order.append(units[best])
        covered |= words[best]
    return order


def question_keywords(text: str, focus: dict[str, float]) -> set[str]:
    """The question keywords (the keys of `focus`) that the text contains, in BM25's tokens."""
    return set(tokenize(text)) & focus.keys()


def keyword_gain(text: str, focus: dict[str, float]) -> float:
    """The summed weight of the question keywords the text contains (how `trimmed` and
    `trimmed_table` tell a unit's sentences or a table's rows apart)."""
    found = question_keywords(text, focus)
    return sum(w for t, w in focus.items() if t in found)  # in focus order: ties between rows stay exact


def trimmed(tree: TreeView, u: RetrievedUnit, focus: dict[str, float], p: RetrieveParams) -> RetrievedUnit:
    """A prose unit longer than `trim_tokens` cut to its run of sentences that shares the most
    question keywords (idf-weighted), within `trim_tokens`: a 375-token paragraph that BM25 found
    for one sentence then leaves room for the next unit. Table rows and tables stay whole."""
    if u.media == "table" or _tokens(u.text, p) <= p.trim_tokens:
        return u
    sents = [c for i in u.node_ids for c in ([i] if tree[i].level == "sentence" else tree.children.get(i, []))
             if tree[c].level == "sentence"]
    if len(sents) < 2:
        return u
    sizes = [_tokens(tree[i].text, p) + 1 for i in sents]
    gains = [keyword_gain(tree[i].text, focus) for i in sents]
    best, best_score = (0, 1), -1.0
    for a in range(len(sents)):  # the best window starting at each sentence, grown while it fits
        used, score = 0, 0.0
        for b in range(a, len(sents)):
            used += sizes[b]
            if used > p.trim_tokens and b > a:
                break
            score += gains[b]
            if score > best_score:
                best, best_score = (a, b + 1), score
    ids = sents[best[0]:best[1]]
    if best_score <= 0 or len(ids) == len(sents):
        return u
    u.node_ids, u.text = ids, " ".join(tree[i].text for i in ids)
    return u


def trimmed_table(tree: TreeView, u: RetrievedUnit, focus: dict[str, float], p: RetrieveParams,
                  unit: re.Pattern[str] | None = None, question: str | None = None) -> RetrievedUnit:
    """A whole table longer than `trim_table_tokens` cut to its caption, header and the rows that
    share the most question keywords (idf-weighted), in table order, within `trim_table_tokens`:
    a 1,300-token table of numbers then costs the reader the rows it asks about. A table with
    no row sharing a keyword beyond the others stays whole (nothing tells the rows apart); with
    `trim_table_ties`, rows the keywords cannot tell from the best row join it past the limit
    (a model's "before" and "after" rows, both needed for a difference). With `trim_table_unit`,
    a row whose name writes the question's answer unit in brackets ("Cost parity (# inferences)")
    comes first: in a table with one column per model, the unit names the row that answers. With
    `trim_table_abbreviations`, a row named by an abbreviation its caption defines ("P&R") also
    counts the words it stands for ("Pause and Resume") as its keywords. With `trim_table_quoted`, a row
    whose whole name the question writes word for word ("Geometric mean") comes first, as a unit-named
    row does (a table's "Price of equivalent GPU" row shares more keywords with "the geometric mean of the
    manufacturing-cost and equivalent-GPU-price approaches"). With `trim_table_groups`, the
    rows of the best row's name in the table's other row groups join it past the limit; with
    `trim_table_cover`, up to that many rows bringing question keywords no kept row has."""
    para = u.node_ids[0] if len(u.node_ids) == 1 else None
    if (u.media != "table" or para is None or tree[para].level != "paragraph"
            or _tokens(u.text, p) <= p.trim_table_tokens):
        return u
    rows = [i for i in tree.children.get(para, []) if tree[i].level == "sentence"]
    caption, _, cells = table_parts(tree[para].text, cut_caption=False)
    if len(rows) < 2 or len(rows) != len(cells):
        return u
    spelled = _spelled_out(caption) if p.trim_table_abbreviations else {}
    row_texts = [" ".join([*c, *(long for a, long in spelled.items() if c and a.search(c[0]))]) for c in cells]
    gains = [keyword_gain(t, focus) for t in row_texts]
    named = [p.trim_table_unit and unit is not None and bool(c) and labels_unit(c[0], unit) for c in cells]
    if p.trim_table_quoted and question:
        named = [n or (bool(c) and quotes_name(question, c[0])) for n, c in zip(named, cells)]
    if max(gains) <= min(gains) and not any(named):
        return u
    keep: list[int] = []
    for k in sorted(range(len(rows)), key=lambda k: (-named[k], -gains[k], k)):
        if gains[k] <= 0 and not named[k]:
            break
        text = table_block(tree[para].text, sorted([*keep, k]))
        tied = p.trim_table_ties and bool(keep) and (named[k], gains[k]) == (named[keep[0]], gains[keep[0]])
        if keep and not tied and _tokens(text, p) > p.trim_table_tokens:
            break
        keep.append(k)
    if not keep:
        return u
    if p.trim_table_groups and cells[keep[0]]:
        # the best row's namesakes in the table's other row groups join it ("Qwen" and "Qwen (After
        # Optimization ...)", tree.group_labels): a change between the groups needs both
        name = _ungrouped(cells[keep[0]][0])
        keep += [k for k, c in enumerate(cells) if k not in keep and c and name and _ungrouped(c[0]) == name]
    keep += covering_rows(row_texts, keep, focus, p.trim_table_cover)
    u.node_ids = [rows[k] for k in sorted(keep)]
    u.text = table_block(tree[para].text, sorted(keep))
    return u


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def quotes_name(question: str, name: str) -> bool:
    """Whether the question writes a row's whole name, of two words or more, word for word (case, brackets
    and hyphens aside): "the geometric mean of ..." quotes "Geometric mean"."""
    words = _words(name)
    return words.count(" ") >= 1 and f" {words} " in f" {_words(question)} "


def covering_rows(row_texts: list[str], keep: list[int], focus: dict[str, float], most: int) -> list[int]:
    """Up to `most` rows not in `keep`, each adding the weightiest question keywords that no kept
    row has (a sum of "training plus finetuning energy" needs both rows; the best row has one)."""
    found = [question_keywords(t, focus) for t in row_texts]
    covered = set().union(*(found[k] for k in keep))
    extra: list[int] = []
    for _ in range(most):
        gain = {k: sum(focus[t] for t in found[k] - covered) for k in range(len(row_texts))
                if k not in keep and k not in extra}
        best = max(gain, key=lambda k: (gain[k], -k), default=None)
        if best is None or gain[best] <= 0:
            break
        extra.append(best)
        covered |= found[best]
    return extra


def _ungrouped(name: str) -> str:
    """A row's name without the row group tree.group_labels puts after it in brackets."""
    return re.sub(r"\s*\([^()]*\)$", "", name.strip())


def _cut(text: str, budget: int, p: RetrieveParams) -> str:
    """The longest prefix of `text` whose estimate fits `budget` tokens."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _tokens(text[:mid], p) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _fill_budget(tree: TreeView, units: list[RetrievedUnit], p: RetrieveParams) -> list[RetrievedUnit]:
    """The first `top_k_final` units that fit `max_context_tokens`, in rank order (`fill`: stop at
    the first that does not fit, or skip it for shorter ones further down). With
    `table_blocks`, a row of a table already in the context joins that table's block
    (without taking a place of its own), costing only its row line."""
    out: list[RetrievedUnit] = []
    used = 0
    blocks: dict[str, RetrievedUnit] = {}  # table paragraph id -> its unit in `out`
    for u in units:
        table = _table_of(tree, u) if p.table_blocks else None
        if table is not None and table in blocks:
            b = blocks[table]
            ids = sorted(set(b.node_ids) | set(u.node_ids), key=_sentence_order(tree))
            text = table_block(tree[table].text, [tree.children[table].index(i) for i in ids])
            n = _tokens(text, p)
            if used - b.n_tokens + n > p.max_context_tokens:
                break
            used += n - b.n_tokens
            b.node_ids, b.text, b.n_tokens = ids, text, n
            b.frequency = max(b.frequency, u.frequency)
            b.sources |= u.sources
            continue
        if len(out) >= p.top_k_final:
            if p.table_blocks:
                continue  # only rows of tables already in the context may still join
            break
        if table is not None and len(u.node_ids) > 1:  # neighbouring rows merged as a window
            u.text = table_block(tree[table].text, [tree.children[table].index(i) for i in u.node_ids])
        u.n_tokens = _tokens(u.text, p)
        if used + u.n_tokens > p.max_context_tokens:
            if not out:  # the best unit alone is too long: cut it to the budget
                u.text = _cut(u.text, p.max_context_tokens, p)
                u.n_tokens = _tokens(u.text, p)
                out.append(u)
            elif p.fill == "skip":
                continue  # a shorter unit further down may still fit
            break
        out.append(u)
        used += u.n_tokens
        if table is not None:
            blocks[table] = u
    return out


def _table_of(tree: TreeView, u: RetrievedUnit) -> str | None:
    """The table paragraph whose rows make up unit `u` (None unless every node is a table row)."""
    paras = {tree.paragraph_of(i) if tree[i].level == "sentence" else None for i in u.node_ids}
    if len(paras) != 1:
        return None
    para = paras.pop()
    return para if para is not None and tree[para].attachment_type == "table" else None


# spellings of answer units in text, by a word of the questions file's answer_unit (lower case)
def unit_pattern(answer_unit: str | None, family: bool = False) -> re.Pattern[str] | None:
    """A regex for the ways text spells the answer unit (None for is_blank / no unit); ``family``
    (retrieve.unit_family): every unit of its family too ("GWh": Wh, kWh, MWh, ..., joules)."""
    unit = (answer_unit or "").strip()
    if not unit or unit.lower() in ("is_blank", "none", "nan"):
        return None
    alts = {unit}
    if family:
        alts |= unit_family_spellings(unit)
    for w in re.findall(r"[A-Za-z0-9/_%$]+", unit):
        alts |= set(UNIT_SPELLINGS.get(w.lower(), (w,) if len(w) > 1 and any(c.isdigit() or c.isupper() for c in w)
                                        else ()))
    alts |= {a.rstrip("s") for a in alts if len(a) > 3 and a.endswith("s")}
    long_ = sorted((re.escape(a) for a in alts if len(a) > 2), key=len, reverse=True)
    short = sorted((re.escape(a) for a in alts if len(a) <= 2), key=len, reverse=True)
    parts = [f"(?i:{'|'.join(long_)})"] if long_ else []
    parts += short  # short spellings (W, L, x, %) are case-sensitive
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(parts)})(?![A-Za-z])")


_NUMBER = re.compile(r"\d")
_BRACKETED = re.compile(r"[(\[]([^)\]]*)[)\]]")


def _spelled_out(caption: str) -> dict[re.Pattern[str], str]:
    """The caption's abbreviations as whole-word patterns, each with the words it stands for."""
    defined = caption_abbreviations(caption)
    return {re.compile(rf"(?<![\w&]){re.escape(a)}(?![\w&])"): long for a, long in defined.items()}


def labels_unit(label: str, pattern: re.Pattern[str]) -> bool:
    """True when a row name writes the unit in brackets: 'Cost parity (# inferences)', 'Energy [kWh]'."""
    return any(pattern.search(b) for b in _BRACKETED.findall(label))


def holds_unit(u: RetrievedUnit, pattern: re.Pattern[str]) -> bool:
    """True when the unit states a number in the answer unit: in prose the unit follows a
    number ('12.5 MWh', '40%', '$3,000'); a table row needs a number and the unit anywhere
    (it is often in the header: 'Power (W): 517.66')."""
    if u.media == "table":
        return bool(_NUMBER.search(u.text)) and bool(pattern.search(u.text))
    for m in pattern.finditer(u.text):
        before, after = u.text[max(0, m.start() - 3):m.start()], u.text[m.end():m.end() + 3]
        if _NUMBER.search(before) or (m.group(0) == "$" and _NUMBER.search(after)):
            return True
    return False


def _covers(u: RetrievedUnit, v: RetrievedUnit) -> bool:
    """True when unit `u` holds all of `v`'s nodes (same node or an ancestor)."""
    return all(any(a == b or is_ancestor(a, b) for a in u.node_ids) for b in v.node_ids)


def extend_context(prev: list[RetrievedUnit], wider: list[RetrievedUnit], p: RetrieveParams) -> list[RetrievedUnit]:
    """A retry context: the previous context unchanged, then new units from a wider retrieval.

    Keeping the previous units first (and in order) lets the server reuse its cached
    prompt prefix, so a retry pays only for the added text.
    """
    out = list(prev)
    used = sum(u.n_tokens for u in out)
    seen = [nid for u in out for nid in u.node_ids]
    for u in wider:
        if len(out) >= p.top_k_final:
            break
        if any(a == b or is_ancestor(a, b) or is_ancestor(b, a) for a in u.node_ids for b in seen):
            continue
        n = _tokens(u.text, p)
        if used + n > p.max_context_tokens:
            continue  # a smaller, lower-ranked unit may still fit
        u.n_tokens = n
        out.append(u)
        used += n
        seen += u.node_ids
    return out
