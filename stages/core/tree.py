"""Build document → section → paragraph → sentence trees from extracted lines.

Retrieval can only be as precise as its units, so the tree follows the document's own
structure rather than pages:
- sections come from headings: a larger font (PDF), or, for text without fonts (the
  WattBot JSON), numbered heading lines ("3", "3.1", "A.2", "IV.") whose numbers form
  a plausible sequence, plus well-known unnumbered headings and short ALL-CAPS lines;
- paragraphs come from vertical gaps (PDF) or line structure (blank lines, short last
  lines, captions, bullets, indentation) and are capped in length on sentence bounds;
- every node keeps the pages it came from; ids ``doc:sec{i}:p{j}:s{k}`` restart under
  each parent, so ancestry is a prefix test;
- bibliography and front matter are flagged so retrieval can leave these decoys out.
"""
from __future__ import annotations

import math
import re
import statistics
import sys
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

import polars as pl
from tqdm import tqdm

from .sentences import SentenceSplitter


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

    def validate(self) -> None:
        from .params import ParamError

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
        if self.repeated_line_min_pages < 2:
            raise ParamError("params.yaml: tree.repeated_line_min_pages must be >= 2")


NODE_SCHEMA = {
    "node_id": pl.Utf8, "parent_id": pl.Utf8, "level": pl.Utf8, "doc_id": pl.Utf8, "ordinal": pl.Int64,
    "text": pl.Utf8, "page": pl.Int64, "page_end": pl.Int64, "title": pl.Utf8, "attachment_type": pl.Utf8,
    "source": pl.Utf8, "is_reference": pl.Boolean, "is_front_matter": pl.Boolean,
}


@dataclass
class Node:
    node_id: str
    parent_id: str | None
    level: str
    doc_id: str
    ordinal: int
    text: str
    page: int
    page_end: int
    title: str | None = None
    attachment_type: str | None = None
    source: str | None = None
    is_reference: bool = False
    is_front_matter: bool = False


@dataclass
class Line:
    """One cleaned text line (or a table / image object) in reading order."""

    text: str
    page: int
    order: int
    kind: str = "text"  # text | table | image
    font_size: float | None = None
    bold: bool | None = None
    x0: float | None = None
    y0: float | None = None
    x1: float | None = None
    y1: float | None = None
    block: int | None = None
    heading: str | None = None  # section title when this line is a heading
    title_line: bool = False  # part of the document title on page 1


@dataclass
class DocInput:
    doc_id: str
    title: str
    source: str
    format: str
    n_pages: int
    lines: list[Line]


# ----------------------------------------------------------------- text cleanup
_WS = re.compile(r"[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<=[\w)\]%])\s+(?=[.,;:!?](?:\s|$))")
_PAREN_SPACE = re.compile(r"([(\[])\s+|\s+([)\]])")


def clean_line(text: str) -> str:
    """NFKC (ligatures, sub/superscripts), one space between words, no space before punctuation."""
    t = unicodedata.normalize("NFKC", text)
    t = _WS.sub(" ", t).strip()
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


def _page_at(marks: list[tuple[int, int]], offset: int) -> int:
    page = marks[0][1] if marks else 1
    for off, p in marks:
        if off > offset:
            break
        page = p
    return page


# -------------------------------------------------------------- heading patterns
_NUM_HEAD = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})(?:\.?\s+|\.(?=[A-Z][a-z]))(?P<title>\S.*)$")
_LETTER_HEAD = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){0,3})(?P<dot>\.?)\s+(?P<title>\S.*)$")
_ROMAN_HEAD = re.compile(r"^(?P<num>(?:X{0,2})(?:IX|IV|V?I{0,3}))\.\s+(?P<title>\S.*)$")
_CAPTION = re.compile(r"^(fig(?:ure)?s?|tab(?:le)?|chart|exhibit|plate)\.?\s*([A-Z]?\d+|[IVXL]+)\b", re.I)
_KEYWORD_HEADINGS = {
    "abstract", "introduction", "background", "related work", "related works", "method", "methods",
    "methodology", "approach", "results", "discussion", "conclusion", "conclusions",
    "conclusion and future work", "conclusions and future work", "future work", "limitations",
    "acknowledgment", "acknowledgments", "acknowledgement", "acknowledgements", "references",
    "bibliography", "works cited", "literature cited", "appendix", "appendices", "supplementary material",
    "supplementary materials", "executive summary", "summary", "preface", "overview", "contents",
    "table of contents", "ethics statement", "ethical considerations", "ethical considerations statement",
    "broader impact", "broader impacts", "broader impact statement", "impact statement", "author contributions",
    "data availability", "funding", "endnotes", "notes", "glossary", "foreword", "key findings",
}
_INLINE_ABSTRACT = re.compile(r"^(abstract|summary)\s*(?:[:.\u2014\u2013]|-{1,2})\s*(?P<rest>\S.{20,})$", re.I)
_APPENDIX_HEAD = re.compile(r"^appendix\s+([A-Z]|[IVX]+|\d+)\b(?:\s*[:.\u2014\u2013-]\s*|\s+)?(?P<title>.*)$", re.I)
_REF_TITLE = re.compile(
    r"^(?:[\dA-Z]{1,3}(?:\.\d+)*\.?\s+)?(references|bibliography|works cited|literature cited|"
    r"references and notes|cited literature)\b", re.I)
