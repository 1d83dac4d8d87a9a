"""Finding a table in the line flow: its caption, and the header and rows next to it.

A table is believed only next to a caption ("Table 3: ...", or IEEE's bare "TABLE IV"
line with its title below): numbers in prose without one stay prose. From the caption,
`_run` walks up and down over row-like and short label lines until prose; the side with
more rows is the table (where both sides have rows, the side this document's other
captions keep to). A caption next to a table extraction already found joins that table.
"""
from __future__ import annotations

import re

from stages.core.extract.captions import FIGURE_CAPTION
from stages.core.extract.records import Line
from stages.core.tree.tables.rows import (IEEE_CAPTION, STATEMENT_TITLE, TABLE_CAPTION, UNIT_JOIN, bound_units,
                                         label_like, row_like)
from stages.core.tree.tables.statements import header_lines, read_statement
from stages.core.tree.tables.table import read_table

MAX_CAPTION_LINES = 6
# a header may run to this many short lines (a header of one-word lines, each name wrapped word by word);
# more short lines and no row is a list or a figure's labels, not a table
MAX_HEADER_LINES = 24
# a caption with no table right below it takes one that starts after up to this many lines that are neither
# header nor row (the caption's footnotes, a page number), which stay in the prose
CAPTION_GAP_LINES = 3
MAX_TABLE_LINES = 400  # a run of table lines stops here: no text table is longer


def _caption_end(lines: list[Line], i: int) -> int:
    """Index after the caption that starts at line i (wrapped lines that continue it)."""
    j = i + 1
    text = lines[i].text
    while j < len(lines) and j - i < MAX_CAPTION_LINES and lines[j].kind == "text":
        nxt = lines[j].text
        if text.rstrip().endswith(".") or TABLE_CAPTION.match(nxt) or FIGURE_CAPTION.match(nxt):
            break
        if not (text.endswith("-") or ((nxt[:1].islower() or nxt[:1] in "(,;)")
                                       and not row_like(nxt, abbreviated_ends=False))):
            break
        text = nxt
        j += 1
    return j


