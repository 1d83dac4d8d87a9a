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
it would pair the wrong names with the values, unless its header is a two-row header of spanning
groups (`spanning_columns`), whose names and count are certain. A trimmed table
(retrieve.trim_table_tokens) has no separator line; its first line is still the header.
"""
from __future__ import annotations

import re

from stages.core.tree.tables import markdown_cells

_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")
_NUMBER_TOKEN = re.compile(r"^[^A-Za-z]*\d[^A-Za-z]*$")
MAX_HEADER_WORDS = 6  # a longer column name is several names glued together
MAX_NUMBERS_PER_CELL = 2  # "0.70(0.54, 0.87)" is one value with its interval; more is glued columns


def _header_and_rows(lines: list[str]) -> tuple[list[str], list[list[str]]] | None:
    """The header cells and the data rows of a markdown table block. The separator line is optional:
    a trimmed table (tree.tables.table_block) is its caption, header and chosen rows without one."""
    body = lines[2:] if len(lines) > 1 and _SEPARATOR.match(lines[1].replace(" ", "")) else lines[1:]
    if not body:
        return None
    return markdown_cells(lines[0]), [markdown_cells(ln) for ln in body]


def _grid(lines: list[str]) -> list[list[str]] | None:
    """Header + rows of a markdown table block, or None when it is not well-formed; a two-column table
    glued under a two-row header of spanning groups (`_spanning_grid`) is cut into its columns."""
    parts = _header_and_rows(lines)
    if parts is None:
        return None
    header, rows = parts
    if grid := _spanning_grid(header, rows):
        return grid
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


def _repeated_tail(tokens: list[str]) -> tuple[int, int]:
    """(period, repeats) of the longest run at the end of tokens that repeats one period 2+ times
    (the shorter period on a tie); (0, 0) when there is none."""
    n, best = len(tokens), (0, 0)
    for period in range(1, n // 2 + 1):
        reps = 1
        while (reps + 1) * period <= n and tokens[n - (reps + 1) * period: n - reps * period] == tokens[n - period:]:
            reps += 1
        if reps >= 2 and reps * period > best[0] * best[1]:
            best = (period, reps)
    return best


def _bracket_pieces(tokens: list[str]) -> tuple[list[str], str]:
    """Names that each end in a bracketed unit ("On-site WUE (L/kWh)"), and the words after the last one."""
    pieces: list[str] = []
    cur: list[str] = []
    depth = 0
    for t in tokens:
        cur.append(t)
        depth += t.count("(") - t.count(")")
        if depth <= 0 and t.endswith(")"):
            pieces.append(" ".join(cur))
            cur, depth = [], 0
    return pieces, " ".join(cur)


def spanning_columns(glued: str, k: int) -> list[str]:
    """The k value-column names of a glued two-row header whose group names span sub-columns, the
    sub-columns printed once per group after the whole first row (a water-footprint table: "PUE On-site WUE
    (L/kWh) Off-site EWIF (L/kWh) Water for Training(million L) Water for Each Request(mL) # of Requests
    for 500ml Water On-site Water Off-site Water Total Water On-site Water Off-site Water Total Water").
    The run repeated at the end holds the sub-columns, one repeat per group; the groups are the last
    bracketed names before it; bracketed names before the groups are columns of their own (the first
    word of the first may be one more: "PUE"), and words after the groups one more column, right of
    them (a tall cell: "# of Requests for 500ml Water"). [] unless exactly one such reading gives k names."""
    tokens = re.sub(r"(?<=[^\s(])\(", " (", glued).split()
    period, reps = _repeated_tail(tokens)
    if not period:
        return []
    pieces, middle = _bracket_pieces(tokens[: len(tokens) - period * reps])
    if len(pieces) < reps:
        return []
    groups, before = pieces[len(pieces) - reps:], pieces[: len(pieces) - reps]
    after = [middle] if middle else []
    readings = [before]
    if before and len(before[0].split("(")[0].split()) >= 2:
        first, rest = before[0].split(" ", 1)
        readings.append([first, rest, *before[1:]])
    fits = [(cols, subs) for cols in readings for subs in range(1, period + 1)
            if period % subs == 0 and len(cols) + reps * subs + len(after) == k]
    if len(fits) != 1:
        return []
    cols, subs = fits[0]
    sub = tokens[len(tokens) - period:]
    width = period // subs
    names = [" ".join(sub[i * width:(i + 1) * width]) for i in range(subs)]
    return [*cols, *(f"{g} {s}" for g in groups for s in names), *after]


def _spanning_grid(header: list[str], rows: list[list[str]]) -> list[list[str]] | None:
    """A two-column table whose second column glues a two-row header of spanning groups
    (`spanning_columns`) over rows of numbers only, all as many."""
    if len(header) != 2 or not rows or any(len(r) != 2 for r in rows):
        return None
    values = [r[1].split() for r in rows]
    k = len(values[0])
    if k < 3 or any(len(v) != k or not all(_NUMBER_TOKEN.match(t) for t in v) for v in values):
        return None
    columns = spanning_columns(header[1], k)
    if not columns:
        return None
    return [[header[0], *columns], *([r[0], *v] for r, v in zip(rows, values))]


def _records(grid: list[list[str]]) -> list[str]:
    header, rows = grid[0], grid[1:]
    if len(header) - 1 > len(rows):  # wide: one record per value column
        return [f"{header[j]}: " + "; ".join(f"{r[0]} = {r[j]}" for r in rows if r[j]) for j in range(1, len(header))]
    return [f"{r[0]}: " + "; ".join(f"{header[j]} = {r[j]}" for j in range(1, len(header)) if r[j]) for r in rows]


def table_records(text: str) -> str:
    """`text` with each well-formed markdown table replaced by its records (other lines kept), tables
    glued under grouped column names or a two-row header of spanning groups included (`_grid`)."""
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