_BULLET = re.compile(r"^[\u2022\u25cf\u25aa\u25a0\u2023\u2043\u2219\u25e6\u00b7*\u2013\u2014-]\s+")
_ENUM = re.compile(r"^(\((?:[a-z]|[ivx]{1,4}|\d{1,2})\)|(?:[a-z]|\d{1,2})\))\s")
_REF_ENTRY = re.compile(r"^\[(?:\d{1,3}|[A-Z][A-Za-z]{0,11}\+?\d{2,4}[a-z]?)\]\s*\S")  # [12] / [Str19]
_AUTHOR_START = re.compile(r"^[A-Z][A-Za-z\u00c0-\u024f'\u2019\-]+,\s+(?:[A-Z]\.|[A-Z][a-z]+)")
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)[a-z]?\b")
# a sentence end, maybe followed by a footnote mark ("consumption. 1", "work [3]"); "47.6" is a number
_SENT_END = re.compile(
    r"(?:(?<!\d)[.!?][\"'\u201d\u2019)\]]*(?:\s*(?:\d{1,3}|\[\d+(?:[,\u2013-]\s*\d+)*\]))|[.!?][\"'\u201d\u2019)\]]*)$")
_PAGE_NUM = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(\S.*?)\s*#*$")
_SMALL_CAPS_SPLIT = re.compile(r"(?<![\w'\u2019])([A-Z]) ([A-Z]{2,})\b")
_FUNCTION_WORDS = {"a", "an", "the", "and", "or", "of", "for", "in", "on", "to", "with", "from", "by", "at",
                   "as", "via", "into", "its", "their", "our", "&"}


def _roman_value(s: str) -> int:
    vals = {"I": 1, "V": 5, "X": 10}
    total = 0
    for i, ch in enumerate(s):
        v = vals[ch]
        total += -v if i + 1 < len(s) and vals[s[i + 1]] > v else v
    return total


def plausible_title(title: str, max_chars: int) -> bool:
    """Could `title` be a section heading's text (not a sentence, table row or caption)?"""
    t = title.strip()
    if not 2 <= len(t) <= max_chars or not t[0].isupper():
        return False
    if t.endswith((".", ",", ";")) or len(t.split()) > 14:
        return False
    if re.search(r"[.!?] [A-Z]", t) or re.search(r"[=@%$]|\s\d{1,3}$|\.{3,}", t):
        return False
    if _CAPTION.match(t) or re.search(r"[\"\u201c\u201d]", t):
        return False
    letters = sum(c.isalpha() for c in t)
    digits = sum(c.isdigit() for c in t)
    chars = len(t.replace(" ", ""))
    if letters < 0.6 * chars or digits > 0.25 * chars:
        return False
    words = [w for w in re.findall(r"[A-Za-z]+", t)]
    return any(len(w) >= 3 for w in words)


def keyword_heading(text: str) -> str | None:
    """'References', 'Appendix B: Extra results', 'ACKNOWLEDGMENTS' → the heading, else None."""
    t = text.strip().rstrip(":.").strip()
    if not t[:1].isupper():
        return None
    if t.lower() in _KEYWORD_HEADINGS:
        return t
    m = _APPENDIX_HEAD.match(t)
    if m and len(t) <= 90 and (not m.group("title") or plausible_title(m.group("title"), 90)):
        return t
    return None


def caps_heading(text: str, max_chars: int) -> bool:
    """A short ALL-CAPS line ('EXECUTIVE SUMMARY', 'HEALTHCARE') used as a heading."""
    t = text.strip()
    if len(t) > max_chars or re.search(r"[\d,;()\[\]=%]", t) or t.endswith("."):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’\-/&]*", t)
    if not 1 <= len(words) <= 10 or t.upper() != t or _CAPTION.match(t):
        return False
    if len(words) == 1:  # one word: a real one (HEALTHCARE), not an acronym (UNFCCC, TFLOPS)
        w = words[0]
        vowels = sum(ch in "AEIOUY" for ch in w)
        return len(w) >= 6 and vowels >= 2 and vowels >= 0.25 * len(w)
    return any(len(w) >= 5 for w in words)


def _fix_small_caps(title: str) -> str:
    """Small-caps headings come out as 'I NTRODUCTION': glue the split word.

    'A' and 'I' are real words too ('A SUSTAINABILITY MINDSET'): glued only when what
    follows cannot start a word (two consonants: 'A PPENDIX', 'I NTRODUCTION').
    """
    def glue(m: re.Match[str]) -> str:
        head, rest = m.group(1), m.group(2)
        if head in "AI" and (rest[0] in "AEIOUY" or rest[1] in "AEIOUYHLR"):
            return m.group(0)
        return head + rest
    return _SMALL_CAPS_SPLIT.sub(glue, title)


