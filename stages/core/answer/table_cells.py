"""The model points at a table row; code picks the cell by the column names the question uses.

The 1.5B reader finds the right record of a table far more often than the right cell in it:
asked for LLaMA-3.1-70B's energy "for a prompt of 10k input and 1.5k output tokens" in

    Model: LLaMA-3.1-70B | Energy Consumption(100 input-300 output)(Wh): 1.271 ± 0.020 |
    Energy Consumption(1k input-1k output)(Wh): 4.525 ± 0.053 | Energy Consumption(10k input-1.5k output)(Wh): 19.183

it copies the first number of the record (or the last one). Here, when the copied
number is a cell of a record in a table unit, the record's other cells compete: each scores the
question's content words (BM25 tokens) that its column name has and the other column names of the
record do not. A cell scoring strictly more than the copied one, and more than every other cell,
replaces it. Records are the typed reader's views of tables: "Column: value" cells between `|`
(table row sentences) or "row: column = value; ..." lines (table_records.py).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stages.core.index.keywords import tokenize

# "label: 12.5" or "label = 12.5" (the label lazily up to the last ':' or '=' before a number)
_CELL = re.compile(r"^(?P<label>.+?)\s*[:=]\s*(?P<value>[-−]?\d[\d,]*(?:\.\d+)?)(?![\d,]*\.\d)")
_SPLIT = re.compile(r"\s*[|;]\s*")
TOLERANCE = 1e-6  # relative: the copied number is this cell's value


@dataclass(frozen=True)
class Cell:
    """A numeric cell of a record: its column name and value."""

    column: str
    value: float


def records(text: str) -> list[list[Cell]]:
    """The records of a table unit's text: runs of numeric cells. A line break or a cell without a
    number ("Model: Claude-3.7 Sonnet", a repeated caption) starts the next record."""
    out: list[list[Cell]] = []
    for line in text.split("\n"):
        current: list[Cell] = []
        for segment in _SPLIT.split(line):
            m = _CELL.match(segment)
            if not m:
                if current:
                    out.append(current)
                current = []
                continue
            label = m.group("label")
            column = re.split(r":\s+", label)[-1]  # "DS Llama 70B: Duration (s) single": the row name goes
            try:
                value = float(m.group("value").replace(",", "").replace("−", "-"))
            except ValueError:
                continue
            if column.strip():
                current.append(Cell(column.strip(), value))
        if current:
            out.append(current)
    return out


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b), 1e-12)


def _distinct_words(cells: Sequence[Cell]) -> list[set[str]]:
    """Each cell's column-name tokens less those every column of the record shares."""
    words = [set(tokenize(c.column)) for c in cells]
    shared = set.intersection(*words) if words else set()
    return [w - shared for w in words]


def pick_cell(question: str, value: float, texts: Iterable[str]) -> float:
    """``value``, or the cell of the same record whose column name the question names better.

    ``texts``: the table units to search, the pointed ones first; the first record holding ``value``
    (with another numeric cell) decides."""
    asked = set(tokenize(question))
    for text in texts:
        for cells in records(text):
            if len(cells) < 2 or not any(_same(c.value, value) for c in cells):
                continue
            scores = [len(w & asked) for w in _distinct_words(cells)]
            chosen = max(s for c, s in zip(cells, scores) if _same(c.value, value))
            best = max(scores)
            winners = {c.value for c, s in zip(cells, scores) if s == best}
            if best > chosen and len(winners) == 1:
                return winners.pop()
            return value
    return value


def same_record_operand(a: float, b: float, texts: Iterable[str]) -> float | None:
    """The cell to use as b when a and b were copied from two records of one table, under different columns:
    the cell of a's record under b's column. Asked how many dollars cheaper fine-tuning is on one GPU than on
    another, the reader took a from the "Cost ($)" record and b from the "Cost ($/hr)" one: one quantity
    compared across two columns, so b is a's record's cell under b's column. None unless a and b each
    sit in exactly one record of the first table text holding both."""
    for text in texts:
        recs = [cells for cells in records(text) if len(cells) >= 2]
        in_a = [r for r in recs if any(_same(c.value, a) for c in r)]
        in_b = [r for r in recs if any(_same(c.value, b) for c in r)]
        if not in_a or not in_b:
            continue
        if len(in_a) != 1 or len(in_b) != 1 or in_a[0] is in_b[0]:
            return None
        col_a = next(c.column for c in in_a[0] if _same(c.value, a))
        col_b = next(c.column for c in in_b[0] if _same(c.value, b))
        if col_a == col_b:
            return None  # one column, two records: two quantities of one thing, as asked
        return next((c.value for c in in_a[0] if c.column == col_b), None)
    return None


def only_cell(texts: Iterable[str]) -> float | None:
    """The one numeric cell of the table records in ``texts`` (a pointed table row such as "Consumption:
    Transformer (big) | CO 2e (lbs): 192"), or None when they hold none or several."""
    cells = [c for text in texts for cells in records(text) for c in cells]
    return cells[0].value if len(cells) == 1 else None
