"""A long table in the context cut to its caption, header and the rows the question asks about.

A whole table longer than `TRIM_TABLE_TOKENS` keeps its caption, header and the rows that share the
most question keywords (idf-weighted), in table order: a 1,300-token table of numbers then costs the
reader the rows it asks about. Rows as rich in keywords as the best row stay with it past the limit (a model's "before" and "after" rows, both needed for a
difference), and so do the best row's namesakes in the table's other row groups ("Qwen" and
"Qwen (After Optimization ...)"). A table whose rows no keyword tells apart stays whole.
"""
from __future__ import annotations

import re

from stages.core.index.keywords import tokenize
from stages.core.retrieve.units import RetrievedUnit, count_tokens
from stages.core.tree.navigate import TreeView
from stages.core.tree.tables import table_block, table_parts

# estimated tokens above which a table is trimmed: a few rows with caption and header fit, so a table
# no longer than that is sent whole
TRIM_TABLE_TOKENS = 80


def question_keywords(text: str, focus: dict[str, float]) -> set[str]:
    """The question keywords (the keys of `focus`) that the text contains, in BM25's tokens."""
    return set(tokenize(text)) & focus.keys()


def keyword_gain(text: str, focus: dict[str, float]) -> float:
    """The summed weight of the question keywords the text contains (how a table's rows are told apart)."""
    found = question_keywords(text, focus)
    return sum(w for t, w in focus.items() if t in found)  # in focus order: ties between rows stay exact


def trimmed_table(tree: TreeView, u: RetrievedUnit, focus: dict[str, float]) -> RetrievedUnit:
    """`u` cut to its table's caption, header and the question's rows when it is a whole table longer
    than TRIM_TABLE_TOKENS (see the module docstring); any other unit unchanged. `focus`: the question's
    keyword tokens and their idf."""
    para = u.node_ids[0] if len(u.node_ids) == 1 else None
    if (u.media != "table" or para is None or tree[para].level != "paragraph"
            or count_tokens(u.text) <= TRIM_TABLE_TOKENS):
        return u
    rows = [i for i in tree.children.get(para, []) if tree[i].level == "sentence"]
    _, _, cells = table_parts(tree[para].text, cut_caption=False)
    if len(rows) < 2 or len(rows) != len(cells):
        return u
    gains = [keyword_gain(" ".join(c), focus) for c in cells]
    if max(gains) <= min(gains):
        return u
    keep: list[int] = []
    for k in sorted(range(len(rows)), key=lambda k: (-gains[k], k)):
        if gains[k] <= 0:
            break
        text = table_block(tree[para].text, sorted([*keep, k]))
        tied = bool(keep) and gains[k] == gains[keep[0]]
        if keep and not tied and count_tokens(text) > TRIM_TABLE_TOKENS:
            break
        keep.append(k)
    if not keep:
        return u
    if cells[keep[0]]:
        # the best row's namesakes in the table's other row groups join it: a change between the groups needs both
        name = _ungrouped(cells[keep[0]][0])
        keep += [k for k, c in enumerate(cells) if k not in keep and c and name and _ungrouped(c[0]) == name]
    u.node_ids = [rows[k] for k in sorted(keep)]
    u.text = table_block(tree[para].text, sorted(keep))
    return u


def _ungrouped(name: str) -> str:
    """A row's name without the row group the tree's group labels put after it in brackets."""
    return re.sub(r"\s*\([^()]*\)$", "", name.strip())