@dataclass
class _Cand:
    idx: int
    style: int  # 0 arabic, 1 roman, 2 appendix letter
    path: tuple[int, ...]
    title: str
    dotted: bool = False  # "2.Energy" / "2. Energy" rather than "2 Energy"
    wrap_idx: int | None = None  # a short lower-case next line that finishes the heading


def _numbered_candidate(text: str, max_chars: int, roman_doc: bool) -> _Cand | None:
    m = _NUM_HEAD.match(text)
    if m:
        path = tuple(int(x) for x in m.group("num").split("."))
        if path[0] <= 30 and all(1 <= x <= 40 for x in path[1:]) and plausible_title(m.group("title"), max_chars):
            num = m.group("num")
            dotted = text[len(num):len(num) + 1] == "."
            return _Cand(-1, 0, path, f"{num} {_fix_small_caps(m.group('title').strip())}", dotted)
        return None
    m = _ROMAN_HEAD.match(text)
    if m and m.group("num"):
        title = _fix_small_caps(m.group("title").strip())
        if plausible_title(title, max_chars):
            return _Cand(-1, 1, (_roman_value(m.group("num")),), f"{m.group('num')}. {title}")
    m = _LETTER_HEAD.match(text)
    if m and not (roman_doc and m.group("dot") and "." not in m.group("num")):
        title = m.group("title").strip()
        if (plausible_title(title, max_chars) and not title.lower().startswith(("the ", "a ", "an "))
                and title.split()[-1].lower() not in _FUNCTION_WORDS):
            parts = m.group("num").split(".")
            path = (ord(parts[0]) - ord("A") + 1, *(int(x) for x in parts[1:]))
            return _Cand(-1, 2, path, f"{m.group('num')} {_fix_small_caps(title)}", bool(m.group("dot")))
    return None


def _step_penalty(a: _Cand, b: _Cand) -> float | None:
    """Cost of `b` directly following `a` in a heading numbering (None: not allowed).

    A change of separator ("2 Energy" then "3.Results") costs a little, so a footnote
    "1 Google" loses to the heading "1.Introduction" when both could start the chain.
    """
    p = _step_penalty_numbers(a, b)
    if p is not None and a.dotted != b.dotted and len(a.path) == len(b.path) == 1:
        p += 0.1
    return p


def _step_penalty_numbers(a: _Cand, b: _Cand) -> float | None:
    if a.style == b.style:
        pa, pb = a.path, b.path
        if len(pb) == len(pa) + 1 and pb[:-1] == pa:
            return 0.0 if pb[-1] == 1 else (0.6 if pb[-1] == 2 else None)
        k = len(pb) - 1
        if k < len(pa) and pb[:k] == pa[:k]:
            d = pb[k] - pa[k]
            return 0.0 if d == 1 else (0.6 if d == 2 else None)
        return None
    if b.style == 2 and a.style in (0, 1) and b.path in ((1,), (1, 1)):
        return 0.0  # main sections, then Appendix A
    return None


def _start_penalty(c: _Cand) -> float | None:
    if c.style in (0, 1):
        return {(1,): 0.0, (1, 1): 0.3, (2,): 0.5}.get(c.path)
    return None


def numbered_chain(cands: list[_Cand]) -> list[_Cand]:
    """The longest plausible heading numbering (1, 2, 2.1, 2.2, 3, A, A.1, ...) among candidates.

    Footnotes, list items, table rows and table-of-contents lines also look like
    "3 Something"; only a sequence that keeps counting is believed.
    """
    n = len(cands)
    best = [-math.inf] * n
    prev = [-1] * n
    for i, c in enumerate(cands):
        s = _start_penalty(c)
        if s is not None:
            best[i] = 1.0 - s
        for j in range(i):
            if best[j] == -math.inf:
                continue
            p = _step_penalty(cands[j], c)
            if p is None:
                continue
            v = best[j] + 1.0 - p
            if v >= best[i]:  # ties: the later predecessor (after a table of contents)
                best[i], prev[i] = v, j
    if not n or max(best) == -math.inf:
        return []
    top = max(best)
    i = max(k for k in range(n) if best[k] == top)
    chain = []
    while i >= 0:
        chain.append(cands[i])
        i = prev[i]
    chain.reverse()
    if len(chain) < 2 and not (chain and keyword_heading(chain[0].title.split(" ", 1)[-1])):
        return []
    return chain


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


def _is_title_line(text: str, title: str) -> bool:
    """Is this line (part of) the document title? Headings never are ("1 Introduction")."""
    if _NUM_HEAD.match(text) or keyword_heading(text):
        return False
    a = re.sub(r"[^a-z0-9]", "", text.lower())
    b = re.sub(r"[^a-z0-9]", "", title.lower())
    return len(a) >= 12 and bool(b) and a in b


def _body_font_size(lines: list[Line]) -> float | None:
    w: Counter[float] = Counter()
    for ln in lines:
        if ln.kind == "text" and ln.font_size:
            w[round(ln.font_size, 1)] += len(ln.text)
    if not w:
        return None
    total = sum(w.values())
    acc = 0
    for size in sorted(w):  # character-weighted median
        acc += w[size]
        if acc * 2 >= total:
            return size
    return None


