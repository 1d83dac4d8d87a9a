"""A table node's markdown read back: its caption, header and rows, one sentence per row.

Retrieval indexes each row as a sentence that carries the caption and the header
('Table 1: ... | Consumption: Human life, avg, 1 year | CO 2e (lbs): 11,023'), so a
row matches a question on its own; a context shows some rows of a table under its
caption and header once (`table_block`).
"""
from __future__ import annotations

import re

CAPTION_CHARS_IN_ROW = 160  # the caption a row sentence repeats is cut here (the table node keeps all of it)
# a column that fewer than this share of the rows fill holds no values of its own (a currency sign's
# column, a stray note reference)
FILLED_SHARE = 0.2


def markdown_cells(line: str) -> list[str]:
    """The cells of one markdown table line; an escaped pipe (\\|) stays inside its cell."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def is_separator(cells: list[str]) -> bool:
    """Whether a markdown table line's cells are its header separator (| --- | :---: |)."""
    return all(re.fullmatch(r":?-{2,}:?", c) for c in cells)


def table_parts(markdown: str, cut_caption: bool = True) -> tuple[str, list[str], list[list[str]]]:
    """(caption cut at CAPTION_CHARS_IN_ROW unless not ``cut_caption``, header cells, data rows) of a
    (caption +) markdown table; a data row with no value is left out, so the rows line up with
    `table_row_sentences`."""
    rows: list[list[str]] = []
    caption = ""
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if not rows and line:
                caption = f"{caption} {line}".strip()
            continue
        cells = markdown_cells(line)
        if is_separator(cells) or (rows and not any(cells)):
            continue  # the separator line, or an empty data row (the first line is the header, even empty)
        rows.append(cells)
    if not rows:
        return caption, [], []
    if cut_caption and len(caption) > CAPTION_CHARS_IN_ROW:
        cut = caption.rfind(" ", 0, CAPTION_CHARS_IN_ROW)
        caption = caption[: cut if cut > 0 else CAPTION_CHARS_IN_ROW] + " …"
    body = [r for r in rows[1:] if any(r)]
    return caption, aligned_header(rows[0], body), body


def aligned_header(header: list[str], rows: list[list[str]]) -> list[str]:
    """The header with its labels over the columns the rows fill. A statement that sets its currency
    sign in a column of its own is read with its period labels one column left of their values
    ('| | 2016 | 2015 | |' over '| Cash | | 452,030 | 461,329 |'), which would give each value the
    wrong year. When a label stands over a column the rows leave (nearly) empty and the labelled and the
    filled columns (the first, the row labels', apart) are as many, the labels move onto the filled
    columns in their order; otherwise the header is as written."""
    filled_rows = [r for r in rows if any(r[1:])]
    if not filled_rows:
        return header
    width = max(len(header), *(len(r) for r in filled_rows))
    share = [sum(i < len(r) and bool(r[i]) for r in filled_rows) / len(filled_rows) for i in range(width)]
    filled = [i for i in range(1, width) if share[i] >= FILLED_SHARE]
    labelled = [i for i in range(1, len(header)) if header[i]]
    if (not labelled or len(labelled) != len(filled) or labelled == filled
            or all(share[i] >= FILLED_SHARE for i in labelled)):
        return header
    out = [header[0]] + [""] * (width - 1)
    for src, dst in zip(labelled, filled, strict=True):
        out[dst] = header[src]
    return out


def table_row_sentences(markdown: str) -> list[str]:
    """Each data row of a (caption +) markdown table as 'Caption | Header: value | Header: value'."""
    caption, header, rows = table_parts(markdown)
    out = []
    for r in rows:
        pairs = [f"{header[i]}: {v}" if i < len(header) and header[i] else v for i, v in enumerate(r) if v]
        out.append(" | ".join([caption, *pairs] if caption else pairs))
    return out


def table_block(markdown: str, row_indices: list[int]) -> str:
    """Some data rows of a table as one compact markdown block: the caption and the header once,
    then the rows (indices into `table_row_sentences`' list) in table order."""
    caption, header, rows = table_parts(markdown)
    lines = [caption] if caption else []
    if any(header):
        lines += ["| " + " | ".join(header) + " |"]
    lines += ["| " + " | ".join(rows[i]) + " |" for i in sorted(set(row_indices)) if 0 <= i < len(rows)]
    return "\n".join(lines)
