"""A long table in the context cut to its caption, header and the rows the question asks about.

A whole table longer than `TRIM_TABLE_TOKENS` keeps its caption, header and the rows that share the
most question keywords (idf-weighted), in table order: a 1,300-token table of numbers then costs the
reader the rows it asks about. Rows come first that the question picks out by more than their words:
a row whose name writes the answer unit in brackets ("Cost parity (# inferences)": in a table with one
column per model, the unit names the row that answers) and a row whose whole name the question writes
word for word ("geometric mean", which may share fewer keywords than a neighbouring row). A row named by
an abbreviation its caption defines ("P&R") also counts the words it stands for. Rows as rich in keywords
as the best row stay with it past the limit (a model's "before" and "after" rows, both needed for a
difference), and so do the best row's namesakes in the table's other row groups ("Qwen" and
"Qwen (After Optimization ...)"). A table whose rows no keyword tells apart stays whole.
"""
from __future__ import annotations

import re

from stages.core.index.keywords import tokenize
from stages.core.retrieve.answer_unit import labels_unit
from stages.core.retrieve.units import RetrievedUnit, count_tokens
from stages.core.tree.navigate import TreeView
from stages.core.tree.tables import caption_abbreviations, table_block, table_parts

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


def trimmed_table(tree: TreeView, u: RetrievedUnit, focus: dict[str, float],
                  unit: re.Pattern[str] | None = None, question: str | None = None) -> RetrievedUnit:
    """`u` cut to its table's caption, header and the question's rows when it is a whole table longer
    than TRIM_TABLE_TOKENS (see the module docstring); any other unit unchanged. `focus`: the question's
    keyword tokens and their idf; `unit`: the answer unit's pattern; `question`: its words."""
    para = u.node_ids[0] if len(u.node_ids) == 1 else None
    if (u.media != "table" or para is None or tree[para].level != "paragraph"
            or count_tokens(u.text) <= TRIM_TABLE_TOKENS):
        return u
    rows = [i for i in tree.children.get(para, []) if tree[i].level == "sentence"]
    caption, _, cells = table_parts(tree[para].text, cut_caption=False)
    if len(rows) < 2 or len(rows) != len(cells):
        return u
    spelled = _spelled_out(caption)
    row_texts = [" ".join([*c, *(long for a, long in spelled.items() if c and a.search(c[0]))]) for c in cells]
    gains = [keyword_gain(t, focus) for t in row_texts]
    named = [unit is not None and bool(c) and labels_unit(c[0], unit) for c in cells]
    if question:
        named = [n or (bool(c) and quotes_name(question, c[0])) for n, c in zip(named, cells)]
    if max(gains) <= min(gains) and not any(named):
        return u
    keep: list[int] = []
    for k in sorted(range(len(rows)), key=lambda k: (-named[k], -gains[k], k)):
        if gains[k] <= 0 and not named[k]:
            break
        text = table_block(tree[para].text, sorted([*keep, k]))
        tied = bool(keep) and (named[k], gains[k]) == (named[keep[0]], gains[keep[0]])
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


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def quotes_name(question: str, name: str) -> bool:
    """Whether the question writes a row's whole name, of two words or more, word for word (case, brackets
    and hyphens aside): "the geometric mean of ..." quotes "Geometric mean"."""
    words = _words(name)
    return words.count(" ") >= 1 and f" {words} " in f" {_words(question)} "


def _ungrouped(name: str) -> str:
    """A row's name without the row group the tree's group labels put after it in brackets."""
    return re.sub(r"\s*\([^()]*\)$", "", name.strip())


def _spelled_out(caption: str) -> dict[re.Pattern[str], str]:
    """The caption's abbreviations as whole-word patterns, each with the words it stands for."""
    defined = caption_abbreviations(caption)
    return {re.compile(rf"(?<![\w&]){re.escape(a)}(?![\w&])"): long for a, long in defined.items()}