def _next_text(lines: list[Line], i: int) -> Line | None:
    for ln in lines[i + 1:]:
        if ln.kind == "text":
            return ln
    return None


def _prev_text(lines: list[Line], i: int) -> Line | None:
    for ln in reversed(lines[:i]):
        if ln.kind == "text":
            return ln
    return None


def _continues_sentence(nxt: Line | None) -> bool:
    """The next line carries on a sentence: this line was a wrapped fragment, not a heading."""
    return nxt is not None and bool(re.match(r"^([a-z][a-z'\u2019-]*\b(?![A-Z])|[).,;:])", nxt.text))


def _is_caps(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters)


def mark_headings(doc: DocInput, params: TreeParams) -> list[Line]:
    """Set Line.heading for heading lines (and split inline 'Abstract: ...' lines)."""
    lines: list[Line] = []
    first_page = min((ln.page for ln in doc.lines), default=1)
    for ln in doc.lines:
        m = _INLINE_ABSTRACT.match(ln.text) if ln.kind == "text" else None
        if m:
            head = Line(**{**asdict(ln), "text": m.group(1)})
            head.heading = m.group(1)
            lines.append(head)
            lines.append(Line(**{**asdict(ln), "text": m.group("rest")}))
            continue
        lines.append(ln)
    body = _body_font_size(lines)
    roman_doc = sum(1 for ln in lines if ln.kind == "text" and (m := _ROMAN_HEAD.match(ln.text)) and m.group("num")) >= 2
    cands: list[_Cand] = []
    maxc = params.max_heading_chars
    seen_md = False
    seen_heading = False
    refs_at: int | None = None
    for i, ln in enumerate(lines):
        if ln.kind != "text" or ln.heading:
            continue
        md = _MD_HEADING.match(ln.text) if doc.format == "md" else None
        if md:
            if not seen_md and md.group(2).strip() == doc.title.strip():
                ln.text, ln.title_line = md.group(2).strip(), True
            else:
                ln.heading = md.group(2).strip()
            seen_md = True
            continue
        if ln.page == first_page and _is_title_line(ln.text, doc.title):
            ln.title_line = True
            continue
        nxt = _next_text(lines, i)
        large = bool(body and ln.font_size and ln.font_size >= params.heading_font_ratio * body)
        emphasised = large or bool(ln.bold) or body is None or (ln.font_size or 0) > (body or 0) + 0.5
        if emphasised:
            c = _numbered_candidate(ln.text, maxc, roman_doc)
            if c is not None and _continues_sentence(nxt):
                # "2 Background: The Underutilization of GPUs" / "in LLM Decoding" wraps;
                # "1 Supply chains focus on ... goods to" / "customers ..." is a note
                assert nxt is not None
                if len(nxt.text) <= 40 and not _ends_sentence(nxt.text) and body is None:
                    c.wrap_idx = i + 1 + next(k for k, o in enumerate(lines[i + 1:]) if o is nxt)
                else:
                    c = None
            if c is not None:
                c.idx = i
                cands.append(c)
                seen_heading = True
                continue
        kw = keyword_heading(ln.text)
        prev = _prev_text(lines, i)
        if kw and _APPENDIX_HEAD.match(kw) and _continues_sentence(nxt):
            kw = None  # "(see" / "Appendix E" / "for details)"
        if kw and ln.text.endswith(".") and prev is not None and re.search(r"[a-z,]$", prev.text):
            kw = None  # "... see Figure 11 in" / "Appendix E." ends a sentence
        if kw and (emphasised or len(ln.text) <= 40):
            ln.heading = kw
            seen_heading = True
            if refs_at is None and _REF_TITLE.match(kw):
                refs_at = i
            continue
        if large and len(ln.text) <= maxc and sum(ch.isalpha() for ch in ln.text) >= 3 and not _CAPTION.match(ln.text):
            ln.heading = ln.text
            seen_heading = True
            continue
        if (caps_heading(ln.text, min(maxc, 60)) and (body is None or emphasised)
                and (seen_heading or ln.page != first_page)
                and not (prev is not None and _CAPTION.match(prev.text))):
            ln.heading = _fix_small_caps(ln.text)
    if refs_at is not None and any(c.idx < refs_at for c in cands):
        # numbered lists after the bibliography (checklists, notes) do not continue the sections
        cands = [c for c in cands if c.idx < refs_at or c.style == 2]
    cands = _drop_lists(cands, lines)
    chain = numbered_chain(cands)
    consumed: set[int] = set()
    for c in chain:
        lines[c.idx].heading = c.title
        if c.wrap_idx is not None:
            lines[c.idx].heading = f"{c.title} {lines[c.wrap_idx].text}"
            lines[c.idx].text = f"{lines[c.idx].text} {lines[c.wrap_idx].text}"
            consumed.add(c.wrap_idx)
    lines = [ln for k, ln in enumerate(lines) if k not in consumed]
    if roman_doc:
        _mark_ieee_subsections(lines, maxc)
    return _merge_wrapped_headings(lines, params, body)


