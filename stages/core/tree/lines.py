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
    """params.yaml `tree` section: the two knobs a user of a new corpus may turn. The tree's other rules
    (headings, paragraph breaks, tables) are fixed: their constants sit next to the code that uses them."""

    max_paragraph_chars: int = 1500  # longer paragraphs are split on sentence boundaries
    extra_abbreviations: list[str] = field(default_factory=list)  # added to the curated Punkt list

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.max_paragraph_chars < 200:
            raise ParamError("params.yaml: tree.max_paragraph_chars must be >= 200")


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


# a line at the top or bottom of this many pages is a running header or footer: three pages tell a
# repeated line from a heading that happens to sit at the top of two
REPEATED_LINE_MIN_PAGES = 3


def drop_page_furniture(lines: list[Line]) -> list[Line]:
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
    if len(by_page) <= REPEATED_LINE_MIN_PAGES:  # too few pages to tell a running line from a heading
        repeated: set[str] = set()
    else:
        repeated = {k for k, pages in pages_of.items() if len(pages) >= REPEATED_LINE_MIN_PAGES}
    drop = {i for i in edge if _norm_key(lines[i].text) in repeated or _PAGE_NUM.match(lines[i].text)}
    return [ln for i, ln in enumerate(lines) if i not in drop]

