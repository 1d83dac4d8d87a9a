"""Column names read from a table's header lines.

Extraction leaves a header as one or more lines of glued words ("Model Hardware Power (W)
Hours kWh ·PUE CO 2e Cloud compute cost"), with nothing that marks where a column's name
ends. `read_columns` tries the readers of `COLUMN_READERS` in order, each for one way a
header is written, and takes the first that names the columns: the row labels' column,
then one name per value column. Each reader accepts only a reading that lines up with the
k values of the table's rows (its most common width); the last reader always answers,
with the header's first word for the labels and the rest for all the values together, as
naming wrong columns would pair wrong names with values.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from stages.core.tree.tables.rows import NAME_NUMBER, PROSE_WORDS, joined_plus_minus, numeric

if TYPE_CHECKING:
    from stages.core.tree.tables.table import Table

# a token that continues the previous column name: a unit in brackets, a subscript ("CO 2e"), a
# piece after a middle dot ("kWh ·PUE"), a lower-case word ("Cloud compute cost") but not a unit
# with a capital inside ("kWh", "tCO2e")
_CONTINUES = re.compile(r"^(?:[(\[].*|\d+[a-z]*\)?|[·/%).,:;\]-].*|[a-z]+[a-z-]*\)?|of|for|per|at|in|to|&)$")


def header_chunks(header: str) -> list[str]:
    """A glued header cut into column names: a new name starts at each word that does not continue
    the previous one (`_CONTINUES`); "(W)" in "Power (W)" and "Training(million L)" stay with theirs."""
    words = re.sub(r"(?<=[A-Za-z])\(", " (", header).split()
    chunks: list[str] = []
    depth = 0
    for w in words:
        if chunks and (depth > 0 or _CONTINUES.match(w)):
            chunks[-1] = f"{chunks[-1]} {w}"
        else:
            chunks.append(w)
        depth = max(0, depth + w.count("(") - w.count(")"))
    return chunks


def bracket_parts(header: str) -> list[str]:
    """`header` cut after each bracket ("Power Usage (MWh) Water Consumption (kL)" -> two names), when
    every piece ends in one; else []."""
    parts = [p.strip() for p in re.split(r"(?<=\))\s+(?=[^\s(])", header) if p.strip()]
    return parts if parts and all(p.endswith(")") for p in parts) else []


def bracket_chunks(header: str) -> list[str]:
    """A header whose column names each end in a bracketed unit ("Model Energy Consumption(100
    input-300 output)(Wh) Energy Consumption(1k input-1k output)(Wh)") cut after each such bracket;
    the first word before the first name is the label column ("Model")."""
    parts = bracket_parts(header)
    if len(parts) < 2:
        return []
    first = parts[0].split(" ", 1)
    return [first[0], first[1], *parts[1:]] if len(first) == 2 and "(" not in first[0] else []


def _cuts_bracket(words: list[str]) -> bool:
    """Whether splitting a header line at spaces cuts a bracket apart ("Emission(Metric" "Ton)")."""
    return any(w.count("(") != w.count(")") for w in words)


def _repeated_tail(items: list[str], k: int) -> list[tuple[int, list[str]]]:
    """(g, sub) for each g of 2, 3, 4 whose sub-header ``sub`` (k / g items, two or more) repeats g times as
    the last k of ``items``, with something before them."""
    found = []
    for g in (2, 3, 4):
        n = k // g
        if k % g or n < 2 or len(items) <= k:
            continue
        if items[-k:] == items[-n:] * g:
            found.append((g, items[-n:]))
    return found


def _name_like(chunk: str) -> bool:
    """A header chunk that can name a column alone: a letter or digit in it, at most three words, no prose
    ("#" and "draw; and estimate theoretical inference" cannot)."""
    words = chunk.split()
    return len(words) <= 3 and bool(re.search(r"[A-Za-z0-9]", chunk)) and ";" not in chunk \
        and not any(w.lower() in PROSE_WORDS for w in words)


def _versions_joined(chunks: list[str]) -> list[str]:
    """Header chunks with a version ("v1", "v2.5") joined to the name before it ("TPU v1")."""
    out: list[str] = []
    for c in chunks:
        if out and re.fullmatch(r"v\d+(?:\.\d+)?", c):
            out[-1] = f"{out[-1]} {c}"
        else:
            out.append(c)
    return out


def _header_words(t: Table) -> list[list[str]]:
    return [h.split() for h in t.header]


def _flat_header(t: Table) -> list[str]:
    """The header's words in one list, "Mean ± Std" one of them."""
    return joined_plus_minus(" ".join(t.header).split())


# ------------------------------------------------------------------ the readers, in the order tried
def grouped_sub_header(t: Table, k: int) -> list[str] | None:
    """A two-level header: words that repeat g times at its end ("single double ratio", "NOx SO2 PM2.5 VOC"),
    one value column each, under g bracketed group names before them ("Duration (s)", "Energy consumed (Wh)")
    name each column by group and sub-header; the first group's leading word chunk names the row labels
    ("Model"). None unless the repeats cover exactly the k value columns and the group names count g."""
    words = " ".join(t.header).split()
    for g, sub in _repeated_tail(words, k):
        groups = bracket_parts(" ".join(words[:-k]))
        if len(groups) != g:
            continue
        first = header_chunks(groups[0])
        label = first[0] if len(first) > 1 else ""
        groups[0] = " ".join(first[1:]) if label else groups[0]
        return [label, *(f"{grp} {s}" for grp in groups for s in sub)]
    return None