def _drop_lists(cands: list[_Cand], lines: list[Line]) -> list[_Cand]:
    """Numbered lines right after one another at one depth are a list or a table of contents."""
    pos = {id(ln): k for k, ln in enumerate(ln for ln in lines if ln.kind == "text")}
    text_idx = {c.idx: pos[id(lines[c.idx])] for c in cands}
    drop: set[int] = set()
    for a, b in zip(cands, cands[1:]):
        if (text_idx[b.idx] - text_idx[a.idx] == 1 and a.style == b.style and len(a.path) == len(b.path)
                and b.path[-1] == a.path[-1] + 1):
            drop.update((a.idx, b.idx))
    return [c for c in cands if c.idx not in drop]


def _merge_wrapped_headings(lines: list[Line], params: TreeParams, body: float | None) -> list[Line]:
    """Join a heading that wraps onto the next line.

    Large-font headings: the next line in the same font and block. Text without fonts:
    an ALL-CAPS heading followed by an ALL-CAPS line ('III. CASE STUDY: ... OF LARGE' /
    'LANGUAGE MODELS'), or a heading ending in 'and'/'of'/... followed by a short line.
    """
    merged: list[Line] = []
    for ln in lines:
        p = merged[-1] if merged else None
        if p is None or not p.heading or ln.kind != "text" or p.page != ln.page:
            merged.append(ln)
            continue
        glue = False
        if (ln.heading and p.font_size and ln.font_size and body and abs(p.font_size - ln.font_size) < 0.2
                and p.block == ln.block and p.heading == p.text and ln.heading == ln.text
                and p.font_size >= params.heading_font_ratio * body):
            glue = True
        elif p.font_size is None and len(ln.text) <= 60 and not _ends_sentence(ln.text) and not _CAPTION.match(ln.text):
            if (_is_caps(p.heading) and _is_caps(ln.text) and caps_heading(ln.text, 60)
                    and (ln.heading is None or ln.heading == _fix_small_caps(ln.text))):
                glue = _numbered_candidate(ln.text, 60, True) is None and not keyword_heading(ln.text)
            elif (ln.heading is None and p.heading.split()[-1].lower() in _FUNCTION_WORDS
                  and ln.text[:1].isupper()):
                glue = True
        if glue:
            p.heading = _fix_small_caps(f"{p.heading} {ln.text}")
            p.text = f"{p.text} {ln.text}"
            continue
        merged.append(ln)
    return merged


def _mark_ieee_subsections(lines: list[Line], maxc: int) -> None:
    """'A. Energy Measurement' under a Roman-numbered section ('II. BACKGROUND') or an appendix."""
    expect = None
    for ln in lines:
        if ln.heading:
            if _ROMAN_HEAD.match(ln.heading) or re.match(r"(?i)^appendi(x|ces)\b", ln.heading):
                expect = "A"
            elif keyword_heading(ln.heading):
                expect = None
            continue
        if expect is None or ln.kind != "text":
            continue
        m = _LETTER_HEAD.match(ln.text)
        if m and m.group("dot") and m.group("num") == expect and plausible_title(m.group("title"), maxc):
            ln.heading = f"{m.group('num')}. {m.group('title').strip()}"
            expect = chr(ord(expect) + 1)


# ------------------------------------------------------------------- paragraphs
def _ends_sentence(text: str) -> bool:
    return bool(_SENT_END.search(text)) or text.endswith(":")


def _starts_continuation(text: str) -> bool:
    return bool(text) and (text[0].islower() or text[0] in ",;)")


class _Breaker:
    """Decides whether a new paragraph starts between two consecutive lines."""

    def __init__(self, lines: list[Line], params: TreeParams, blank_line_mode: bool) -> None:
        self.p = params
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
            return bool(_REF_ENTRY.match(b.text))
        if _CAPTION.match(b.text) or _BULLET.match(b.text) or _REF_ENTRY.match(b.text):
            return True
        if _ENUM.match(b.text) and re.search(r"[.:;]$", a.text):
            return True  # "(1) ..." / "b) ..." items, but not "(kWh) as follows" mid-sentence
        if in_refs and _AUTHOR_START.match(b.text) and _ends_sentence(a.text):
            return True
        if a.y0 is not None and b.y0 is not None and a.font_size and b.font_size:
            return self._pdf_break(a, b)
        if a.block != b.block:
            continuation = not _ends_sentence(a.text) and (_starts_continuation(b.text) or a.text.endswith("-"))
            return not continuation
        if self.blank_line_mode:
            return False
        if _ends_sentence(a.text) and len(a.text) < self.p.short_line_ratio * self._local_full_len(i_prev):
            return True
        return False

    def _pdf_break(self, a: Line, b: Line) -> bool:
        assert a.y0 is not None and b.y0 is not None and a.x0 is not None and b.x0 is not None
        assert a.x1 is not None and b.x1 is not None and a.font_size and b.font_size
        same_column = a.page == b.page and b.y0 > a.y0 and min(a.x1, b.x1) > max(a.x0, b.x0)
        if not same_column:  # new column or page: only an unfinished sentence continues
            return _ends_sentence(a.text) or not (_starts_continuation(b.text) or a.text.endswith("-"))
        if abs(a.font_size - b.font_size) > 0.5:
            return True
        usual = self.pitch.get(round(a.font_size, 1), 1.2 * a.font_size)
        if b.y0 - a.y0 >= self.p.paragraph_gap_ratio * usual:
            return True
        lo, hi = self.block_x.get(a.block if a.block is not None else -1, (a.x0, a.x1))
        width = max(hi - lo, 1.0)
        if _ends_sentence(a.text) and (a.x1 - lo) < self.p.short_line_ratio * width:
            return True
        if _ends_sentence(a.text) and b.x0 - lo > 0.5 * b.font_size:
            return True  # first-line indent
        return False


