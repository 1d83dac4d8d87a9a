"""Paragraphs and sections: headings open sections, lines join into paragraphs.

A new paragraph starts at a vertical gap (PDF) or at what the line structure shows
(blank lines, a short last line, captions, bullets, bibliography entries).
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from stages.core.extract.captions import CAPTION
from stages.core.extract.records import Line
from stages.core.tree.headings import mark_headings
from stages.core.tree.lines import REF_ENTRY, REF_TITLE, DocInput, ends_sentence, starts_continuation

# PDF: a line whose top is at least this x the usual line height (baseline-to-baseline distance, the CSS
# sense, measured per font size in the document) below the previous line starts a new paragraph; a
# paragraph's own lines sit one line height apart, the gap between paragraphs adds half a line or more
PARAGRAPH_GAP_RATIO = 1.5
# a line that ends a sentence and is shorter than this x a full line around it ends its paragraph: a
# justified paragraph's lines are full, its last line is usually not
SHORT_LINE_RATIO = 0.8

_BULLET = re.compile(r"^[\u2022\u25cf\u25aa\u25a0\u2023\u2043\u2219\u25e6\u00b7*\u2013\u2014-]\s+")
_ENUM = re.compile(r"^(\((?:[a-z]|[ivx]{1,4}|\d{1,2})\)|(?:[a-z]|\d{1,2})\))\s")
_AUTHOR_START = re.compile(r"^[A-Z][A-Za-z\u00c0-\u024f'\u2019\-]+,\s+(?:[A-Z]\.|[A-Z][a-z]+)")


class _Breaker:
    """Decides whether a new paragraph starts between two consecutive lines."""

    def __init__(self, lines: list[Line], blank_line_mode: bool) -> None:
        self.blank_line_mode = blank_line_mode
        self.lines = lines
        texts = [ln for ln in lines if ln.kind == "text" and not ln.heading]
        lens = sorted(len(ln.text) for ln in texts if len(ln.text) >= 20)
        self.typical = lens[int(0.8 * (len(lens) - 1))] if lens else 80
        # PDF: usual pitch per font size and block extents
        pitches: dict[float, list[float]] = defaultdict(list)
        self.block_x: dict[int, tuple[float, float]] = {}
        for a, b in zip(texts, texts[1:]):
            if (a.y0 is not None and b.y0 is not None and a.block == b.block and a.page == b.page
                    and a.font_size and b.font_size and abs(a.font_size - b.font_size) < 0.2 and b.y0 > a.y0):
                pitches[round(a.font_size, 1)].append(b.y0 - a.y0)
        self.pitch = {k: statistics.median(v) for k, v in pitches.items()}
        for ln in texts:
            if ln.x0 is None or ln.block is None:
                continue
            lo, hi = self.block_x.get(ln.block, (ln.x0, ln.x1 or ln.x0))
            self.block_x[ln.block] = (min(lo, ln.x0), max(hi, ln.x1 or ln.x0))

    def _local_full_len(self, i: int) -> int:
        """Length of a full line near line i: the longest of up to 3 lines each side, same block, no heading between."""
        ln = self.lines[i]
        around: list[int] = []
        for step in (-1, 1):
            j, seen = i + step, 0
            while 0 <= j < len(self.lines) and seen < 3:
                o = self.lines[j]
                if o.heading or o.block != ln.block:
                    break
                if o.kind == "text":
                    around.append(len(o.text))
                    seen += 1
                j += step
        return max(around) if around else self.typical

    def breaks(self, i_prev: int, i_cur: int, in_refs: bool, labelled_refs: bool = False) -> bool:
        """labelled_refs: a bibliography whose entries start with [n]: only an entry starts a paragraph."""
        a, b = self.lines[i_prev], self.lines[i_cur]
        if labelled_refs:
            return bool(REF_ENTRY.match(b.text))
        if CAPTION.match(b.text) or _BULLET.match(b.text) or REF_ENTRY.match(b.text):
            return True
        if _ENUM.match(b.text) and re.search(r"[.:;]$", a.text):
            return True  # "(1) ..." / "b) ..." items, but not "(kWh) as follows" mid-sentence
        if in_refs and _AUTHOR_START.match(b.text) and ends_sentence(a.text):
            return True
        if a.y0 is not None and b.y0 is not None and a.font_size and b.font_size:
            return self._pdf_break(a, b)
        if a.block != b.block:
            continuation = not ends_sentence(a.text) and (starts_continuation(b.text) or a.text.endswith("-"))
            return not continuation
        if self.blank_line_mode:
            return False
        if ends_sentence(a.text) and len(a.text) < SHORT_LINE_RATIO * self._local_full_len(i_prev):
            return True
        return False

    def _pdf_break(self, a: Line, b: Line) -> bool:
        assert a.y0 is not None and b.y0 is not None and a.x0 is not None and b.x0 is not None
        assert a.x1 is not None and b.x1 is not None and a.font_size and b.font_size
        same_column = a.page == b.page and b.y0 > a.y0 and min(a.x1, b.x1) > max(a.x0, b.x0)
        if not same_column:  # new column or page: only an unfinished sentence continues
            return ends_sentence(a.text) or not (starts_continuation(b.text) or a.text.endswith("-"))
        if abs(a.font_size - b.font_size) > 0.5:
            return True
        usual = self.pitch.get(round(a.font_size, 1), 1.2 * a.font_size)
        if b.y0 - a.y0 >= PARAGRAPH_GAP_RATIO * usual:
            return True
        lo, hi = self.block_x.get(a.block if a.block is not None else -1, (a.x0, a.x1))
        width = max(hi - lo, 1.0)
        if ends_sentence(a.text) and (a.x1 - lo) < SHORT_LINE_RATIO * width:
            return True
        if ends_sentence(a.text) and b.x0 - lo > 0.5 * b.font_size:
            return True  # first-line indent
        return False


@dataclass
class Para:
    kind: str  # text | table | image
    parts: list[tuple[str, int]] = field(default_factory=list)
    page: int = 1


@dataclass
class Section:
    title: str | None
    page: int
    paras: list[Para] = field(default_factory=list)


def _labelled_bibliographies(lines: list[Line]) -> set[int]:
    """Indexes of sections (as group_sections counts them) that are [n]-labelled bibliographies."""
    out: set[int] = set()
    sec, count, is_ref = 0, 0, False
    for ln in [*lines, Line("", 0, 0, heading="<end>")]:
        if ln.heading:
            if is_ref and count >= 3:
                out.add(sec)
            sec += 1
            count, is_ref = 0, bool(REF_TITLE.match(ln.heading))
            continue
        if ln.kind == "text" and REF_ENTRY.match(ln.text):
            count += 1
    return out


def group_sections(doc: DocInput) -> list[Section]:
    """Headings open sections; lines join into paragraphs by the break rules."""
    lines = mark_headings(doc)
    blank_line_mode = doc.format in ("md", "txt") and len({ln.block for ln in lines}) > 1
    br = _Breaker(lines, blank_line_mode)
    sections: list[Section] = [Section(None, lines[0].page if lines else 1)]
    last_text_idx: int | None = None
    current: Para | None = None
    labelled = _labelled_bibliographies(lines)
    for i, ln in enumerate(lines):
        sec = sections[-1]
        if ln.heading:
            sections.append(Section(ln.heading, ln.page))
            current, last_text_idx = None, None
            continue
        if ln.kind in ("table", "image"):
            sec.paras.append(Para(ln.kind, [(ln.text, ln.page)], ln.page))
            continue
        in_refs = bool(sec.title and REF_TITLE.match(sec.title))
        if current is None or last_text_idx is None or ln.title_line != lines[last_text_idx].title_line \
                or br.breaks(last_text_idx, i, in_refs, in_refs and len(sections) - 1 in labelled):
            current = Para("text", [], ln.page)
            sec.paras.append(current)
        current.parts.append((ln.text, ln.page))
        last_text_idx = i
    if not sections[0].paras and len(sections) > 1:
        sections = sections[1:]
    return sections


