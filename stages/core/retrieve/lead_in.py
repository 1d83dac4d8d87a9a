"""A lead-in brings what it announces: "The following summarizes revenues by geographic area:".

A paragraph that ends with a colon announces the paragraphs after it (a table, a list, a schedule).
It shares the question's words, so search finds it, but it holds none of the figures; the table it
announces often shares fewer. So after a lead-in unit the context takes its sequel: the paragraphs
that follow it in its section, up to the next lead-in or a table, as long as they fit SEQUEL_TOKENS
(the table first cut to the question's rows, as any retrieved table is). A sequel of which a node is
already among the ranked units, or which does not fit, is not added: the lead-in stays as retrieved;
nor does a sequel end the context where the budget has no room for it (any other unit does).
"""
from __future__ import annotations

from collections.abc import Callable

from stages.core.retrieve.units import RetrievedUnit, count_tokens
from stages.core.tree.navigate import TreeView, is_ancestor

# estimated tokens a sequel may take: a statement cut to its question's rows, or a short schedule; a longer
# sequel (a page of prose after a colon) would crowd the rest of the context out
SEQUEL_TOKENS = 200
SEQUEL = "lead-in"  # a sequel unit's source: the context's budget leaves it out when it does not fit, and goes on


def _related(a: str, b: str) -> bool:
    return a == b or is_ancestor(a, b) or is_ancestor(b, a)


def _announces(tree: TreeView, u: RetrievedUnit) -> str | None:
    """The paragraph `u` ends, when `u` is prose whose text ends with a colon at its paragraph's end."""
    if u.media is not None or not u.text.rstrip().endswith(":"):
        return None
    last = u.node_ids[-1]
    para = tree.paragraph_of(last)
    if para is None or tree[para].attachment_type is not None:
        return None
    if last != para and tree.children.get(para, [])[-1:] != [last]:
        return None  # a colon inside the paragraph: what follows it is already in the paragraph
    return para


def _sequel_parts(tree: TreeView, para: str) -> list[list[str]]:
    """The paragraphs after `para` in its section, up to the next lead-in and within SEQUEL_TOKENS, as units'
    node ids: the prose paragraphs (a table's header cells the PDF gave as paragraphs, a list) as one, and a
    table that follows them as its own, which the trim cuts to size."""
    parent = tree[para].parent_id
    sibs = tree.children.get(parent, []) if parent else []
    prose: list[str] = []
    used = 0
    for nid in sibs[sibs.index(para) + 1:]:
        n = tree[nid]
        if n.level != "paragraph":
            break
        if n.attachment_type == "table":
            return [prose, [nid]] if prose else [[nid]]
        used += count_tokens(n.text)
        if used > SEQUEL_TOKENS:
            break
        prose.append(nid)
        if n.text.rstrip().endswith(":"):
            break  # the next lead-in: what it announces is its own sequel
    return [prose] if prose else []


def with_sequels(tree: TreeView, units: list[RetrievedUnit],
                 trim: Callable[[RetrievedUnit], RetrievedUnit]) -> list[RetrievedUnit]:
    """`units` with each lead-in's sequel right after it (see the module docstring), at the lead-in's score."""
    out: list[RetrievedUnit] = []
    seen = [nid for u in units for nid in u.node_ids]
    for u in units:
        out.append(u)
        para = _announces(tree, u)
        parts = _sequel_parts(tree, para) if para else []
        if any(_related(a, b) for ids in parts for a in ids for b in seen):
            continue
        sequel = [trim(RetrievedUnit(ids[0], tree[ids[0]].doc_id, ids, " ".join(tree[i].text for i in ids), u.score,
                                     u.frequency, {SEQUEL}, tree[ids[0]].page,
                                     media=tree[ids[0]].attachment_type)) for ids in parts]
        if sum(count_tokens(v.text) for v in sequel) <= SEQUEL_TOKENS:
            out += sequel
            seen += [nid for v in sequel for nid in v.node_ids]
    return out
