"""Extracted lines and the text rules shared by the tree builder's steps.

`Line` is one cleaned line of text (or a table / image object) in reading order,
`DocInput` one document's lines; `clean_line` and `join_lines` normalise and join
them; the patterns below (captions, sentence ends, bibliography entries) are used by
heading detection, paragraph breaking and table detection alike.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from stages.core.extract.records import Line


@dataclass
class TreeParams:
    """params.yaml `tree` section."""

    heading_font_ratio: float = 1.2  # a line this much larger than the median body size is a heading
    # PDF: a line whose top is less than this x the usual line height (baseline-to-baseline distance,
    # the CSS sense, measured per font size in the document) below the previous line joins its paragraph
    paragraph_gap_ratio: float = 1.5
    max_paragraph_chars: int = 1500  # longer paragraphs are split on sentence boundaries
    short_line_ratio: float = 0.8  # a sentence-final line shorter than this x a full line ends its paragraph
    max_heading_chars: int = 100  # longer lines are never headings
    repeated_line_min_pages: int = 3  # a line at the top/bottom of this many pages is a running header
    extra_abbreviations: list[str] = field(default_factory=list)  # added to the curated Punkt list
    text_tables: bool = True  # captioned tables in the text become table nodes (stages/core/tables.py)
    table_columns: str = "segment"  # segment: name value columns from a glued header | flat: the whole header
    ieee_captions: bool = True  # a bare "TABLE IV" line with its title below is a caption of the rows below it
    caption_gap_lines: int = 3  # footnote / page-number lines skipped between a caption and its table below
    bracketed_columns: bool = True  # a header of bracketed names sets the value columns (tables.Table.bracketed_fit)
    name_numbers: bool = True  # "Llama | 3.1 8B 4.31 ..." is "Llama 3.1 8B" (tables.Table.name_numbers_fit)
    grouped_header: bool = True  # a sub-header repeated under group names names each column (Table.grouped_columns)
    group_labels: bool = True  # label lines between rows name the rows below them (tables._label_groups)
    nearest_header: bool = True  # rows under a too-long run of short lines keep the line right above as header
    key_column: bool = True  # unnamed rows' distinct first values name them when the header then names each column
    value_names: bool = True  # a header naming each value column only ("H100 TPU v1 ...") leaves row names unnamed
    carried_keys: bool = False  # "8 Mélange ..." over "H100-only ...": the group's rows take its key ("8 H100-only")
    groups_above: bool = False  # "news yelp" over "Model Energy (Wh) Accuracy Energy (Wh) Accuracy" names each column
    abbreviated_ends: bool = True  # a header line may end in "Util.", a row in "258 bil."; "(…, 2020)." ends prose
    unit_cells: bool = True  # a number and the unit after it ("0.180 $/h", "80 GB") are one cell (tables.bound_units)
    joined_cells: bool = True  # pieces of one value a space split apart are one cell ("0.61 (13800)", tables.joined_cells)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.heading_font_ratio <= 1.0:
            raise ParamError("params.yaml: tree.heading_font_ratio must be > 1.0")
        if self.paragraph_gap_ratio <= 1.0:
            raise ParamError("params.yaml: tree.paragraph_gap_ratio must be > 1.0")
        if self.max_paragraph_chars < 200:
            raise ParamError("params.yaml: tree.max_paragraph_chars must be >= 200")
        if not 0.0 < self.short_line_ratio <= 1.0:
            raise ParamError("params.yaml: tree.short_line_ratio must be in (0, 1]")
        if self.max_heading_chars < 10:
            raise ParamError("params.yaml: tree.max_heading_chars must be >= 10")
        if self.table_columns not in ("segment", "flat"):
            raise ParamError(f"params.yaml: tree.table_columns must be segment or flat, not {self.table_columns!r}")
        if not 0 <= self.caption_gap_lines <= 10:
            raise ParamError(f"params.yaml: tree.caption_gap_lines must be in 0..10, not {self.caption_gap_lines!r}")
        if self.repeated_line_min_pages < 2:
            raise ParamError("params.yaml: tree.repeated_line_min_pages must be >= 2")


@dataclass
class DocInput:
    doc_id: str
    title: str
    source: str
    format: str
    n_pages: int
    lines: list[Line]


# ----------------------------------------------------------------- text cleanup
WS = re.compile(r"[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<=[\w)\]%])\s+(?=[.,;:!?](?:\s|$))")
_PAREN_SPACE = re.compile(r"([(\[])\s+|\s+([)\]])")


def clean_line(text: str) -> str:
    """NFKC (ligatures, sub/superscripts), one space between words, no space before punctuation."""
    t = unicodedata.normalize("NFKC", text)
    t = WS.sub(" ", t).strip()
    t = _SPACE_BEFORE_PUNCT.sub("", t)
    t = _PAREN_SPACE.sub(lambda m: m.group(1) or m.group(2), t)
    return t


_HYPHEN_END = re.compile(r"[A-Za-z\u00c0-\u024f]-$")


def join_lines(parts: list[tuple[str, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Join (text, page) lines into one string, de-hyphenating "intro-\\nduce" (not "Carbon-\\nFree").

    Returns the text and (offset, page) marks: the page of each character is the page
    of the last mark at or before it.
    """
    out = ""
    marks: list[tuple[int, int]] = []
    for text, page in parts:
        if not text:
            continue
        if out:
            if _HYPHEN_END.search(out) and text[:1].islower():
                out = out[:-1]  # "intro-" + "duce"
            elif not (_HYPHEN_END.search(out) and text[:1].isupper()):  # "Carbon-" + "Free" keeps its hyphen
                out += " "
        marks.append((len(out), page))
        out += text
    return out, marks