@dataclass
class _Para:
    kind: str  # text | table | image
    parts: list[tuple[str, int]] = field(default_factory=list)
    page: int = 1


@dataclass
class _Section:
    title: str | None
    page: int
    paras: list[_Para] = field(default_factory=list)


def _labelled_bibliographies(lines: list[Line]) -> set[int]:
    """Indexes of sections (as group_sections counts them) that are [n]-labelled bibliographies."""
    out: set[int] = set()
    sec, count, is_ref = 0, 0, False
    for ln in [*lines, Line("", 0, 0, heading="<end>")]:
        if ln.heading:
            if is_ref and count >= 3:
                out.add(sec)
            sec += 1
            count, is_ref = 0, bool(_REF_TITLE.match(ln.heading))
            continue
        if ln.kind == "text" and _REF_ENTRY.match(ln.text):
            count += 1
    return out


def group_sections(doc: DocInput, params: TreeParams) -> list[_Section]:
    """Headings open sections; lines join into paragraphs by the break rules."""
    lines = mark_headings(doc, params)
    blank_line_mode = doc.format in ("md", "txt") and len({ln.block for ln in lines}) > 1
    br = _Breaker(lines, params, blank_line_mode)
    sections: list[_Section] = [_Section(None, lines[0].page if lines else 1)]
    last_text_idx: int | None = None
    current: _Para | None = None
    labelled = _labelled_bibliographies(lines)
    for i, ln in enumerate(lines):
        sec = sections[-1]
        if ln.heading:
            sections.append(_Section(ln.heading, ln.page))
            current, last_text_idx = None, None
            continue
        if ln.kind in ("table", "image"):
            sec.paras.append(_Para(ln.kind, [(ln.text, ln.page)], ln.page))
            continue
        in_refs = bool(sec.title and _REF_TITLE.match(sec.title))
        if current is None or last_text_idx is None or ln.title_line != lines[last_text_idx].title_line \
                or br.breaks(last_text_idx, i, in_refs, in_refs and len(sections) - 1 in labelled):
            current = _Para("text", [], ln.page)
            sec.paras.append(current)
        current.parts.append((ln.text, ln.page))
        last_text_idx = i
    if not sections[0].paras and len(sections) > 1:
        sections = sections[1:]
    return sections


# -------------------------------------------------------------------- sentences
def _split_long(text: str, limit: int) -> list[tuple[int, int]]:
    """Cut a run-on 'sentence' (a flattened table, say) at spaces into pieces <= limit."""
    n = math.ceil(len(text) / limit)
    size = len(text) / n
    spans, start = [], 0
    while start < len(text):
        if len(text) - start <= limit:
            spans.append((start, len(text)))
            break
        cut = text.rfind(" ", start + 1, int(start + size) + 1)
        if cut <= start:
            cut = text.find(" ", int(start + size))
            cut = len(text) if cut < 0 else cut
        spans.append((start, cut))
        start = cut + 1
    return spans


def sentence_spans(text: str, splitter: SentenceSplitter, limit: int) -> list[tuple[int, int]]:
    spans = splitter.spans(text) or ([(0, len(text))] if text.strip() else [])
    out = []
    for s, e in spans:
        if e - s > limit:
            out.extend((s + a, s + b) for a, b in _split_long(text[s:e], limit))
        else:
            out.append((s, e))
    return out


def chunk_sentences(sents: list[tuple[str, int, int]], limit: int) -> list[list[tuple[str, int, int]]]:
    """Split a long paragraph into about-equal runs of sentences, each <= limit chars."""
    total = sum(len(s[0]) + 1 for s in sents)
    if total <= limit:
        return [sents]
    target = total / math.ceil(total / limit)
    chunks: list[list[tuple[str, int, int]]] = [[]]
    size = 0
    for s in sents:
        if chunks[-1] and (size + len(s[0]) > limit or size >= target):
            chunks.append([])
            size = 0
        chunks[-1].append(s)
        size += len(s[0]) + 1
    return chunks