def title_over_names(t: Table, k: int) -> list[str] | None:
    """A title over the last header line's k names ("Year Electricity Generation Emission(Metric Ton)" over
    "NOx SO2 PM2.5 VOC"), told by a bracket that a split at spaces cuts apart: its first word names the row
    labels, the rest spans every name below it."""
    words = _header_words(t)
    if not (k > 1 and len(words) > 1 and len(words[-1]) == k and any(_cuts_bracket(w) for w in words[:-1])):
        return None
    first, *span = " ".join(t.header[:-1]).split()
    return [first, *(" ".join([*span, leaf]) for leaf in words[-1])]


def names_per_line(t: Table, k: int) -> list[str] | None:
    """Every header line names each value column, word by word (a transposed header: "BERT BERT 6B" over
    "finetune LM Transf."); a line of k + 1 words names the row labels' column too."""
    words = _header_words(t)
    if not (words and all(len(w) in (k, k + 1) for w in words) and k > 1):
        return None
    cols = [""] * (k + 1)
    for w in words:
        for j, token in enumerate(w if len(w) == k + 1 else ["", *w]):
            cols[j] = f"{cols[j]} {token}".strip()
    return cols


def one_word_per_column(t: Table, k: int) -> list[str] | None:
    """The header's words are the names, one per column ("Consumer Renew. Gas")."""
    flat = _flat_header(t)
    return flat if len(flat) == k + 1 else None


def _glued_header_readable(t: Table, k: int) -> bool:
    """Whether a glued header may be cut into names: two value columns or more, and no number in most row
    labels ("LLaMA-33B 64.7 GB": a value column hides there), a model's version or size ("Llama 3.1 8B")
    aside."""
    labels = [label.split() for label, v in t.rows if v and label]
    def hides_value(tok: str) -> bool:
        return numeric(tok) and not NAME_NUMBER.match(tok)
    return k >= 2 and bool(header_chunks(" ".join(t.header))) \
        and sum(any(hides_value(tok) for tok in w) for w in labels) * 2 <= len(labels)


def glued_chunks(t: Table, k: int) -> list[str] | None:
    """A glued header cut into names (`header_chunks`) that count one per column: "Model Hardware Power (W)
    Hours kWh ·PUE ..." is "Model", "Hardware", "Power (W)", "Hours", "kWh ·PUE", ..."""
    chunks = header_chunks(" ".join(t.header))
    return chunks if _glued_header_readable(t, k) and len(chunks) == k + 1 else None


def bracketed_chunks(t: Table, k: int) -> list[str] | None:
    """A glued header whose names each end in a bracketed unit (`bracket_chunks`), one per column."""
    if not _glued_header_readable(t, k):
        return None
    bracketed = bracket_chunks(" ".join(t.header))
    return bracketed if len(bracketed) == k + 1 else None


def label_word_chunks(t: Table, k: int) -> list[str] | None:
    """A glued header with one name per word of the row labels (each label has the same number of words:
    "BERTbase V100x64" under "Model Hardware"), then one per value column; the label names join as one."""
    if not _glued_header_readable(t, k):
        return None
    chunks = header_chunks(" ".join(t.header))
    extra = len(chunks) - k
    if extra > 1 and extra == t.label_width():
        return [" / ".join(chunks[:extra]), *chunks[extra:]]
    return None


def value_names_only(t: Table, k: int) -> list[str] | None:
    """A header that names the value columns only ("A100 TPU v1 TPU v2 ...", a version joined to its name),
    every chunk a name, when every row has a name of its own: the row labels' column stays unnamed."""
    if not _glued_header_readable(t, k):
        return None
    labels = [label for label, v in t.rows if v and label]
    if len(labels) != sum(1 for _, v in t.rows if v):
        return None
    names = _versions_joined(header_chunks(" ".join(t.header)))
    return ["", *names] if len(names) == k and all(_name_like(n) for n in names) else None


def first_line_names(t: Table, k: int) -> list[str] | None:
    """The first header line names every column, and the few words under it (fewer than the columns)
    cannot be aligned to them."""
    words = _header_words(t)
    if k > 1 and len(words) > 1 and len(words[0]) == k + 1 and sum(len(w) for w in words[1:]) < k:
        return words[0]
    return None


def bracketed_value_names(t: Table, k: int) -> list[str] | None:
    """The names of a bracketed header whose columns the rows were fitted to (`Table.bracketed_fit`), one per
    value column; the rows' names have no column name of their own."""
    if t.bracketed and k > 1 and len(names := t.bracketed_names()) == k:
        return ["", *names]
    return None


def label_then_values(t: Table, k: int) -> list[str]:
    """The header's first word names the row labels, the rest all the values together."""
    flat = _flat_header(t)
    return [flat[0] if flat else "", " ".join(flat[1:])]


Reader = Callable[["Table", int], "list[str] | None"]
COLUMN_READERS: tuple[Reader, ...] = (
    grouped_sub_header, title_over_names, names_per_line, one_word_per_column, glued_chunks, bracketed_chunks,
    label_word_chunks, value_names_only, first_line_names, bracketed_value_names, label_then_values,
)


def read_columns(t: Table) -> list[str]:
    """Column names: the row labels' column first, then one per value column (or one for all values)."""
    k = t.value_width()
    for reader in COLUMN_READERS:
        if names := reader(t, k):
            return names
    raise AssertionError("label_then_values always answers")