def _capitals(text: str) -> bool:
    """A title line set in capitals ("BASED ON OUR ANALYTICAL MODEL"), not a header ("GPU Mem MBS")."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 3 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def _ieee_caption_end(lines: list[Line], i: int) -> int:
    """Index after an IEEE caption that starts with the bare "TABLE IV" line i: its first title line
    (even one ending in a number: "... (Model: OPT 2.7B)"), then the title lines in capitals (or after
    a hyphenated break) that follow it."""
    j = i + 1
    while j < len(lines) and j - i < MAX_CAPTION_LINES and lines[j].kind == "text":
        text = lines[j].text
        if TABLE_CAPTION.match(text) or IEEE_CAPTION.match(text) or FIGURE_CAPTION.match(text):
            break
        if j > i + 1 and (row_like(text, abbreviated_ends=False)
                          or not (_capitals(text) or lines[j - 1].text.endswith("-"))):
            break
        j += 1
    return j


def _header_above(lines: list[Line], j: int, taken: set[int]) -> bool:
    """Going up from the rows: is line j still header (only labels between it and the rows, and
    no more than MAX_HEADER_LINES of them)? A prose line above ends the table."""
    k = j
    n = 0
    while k >= 0 and k not in taken and lines[k].kind == "text" and label_like(lines[k].text) \
            and not row_like(lines[k].text):
        n += 1
        k -= 1
    return n <= MAX_HEADER_LINES


def _run(lines: list[Line], start: int, step: int, taken: set[int], ieee_ends: bool,
         dash_fillers: bool = False) -> list[int]:
    """Indices of the table lines next to a caption, walking from `start` by `step` (+1 down, -1 up):
    row-like lines and short label lines, until prose, another caption (``ieee_ends``: a bare "TABLE IV"
    line too) or a used line. Going up, the labels above the rows are their header, up to a prose line;
    under a run of more than MAX_HEADER_LINES short lines, the one right above the rows still heads them."""
    out: list[int] = []
    j = start
    rows = 0
    while 0 <= j < len(lines) and j not in taken and len(out) < MAX_TABLE_LINES:
        ln = lines[j]
        if ln.kind != "text" or ln.heading or TABLE_CAPTION.match(ln.text) or FIGURE_CAPTION.match(ln.text) \
                or STATEMENT_TITLE.match(ln.text):
            break
        if ieee_ends and IEEE_CAPTION.match(ln.text):
            break
        if row_like(ln.text, dash_fillers):
            rows += 1
        elif not label_like(ln.text):
            break
        elif step > 0 and not rows and len(out) >= MAX_HEADER_LINES:
            return []  # a long run of short lines and no row: not a table
        elif step < 0 and rows and not _header_above(lines, j, taken):
            if out and row_like(lines[out[-1]].text, dash_fillers):
                out.append(j)  # the line right above the rows still heads them
            break
        out.append(j)
        j += step
    # trailing labels (walking away from the caption) that no row follows are prose, not table
    if step > 0:
        while out and not row_like(lines[out[-1]].text, dash_fillers):
            out.pop()
    return sorted(out) if rows else []


def _after_gap(lines: list[Line], end: int, taken: set[int]) -> int:
    """Where a table below a caption starts when up to CAPTION_GAP_LINES lines sit between them that
    belong to neither: the caption's footnotes ("* One of these models was trained on ...", "12 The peak
    rate is ...") and a page number. Returns `end` when no such gap is there."""
    j = end
    while j < len(lines) and j - end < CAPTION_GAP_LINES and j not in taken and lines[j].kind == "text" \
            and not lines[j].heading and not TABLE_CAPTION.match(lines[j].text) \
            and not FIGURE_CAPTION.match(lines[j].text) and not IEEE_CAPTION.match(lines[j].text):
        text = lines[j].text.strip()
        if re.fullmatch(r"\d{1,3}", text) or not (row_like(text, True) or label_like(text)):
            j += 1
            continue
        break
    return j


def _caption_side(lines: list[Line]) -> int | None:
    """Where this document's captions sit: -1 when its tables are above their captions, +1 below,
    None when undecided. Counted on the "Table N" captions with rows on one side only, it settles the
    captions between two tables (a document that captions every table below it puts a caption between
    the rows of its table and those of the next)."""
    votes = 0
    for i, ln in enumerate(lines):
        if ln.kind != "text" or not TABLE_CAPTION.match(ln.text):
            continue
        end = _caption_end(lines, i)
        cap = set(range(i, end))
        n_up = sum(row_like(lines[k].text) for k in _run(lines, i - 1, -1, cap, ieee_ends=False))
        n_down = sum(row_like(lines[k].text) for k in _run(lines, end, 1, cap, ieee_ends=False))
        if (n_up >= 2) != (n_down >= 2):
            votes += -1 if n_up >= 2 else 1
    return None if votes == 0 else -1 if votes < 0 else 1


def _caption_text(lines: list[Line], i: int, end: int, ieee: bool) -> str:
    """The caption of lines i..end as one line: "TABLE IV: TITLE ..." for IEEE's, words a line break
    hyphenated joined up again, and "T able" (a PDF font's split) written as the word the document wrote."""
    caption = " ".join(lines[k].text for k in range(i, end))
    if ieee and end > i + 1:
        caption = f"{lines[i].text.strip()}: " + " ".join(lines[k].text for k in range(i + 1, end))
    caption = re.sub(r"(?<=[a-z])- (?=[a-z])", "", caption)  # 'com- mon' -> 'common'
    caption = re.sub(r"^T able\b", "Table", caption)
    return caption.replace(UNIT_JOIN, " ")  # a caption is text, never cells