def page_at(marks: list[tuple[int, int]], offset: int) -> int:
    page = marks[0][1] if marks else 1
    for off, p in marks:
        if off > offset:
            break
        page = p
    return page


# --------------------------------------------------------------- shared patterns
REF_TITLE = re.compile(
    r"^(?:[\dA-Z]{1,3}(?:\.\d+)*\.?\s+)?(references|bibliography|works cited|literature cited|"
    r"references and notes|cited literature)\b", re.I)
REF_ENTRY = re.compile(r"^\[(?:\d{1,3}|[A-Z][A-Za-z]{0,11}\+?\d{2,4}[a-z]?)\]\s*\S")  # [12] / [Str19]
YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)[a-z]?\b")
# a sentence end, maybe followed by a footnote mark ("consumption. 1", "work [3]"); "47.6" is a number
SENT_END = re.compile(
    r"(?:(?<!\d)[.!?][\"'\u201d\u2019)\]]*(?:\s*(?:\d{1,3}|\[\d+(?:[,\u2013-]\s*\d+)*\]))|[.!?][\"'\u201d\u2019)\]]*)$")
_PAGE_NUM = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)


def ends_sentence(text: str) -> bool:
    return bool(SENT_END.search(text)) or text.endswith(":")


def starts_continuation(text: str) -> bool:
    return bool(text) and (text[0].islower() or text[0] in ",;)")


# ------------------------------------------------------------- line preparation
def _norm_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def drop_page_furniture(lines: list[Line], min_pages: int) -> list[Line]:
    """Remove running headers/footers (same text at the top/bottom of many pages) and page numbers."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if ln.kind == "text":
            by_page[ln.page].append(i)
    edge: set[int] = set()
    for idxs in by_page.values():
        edge.update(idxs[:3])
        edge.update(idxs[-3:])
    pages_of: dict[str, set[int]] = defaultdict(set)
    for i in edge:
        pages_of[_norm_key(lines[i].text)].add(lines[i].page)
    repeated = {k for k, pages in pages_of.items() if len(pages) >= min_pages and len(by_page) >= min_pages + 1}
    drop = {i for i in edge if _norm_key(lines[i].text) in repeated or _PAGE_NUM.match(lines[i].text)}
    return [ln for i, ln in enumerate(lines) if i not in drop]

