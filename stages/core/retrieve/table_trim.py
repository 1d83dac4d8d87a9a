"""A long table in the context cut to its caption, header and the rows the question asks about.

A whole table longer than `TRIM_TABLE_TOKENS` keeps its caption, header and the rows that share the
most question keywords (idf-weighted), in table order: a 1,300-token table of numbers then costs the
reader the rows it asks about. Rows as rich in keywords as the best row stay with it past the limit (a model's "before" and "after" rows, both needed for a
difference), and so do the best row's namesakes in the table's other row groups ("Qwen" and
"Qwen (After Optimization ...)"). A table whose rows no keyword tells apart stays whole.

When the question names a metric (plan.metrics), each line item it is computed from keeps its row first,
past the limit: the row with amounts whose name is that line's (``Item.names``), the one with the fewest
words the item's label lacks (at most MAX_EXTRA_WORDS, as the answer's lookup reads it), after the rows
that state the columns' periods where the PDF split the header into the table's body. Shared words alone
would rank "Total non-operating income (expense), net" above "Operating income" for an operating margin,
and a statement's long caption leaves room for two rows.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from stages.core.index.keywords import tokenize
from stages.core.plan.metrics import MAX_EXTRA_WORDS, Item, extra_words
from stages.core.retrieve.units import RetrievedUnit, count_tokens
from stages.core.tree.navigate import TreeView
from stages.core.tree.tables import table_block, table_parts

# estimated tokens above which a table is trimmed: a few rows with caption and header fit, so a table
# no longer than that is sent whole
TRIM_TABLE_TOKENS = 80
_AMOUNT = re.compile(r"\d")
_INTEGER = re.compile(r"\d+")


def question_keywords(text: str, focus: dict[str, float]) -> set[str]:
    """The question keywords (the keys of `focus`) that the text contains, in BM25's tokens."""
    return set(tokenize(text)) & focus.keys()


def keyword_gain(text: str, focus: dict[str, float]) -> float:
    """The summed weight of the question keywords the text contains (how a table's rows are told apart)."""
    found = question_keywords(text, focus)
    return sum(w for t, w in focus.items() if t in found)  # in focus order: ties between rows stay exact


def line_rows(cells: Sequence[Sequence[str]], items: Sequence[Item]) -> list[int]:
    """Per line item, the row (index into `cells`) that states it (see the module docstring), in item order."""
    out: list[int] = []
    for item in items:
        pattern = re.compile(item.names, re.IGNORECASE)
        named = [(extra_words(c[0], item), k) for k, c in enumerate(cells)
                 if c and pattern.search(c[0]) and any(_AMOUNT.search(x) for x in c[1:])]
        fewest, k = min(named, default=(MAX_EXTRA_WORDS + 1, -1))
        if fewest <= MAX_EXTRA_WORDS and k not in out:
            out.append(k)
    return out


def period_rows(cells: Sequence[Sequence[str]]) -> list[int]:
    """The rows above the first amount that state the columns' periods: a header the PDF's table split into body
    rows ("| Fiscal Years Ended January 28, 2017 January 30, 2016 January | | 31, | 2015 |"): without it the
    line items' amounts have no years."""
    out: list[int] = []
    for k, c in enumerate(cells):
        numbers = [int(n) for n in _INTEGER.findall(" ".join(c).replace(",", " "))]
        if not numbers:
            continue
        if not all(n <= 31 or 1900 <= n <= 2100 for n in numbers):
            break
        if any(n >= 1900 for n in numbers):
            out.append(k)
    return out


def trimmed_table(tree: TreeView, u: RetrievedUnit, focus: dict[str, float],
                  items: Sequence[Item] = ()) -> RetrievedUnit:
    """`u` cut to its table's caption, header and the question's rows when it is a whole table longer
    than TRIM_TABLE_TOKENS (see the module docstring); any other unit unchanged. `focus`: the question's
    keyword tokens and their idf; `items`: the line items of the metric it names."""
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
    keep = period_rows(cells) if items else []
    keep += [k for k in line_rows(cells, items) if k not in keep]
    best: int | None = None  # the row with the most keywords
    for k in sorted(range(len(rows)), key=lambda k: (-gains[k], k)):
        if gains[k] <= 0:
            break
        if k in keep:
            best = k if best is None else best
            continue
        text = table_block(tree[para].text, sorted([*keep, k]))
        tied = best is not None and gains[k] == gains[best]
        if keep and not tied and count_tokens(text) > TRIM_TABLE_TOKENS:
            break
        keep.append(k)
        best = k if best is None else best
    if not keep:
        return u
    if best is not None and cells[best]:
        # the best row's namesakes in the table's other row groups join it: a change between the groups needs both
        name = _ungrouped(cells[best][0])
        keep += [k for k, c in enumerate(cells) if k not in keep and c and name and _ungrouped(c[0]) == name]
    u.node_ids = [rows[k] for k in sorted(keep)]
    u.text = table_block(tree[para].text, sorted(keep))
    return u


def _ungrouped(name: str) -> str:
    """A row's name without the row group the tree's group labels put after it in brackets."""
    return re.sub(r"\s*\([^()]*\)$", "", name.strip())