def _statement(lines: list[Line], i: int, end: int, taken: set[int]) -> tuple[Line, list[int]] | None:
    """A financial statement under the title line i: its rows below, on the title's page (the node keeps one
    page), read as records (statements.py), with the header that extraction may have found as a ruled table
    right under the title; (the table line, the line indices it takes), or None under two rows."""
    start = end + 1 if end < len(lines) and lines[end].kind == "table" else end
    header = header_lines(lines[end].text) if start > end else []
    idx = [k for k in _run(lines, start, 1, taken | set(range(i, end)), ieee_ends=True) if lines[k].page == lines[i].page]
    if sum(row_like(lines[k].text) for k in idx) < 2:
        return None
    caption = _caption_text(lines, i, end, False)
    md = read_statement(header + [lines[k].text for k in idx], caption)
    return Line(text=md, page=lines[i].page, order=lines[i].order, kind="table"), [*range(i, start), *idx]


def find_tables(lines: list[Line]) -> list[Line]:
    """Lines with every captioned text table replaced by one `kind="table"` line (markdown with
    the caption first), placed where the table started; a caption next to a table that
    extraction already found is prepended to it."""
    original = lines
    lines = [Line(**{**ln.__dict__, "text": bound_units(ln.text)}) if ln.kind == "text" else ln for ln in lines]
    taken: set[int] = set()
    replaced: dict[int, Line] = {}
    side = _caption_side(lines)
    i = 0
    while i < len(lines):
        ln = lines[i]
        ieee = ln.kind == "text" and bool(IEEE_CAPTION.match(ln.text))
        statement = ln.kind == "text" and bool(STATEMENT_TITLE.match(ln.text))
        if ln.kind != "text" or i in taken or not (ieee or statement or TABLE_CAPTION.match(ln.text)):
            i += 1
            continue
        end = _ieee_caption_end(lines, i) if ieee else i + 1 if statement else _caption_end(lines, i)
        caption = _caption_text(lines, i, end, ieee)
        if statement and (rows := _statement(lines, i, end, taken)) is not None:
            replaced[i], used = rows
            taken.update(used)
            i = max(used) + 1
            continue
        neighbours = [k for k in ((end,) if ieee else (i - 1, end)) if 0 <= k < len(lines) and k not in taken]
        found = next((k for k in neighbours if lines[k].kind == "table"), None)
        if found is not None:
            t = lines[found]
            replaced[found] = Line(**{**t.__dict__, "text": f"{caption}\n{t.text}"})
            taken.update(range(i, end))
            taken.add(found)
            i = end
            continue
        cap_idx = set(range(i, end))
        # a statement's title heads its rows: only the rows below it (the lines above are the page's header)
        above = [] if ieee or statement else _run(lines, i - 1, -1, taken | cap_idx, ieee_ends=True)
        below = _run(lines, end, 1, taken | cap_idx, ieee_ends=True)
        n_up = sum(row_like(lines[k].text) for k in above)
        dashes = False  # the rows below were found past a gap (their rows may end in a lone "-")
        if not below and side != -1 and n_up < 2:  # not where this document captions its tables below them
            start = _after_gap(lines, end, taken | cap_idx)
            if start > end:
                below = _run(lines, start, 1, taken | cap_idx, ieee_ends=True, dash_fillers=True)
                dashes = bool(below)
        n_down = sum(row_like(lines[k].text, dashes) for k in below)
        if min(n_up, n_down) >= 2 and side is not None:
            idx = above if side < 0 else below  # rows on both sides: the document's own habit decides
        else:
            idx = above if n_up >= n_down else below
        if len(idx) < 2:
            i = end
            continue
        past_gap = dashes and idx is below
        table = read_table([lines[k].text for k in idx], caption, dash_fillers=past_gap)
        if past_gap and not table.names_every_column():
            i = end  # past a gap, only a table whose header names its columns: its rows are surely a table's
            continue
        first = lines[min(idx[0], i)]
        replaced[min(idx[0], i)] = Line(text=table.markdown(), page=first.page, order=first.order, kind="table")
        taken.update(idx)
        taken.update(cap_idx)
        i = max(end, idx[-1] + 1)
    return [replaced[k] if k in replaced else ln for k, ln in enumerate(original) if k not in taken or k in replaced]