def table_row_sentences(markdown: str) -> list[str]:
    """Each data row of a markdown table as 'Header: value | Header: value'."""
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
            continue
        rows.append([c.replace("\\|", "|") for c in cells])
    if not rows:
        return []
    header = [h or f"col{i + 1}" for i, h in enumerate(rows[0])]
    out = []
    for r in rows[1:]:
        pairs = [f"{header[i] if i < len(header) else f'col{i + 1}'}: {v}" for i, v in enumerate(r) if v]
        if pairs:
            out.append(" | ".join(pairs))
    return out


# --------------------------------------------------------- references / front matter
_FRONT_SIGNALS = re.compile(
    r"@|\buniversity\b|\binstitute\b|\blaborator|\barxiv\b|\bcopyright\b|\u00a9|\bpermission to make\b|"
    r"\bcorresponding author\b|\bkeywords\b|\bpreprint\b|\bproceedings\b|\bconference\b|\bdoi\b|\bisbn\b",
    re.I)


# an unlabelled abstract ("In this paper, we ...") is content, not front matter
_ABSTRACT_VOICE = re.compile(r"\b(we|our|this paper|this work|this article|in this)\b", re.I)


def is_reference_entry(text: str) -> bool:
    """'[105] Author, Title, 2023' style bibliography entries."""
    return bool(_REF_ENTRY.match(text) and (_YEAR.search(text) or re.search(r"arxiv|doi|http", text, re.I)))


# ----------------------------------------------------------------- tree builder
def build_doc_tree(doc: DocInput, params: TreeParams, splitter: SentenceSplitter) -> list[Node]:
    """All nodes of one document, in document order."""
    sections = group_sections(doc, params)
    pages = [ln.page for ln in doc.lines] or [1]
    doc_node = Node(doc.doc_id, None, "document", doc.doc_id, 0, doc.title, min(pages),
                    max(max(pages), doc.n_pages or 0), doc.title, None, doc.source)
    nodes = [doc_node]
    first_page = min(pages)
    limit = params.max_paragraph_chars
    for si, sec in enumerate(sections):
        sec_id = f"{doc.doc_id}:sec{si}"
        sec_ref = bool(sec.title and _REF_TITLE.match(sec.title))
        sec_node = Node(sec_id, doc.doc_id, "section", doc.doc_id, si, "", sec.page, sec.page,
                        sec.title, None, doc.source, is_reference=sec_ref)
        nodes.append(sec_node)
        para_nodes: list[Node] = []
        children: list[list[Node]] = []
        for para in sec.paras:
            for pnode, snodes in _paragraph_nodes(para, splitter, limit):
                para_nodes.append(pnode)
                children.append(snodes)
        # an image node that carries the figure caption makes the caption paragraph redundant
        image_texts = [p.text for p in para_nodes if p.attachment_type == "image"]
        if image_texts:
            dup = [p.attachment_type is None and _CAPTION.match(p.text) is not None
                   and any(t.startswith(p.text) for t in image_texts) for p in para_nodes]
            children = [c for c, d in zip(children, dup) if not d]
            para_nodes = [p for p, d in zip(para_nodes, dup) if not d]
        front_ok = si == 0 and sec.title is None
        for pj, (pn, sns) in enumerate(zip(para_nodes, children)):
            pn.node_id = f"{sec_id}:p{pj}"
            pn.parent_id = sec_id
            pn.ordinal = pj
            pn.doc_id = doc.doc_id
            pn.source = doc.source
            pn.is_reference = sec_ref or (pn.attachment_type is None and is_reference_entry(pn.text))
            pn.is_front_matter = front_ok and pn.page == first_page and pn.attachment_type is None and (
                len(pn.text) < 400 or (bool(_FRONT_SIGNALS.search(pn.text)) and not _ABSTRACT_VOICE.search(pn.text)))
            nodes.append(pn)
            for sk, sn in enumerate(sns):
                sn.node_id = f"{pn.node_id}:s{sk}"
                sn.parent_id = pn.node_id
                sn.ordinal = sk
                sn.doc_id = doc.doc_id
                sn.source = doc.source
                sn.is_reference = pn.is_reference
                sn.is_front_matter = pn.is_front_matter
                nodes.append(sn)
        sec_node.text = "\n\n".join(p.text for p in para_nodes)
        if para_nodes:
            sec_node.page = min(sec.page, min(p.page for p in para_nodes))
            sec_node.page_end = max(sec.page, max(p.page_end for p in para_nodes))
            sec_node.is_front_matter = front_ok and all(p.is_front_matter for p in para_nodes)
    return nodes


def _paragraph_nodes(para: _Para, splitter: SentenceSplitter, limit: int) -> Iterable[tuple[Node, list[Node]]]:
    """One or more paragraph nodes (long ones split) with their sentence nodes (ids set later)."""
    def mk(level: str, text: str, page: int, page_end: int, att: str | None = None) -> Node:
        return Node("", None, level, "", 0, text, page, page_end, None, att)

    if para.kind == "table":
        md, page = para.parts[0]
        rows = table_row_sentences(md)
        yield mk("paragraph", md, page, page, "table"), [mk("sentence", r, page, page) for r in rows]
        return
    text, marks = join_lines(para.parts)
    if not text.strip() or (len(text) <= 5 and not any(c.isalpha() for c in text)):
        return  # empty, or a stray footnote mark / page number
    spans = sentence_spans(text, splitter, limit)
    sents = [(_WS.sub(" ", text[s:e]), _page_at(marks, s), _page_at(marks, e - 1)) for s, e in spans]
    att = "image" if para.kind == "image" else None
    groups = [sents] if att else chunk_sentences(sents, limit)
    for g in groups:
        if not g:
            continue
        ptext = " ".join(s[0] for s in g)
        yield (mk("paragraph", ptext, min(s[1] for s in g), max(s[2] for s in g), att),
               [mk("sentence", s[0], s[1], s[2]) for s in g])


