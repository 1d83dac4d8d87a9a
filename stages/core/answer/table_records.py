"""Markdown tables as records, so that each value sits next to its row and column names.

A small reader loses its way in a markdown grid: asked for ViT Large's kWh in

    | Model GPU | ... | ViT Large 4·V100 | ViT Huge 4·V100 |
    | kWh       | ... | 93.3             | 237.6           |

it has to count columns, and the 1.5B model takes the last one. As records

    ViT Large 4·V100: Hours = 90; kWh = 93.3
    ViT Huge 4·V100: Hours = 216; kWh = 237.6

the value stands next to both names. One record per row; a table wider than it is long
(more value columns than rows) gets one record per column instead, so records stay short.
Only well-formed tables are rewritten: a short name over every value column, every row as wide
as the header and no cell packing several numbers. A table whose columns extraction glued
together ("| Hardware Power (W) Hours kWh | 1415.78 12 27 26 |") stays as it is: as records
it would pair the wrong names with the values.
"""
from __future__ import annotations

import re

from stages.core.tree.tables import markdown_cells

_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")
_NUMBER_TOKEN = re.compile(r"^[^A-Za-z]*\d[^A-Za-z]*$")
MAX_HEADER_WORDS = 6  # a longer column name is several names glued together
MAX_NUMBERS_PER_CELL = 2  # "0.70(0.54, 0.87)" is one value with its interval; more is glued columns


def _grid(lines: list[str]) -> list[list[str]] | None:
    """Header + rows of a markdown table block, or None when it is not well-formed."""
    if len(lines) < 3 or not _SEPARATOR.match(lines[1].replace(" ", "")):
        return None
    header = markdown_cells(lines[0])
    rows = [markdown_cells(ln) for ln in lines[2:]]
    width = len(header)
    if width < 2 or any(len(r) != width for r in rows) or not all(header[1:]):
        return None
    if any(not r[0] for r in rows) or any(not any(r[1:]) for r in rows):
        return None
    if any(len(h.split()) > MAX_HEADER_WORDS for h in header[1:]):
        return None
    if any(sum(bool(_NUMBER_TOKEN.match(t)) for t in c.split()) > MAX_NUMBERS_PER_CELL for r in rows for c in r[1:]):
        return None
    return [header, *rows]


def _records(grid: list[list[str]]) -> list[str]:
    header, rows = grid[0], grid[1:]
    if len(header) - 1 > len(rows):  # wide: one record per value column
        return [f"{header[j]}: " + "; ".join(f"{r[0]} = {r[j]}" for r in rows if r[j]) for j in range(1, len(header))]
    return [f"{r[0]}: " + "; ".join(f"{header[j]} = {r[j]}" for j in range(1, len(header)) if r[j]) for r in rows]


def table_records(text: str) -> str:
    """`text` with each well-formed markdown table replaced by its records (other lines kept)."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        block = lines[i:j]
        grid = _grid(block)
        out.extend(_records(grid) if grid else block)
        i = j
    return "\n".join(out)
