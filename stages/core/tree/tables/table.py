"""A table read from its lines in the text: header lines, then rows of (label, values).

`read_table` splits each row into its name and its trailing values, then fits the rows to
the header: a bracketed header sets how many value columns there are, a model's version
and size numbers go back to its name, label lines between rows name a group of rows, and
rows of numbers alone take their first value as their name. `Table.markdown` renders it
under the names `columns.read_columns` gives it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from stages.core.tree.tables.columns import bracket_parts, read_columns
from stages.core.tree.tables.rows import NAME_NUMBER, UNIT_JOIN, row_like, split_row, unglued

# at most this many name numbers go back to a row's name ("Llama 3.1 8B"): a run of more sizes is a row
# of values ("Params 175B 280B 540B ...", a transposed table)
MAX_NAME_NUMBERS = 2


def _most_common(counts: list[int]) -> int:
    """The most common of some counts (the first seen among equals)."""
    return max(set(counts), key=counts.count)


def _name_takes(label: str, values: list[str], k: int) -> tuple[str, list[str]]:
    """A row cut to its last k values, the values before them given back to its name ("OLMo | 2 13B 230"
    with k=1 is "OLMo 2 13B | 230"); the row as it is when it has k values or fewer."""
    if len(values) <= k:
        return label, values
    return " ".join([label, *values[: len(values) - k]]).strip(), values[len(values) - k:]


@dataclass
class Table:
    """A table found in text: caption, header lines and rows as (label, values)."""

    caption: str
    header: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    bracketed: bool = False  # the rows were cut to the value columns a bracketed header names (`bracketed_fit`)

    def name_numbers_fit(self) -> bool:
        """Version and size numbers at the start of a row's values given back to its name ("Llama | 3.1 8B
        4.31 0.71" is "Llama 3.1 8B" with two values) when the row has more values than the table's common
        width: the most common number of values in the rows whose values start with no such number. A name
        number is a model size ("8B", "1.3B", "560M") or a one-digit version ("3.1", "2.5"), at most
        MAX_NAME_NUMBERS of them; plain integers ("1 2 1" GPU counts) never move. Returns whether any row
        changed."""
        def lead(values: list[str]) -> int:
            n = 0
            while n < len(values) - 1 and NAME_NUMBER.match(values[n]):
                n += 1
            return n
        rows = [v for _, v in self.rows if v]
        if not rows:
            return False
        widths = [len(v) for v in rows if not lead(v)]
        if widths and len(widths) * 3 >= len(rows):
            k = _most_common(widths)
        else:  # nearly every row starts with a name number: when every row has the same width without
            # them, and half of them name a size, that is the width ("1.1 1.2 1.5" PUEs stay values)
            bare = {len(v) - min(lead(v), MAX_NAME_NUMBERS) for v in rows}
            sized = sum(any(NAME_NUMBER.match(t) and t[-1] in "BM" for t in v[:lead(v)]) for v in rows)
            if len(bare) != 1 or sized * 2 < len(rows):
                return False
            k = bare.pop()
        changed = False
        for i, (label, values) in enumerate(self.rows):
            extra = len(values) - k
            if 0 < extra <= MAX_NAME_NUMBERS and label and lead(values) >= extra:
                self.rows[i] = _name_takes(label, values, k)
                changed = True
        return changed

    def bracketed_names(self) -> list[str]:
        """The header cut after each bracket, when every piece ends in one (else [])."""
        return bracket_parts(" ".join(self.header))

    def bracketed_fit(self) -> bool:
        """Rows cut to the k value columns a bracketed header names (k >= 3), a row's extra leading values
        given back to its name; False (rows untouched) unless half the rows or more have k values or more,
        fewer than half the names then end in three numbers or more (k is too few: a bracketed name that
        glues several columns), and no row name that would take a number ends in a bracket (a name missing
        from a header whose other names are bracketed: "On-demand Price ($/h) 0.7 1.01 ...")."""
        k = len(self.bracketed_names())
        rows = [v for _, v in self.rows if v]
        if k < 3 or sum(len(v) >= k for v in rows) < 0.5 * len(rows):
            return False
        if sum(len(v) > k + 2 for v in rows) * 2 >= len(rows):
            return False
        if any(len(v) > k and label.endswith(")") for label, v in self.rows):
            return False  # a name ending in its unit ("On-demand Price ($/h)") takes no number: a name is missing
        self.rows = [_name_takes(label, v, k) for label, v in self.rows]
        self.bracketed = True
        return True

    def key_column_fit(self) -> bool:
        """Rows with no names whose first values are distinct keys ("2016 1100575.41 ...": a year) take that
        value as their name, when the header then names every value column and did not before (header lines
        that name no columns keep the rows whole). Returns whether the rows changed."""
        named = [(label, v) for label, v in self.rows if v]
        if len(named) < 2 or any(label for label, _ in named) or self.names_every_column():
            return False
        keys = [v[0] for _, v in named]
        if len(set(keys)) != len(keys) or any(len(v) < 3 for _, v in named):
            return False
        before = self.rows
        self.rows = [(v[0], v[1:]) if v and not label else (label, v) for label, v in self.rows]
        if self.names_every_column():
            return True
        self.rows = before
        return False

    def value_width(self) -> int:
        """The most common number of values in a row (1 for a table without values)."""
        counts = [len(v) for _, v in self.rows if v]
        return _most_common(counts) if counts else 1

    def names_every_column(self) -> bool:
        """Whether `columns()` names each value column of the most common row width (2 or more), rather
        than one name for all the values."""
        k = self.value_width()
        return k > 1 and len(self.columns()) == k + 1

    def label_width(self) -> int:
        """Words in the row labels when (nearly) every row has the same number (else 0): then each
        word is a column of its own ("BERTbase V100x64" is Model and Hardware)."""
        counts = [len(label.split()) for label, v in self.rows if v and label]
        if len(counts) < 2:
            return 0
        w = _most_common(counts)
        return w if counts.count(w) >= 0.8 * len(counts) else 0

    def columns(self) -> list[str]:
        """Column names: label column first, then one per value column (or one for all values)."""
        return read_columns(self)

    def cells(self) -> list[list[str]]:
        """Each row as cells under `columns()`."""
        cols = self.columns()
        out = []
        for label, values in self.rows:
            if len(cols) == len(values) + 1:
                out.append([label, *values])
            else:
                out.append([label, " ".join(values), *[""] * max(0, len(cols) - 2)][: max(2, len(cols))])
        return out

    def markdown(self) -> str:
        """Caption line, then a compact markdown table."""
        cols = self.columns()
        esc = [[c.replace("|", "\\|") for c in row] for row in [cols, *self.cells()]]
        width = max(len(r) for r in esc)
        lines = [self.caption] if self.caption else []
        for i, row in enumerate(esc):
            lines.append("| " + " | ".join(row + [""] * (width - len(row))) + " |")
            if i == 0:
                lines.append("|" + "---|" * width)
        return "\n".join(lines).replace(UNIT_JOIN, " ")


def _read_rows(caption: str, texts: list[str], dash_fillers: bool,
               durations: bool) -> tuple[Table, list[tuple[int, str]]]:
    """The table of lines ``texts`` before any fit, and where label lines sit between its rows: (the row
    below them, their text)."""
    t = Table(caption)
    pending: list[str] = []
    starts: list[tuple[int, str]] = []
    for text in texts:
        if row_like(text, dash_fillers):
            label, values = split_row(text, durations)
            if pending:  # a group's label or the start of this row's name: `_label_groups`
                starts.append((len(t.rows), " ".join(pending)))
            t.rows.append((label, values))
            pending = []
        elif not t.rows:
            t.header.append(text)
        else:
            pending.append(text)  # a group label ('Training one model (GPU)') or a wrapped row label
    if pending:
        t.rows.append((" ".join(pending), []))
    return t, starts


def _label_groups(t: Table, starts: list[tuple[int, str]]) -> None:
    """Label lines between a table's rows ("After Optimization Metrics following quantization ...") name a
    group of rows when the row below them has a name and a row name after them repeats one above them (the
    same models listed before and after a change): each row of the group, up to the next such lines, gets
    the group in brackets ("Qwen (After Optimization ...)"). Otherwise they begin the name of the row below
    them."""
    ends = [i for i, _ in starts[1:]] + [len(t.rows)]
    for (i, text), end in zip(starts, ends):
        above = {label for label, _ in t.rows[:i] if label}
        if i > 0 and t.rows[i][0] and any(label in above for label, _ in t.rows[i:end]):
            t.rows[i:end] = [(f"{label} ({text})" if label else text, values) for label, values in t.rows[i:end]]
        else:
            label, values = t.rows[i]
            t.rows[i] = (f"{text} {label}".strip(), values)


def read_table(texts: list[str], caption: str, dash_fillers: bool = False) -> Table:
    """The table of the text lines ``texts`` (header lines, then rows), rows fitted to its header;
    ``dash_fillers``: rows may end in a lone "-" (a missing value). Rows glued into one line are cut apart
    first. Durations are read as cells only where a bracketed header confirms the columns
    (`Table.bracketed_fit`); otherwise the rows are read again without them, and a model's version and size
    numbers go back to its name."""
    pieces = [piece for text in texts for piece in unglued(text)]
    t, starts = _read_rows(caption, pieces, dash_fillers, durations=True)
    if not t.bracketed_fit():
        t, starts = _read_rows(caption, pieces, dash_fillers, durations=False)
        t.name_numbers_fit()
    _label_groups(t, starts)
    t.key_column_fit()
    return t