# ---------------------------------------------------------------- whole corpus
def doc_inputs(documents: pl.DataFrame, blocks: pl.DataFrame, images: pl.DataFrame,
               captions: pl.DataFrame | None) -> list[DocInput]:
    """Join the extract and caption artifacts into one ordered line list per OK document."""
    cap: dict[str, str] = {}
    if captions is not None and captions.height:
        for r in captions.iter_rows(named=True):
            if r.get("caption") and (r.get("caption_source") or "none") != "none":
                cap[r["image_id"]] = r["caption"]
    by_doc: dict[str, list[Line]] = defaultdict(list)
    for r in blocks.sort(["doc_id", "order"]).iter_rows(named=True):
        text = r["text"] if r["kind"] == "table" else clean_line(r["text"] or "")
        if not text.strip():
            continue
        by_doc[r["doc_id"]].append(Line(
            text=text, page=int(r["page"]), order=int(r["order"]), kind=r["kind"], font_size=r["font_size"],
            bold=r["bold"], x0=r["x0"], y0=r["y0"], x1=r["x1"], y1=r["y1"], block=r.get("block"),
        ))
    for r in images.iter_rows(named=True):
        c = cap.get(r["image_id"])
        if c:
            by_doc[r["doc_id"]].append(Line(text=clean_line(c), page=int(r["page"]), order=int(r["order"]), kind="image"))
    out = []
    for d in documents.filter(pl.col("status") == "ok").iter_rows(named=True):
        lines = sorted(by_doc.get(d["doc_id"], []), key=lambda ln: ln.order)
        out.append(DocInput(d["doc_id"], d["title"] or d["doc_id"], d["source"], d["format"],
                            int(d["n_pages"] or 0), lines))
    return out


def build_tree(docs: list[DocInput], params: TreeParams, progress: bool = True) -> list[Node]:
    """Nodes of every document; running headers dropped first."""
    splitter = SentenceSplitter(params.extra_abbreviations)
    nodes: list[Node] = []
    for doc in tqdm(docs, desc="build_tree", unit="doc", disable=not progress, file=sys.stderr):
        doc.lines = drop_page_furniture(doc.lines, params.repeated_line_min_pages)
        nodes.extend(build_doc_tree(doc, params, splitter))
    return nodes


def nodes_frame(nodes: list[Node]) -> pl.DataFrame:
    return pl.DataFrame([asdict(n) for n in nodes], schema=NODE_SCHEMA)


_NUMBERED_TITLE = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*|[A-H](?:\.\d{1,2})+|[IVX]{1,5}\.)\s")


def tree_stats(nodes: pl.DataFrame, images: pl.DataFrame, captions: pl.DataFrame | None) -> dict[str, Any]:
    """Counts and paragraph-length percentiles, written as DVC metrics."""
    paras = nodes.filter(pl.col("level") == "paragraph")
    lens = sorted(len(t) for t in paras["text"].to_list())

    def pct(q: float) -> int:
        if not lens:
            return 0
        return int(lens[min(len(lens) - 1, max(0, math.ceil(q * len(lens)) - 1))])

    secs = nodes.filter(pl.col("level") == "section")
    numbered = (secs.filter(pl.col("title").fill_null("").str.contains(_NUMBERED_TITLE.pattern))
                .group_by("doc_id").len().filter(pl.col("len") >= 2))
    captioned = 0
    if captions is not None and captions.height:
        captioned = captions.filter(pl.col("caption_source") != "none").height
    placeholders = images.filter(~pl.col("has_pixels")).height if images.height else 0
    return {
        "documents": nodes.filter(pl.col("level") == "document").height,
        "sections": secs.height,
        "paragraphs": paras.height,
        "sentences": nodes.filter(pl.col("level") == "sentence").height,
        "images_total": images.height,
        "images_captioned": captioned,
        "images_placeholder_skipped": placeholders,
        "image_paragraphs": paras.filter(pl.col("attachment_type") == "image").height,
        "tables": paras.filter(pl.col("attachment_type") == "table").height,
        "paragraph_chars_p50": pct(0.5),
        "paragraph_chars_p95": pct(0.95),
        "paragraph_chars_max": lens[-1] if lens else 0,
        "docs_with_numbered_sections": numbered.height,
        "reference_paragraphs": paras.filter(pl.col("is_reference")).height,
        "front_matter_paragraphs": paras.filter(pl.col("is_front_matter")).height,
    }
