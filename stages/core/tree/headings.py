"""Section headings in a document's lines: numbered chains, keywords, fonts, ALL CAPS.

A larger font marks a heading in a PDF; text without fonts (the WattBot JSON) has
only its words, so a numbered line ("3", "3.1", "A.2", "IV.") is believed only when
its numbers form a plausible sequence, plus well-known unnumbered headings and short
ALL-CAPS lines.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass

from stages.core.extract.captions import CAPTION
from stages.core.extract.records import Line
from stages.core.tree.heading_text import (
    APPENDIX_HEAD,
    FUNCTION_WORDS,
    caps_heading,
    fix_small_caps,
    keyword_heading,
    plausible_title,
)
from stages.core.tree.lines import REF_TITLE, DocInput, ends_sentence

# a line this much larger than the document's median body font size is a heading (PDF): section titles are
# set a size or more above the body, while sub/superscripts and small caps stay within it
HEADING_FONT_RATIO = 1.2
MAX_HEADING_CHARS = 100  # a longer line is never a heading: it is a sentence that happens to be emphasised

_NUM_HEAD = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})(?:\.?\s+|\.(?=[A-Z][a-z]))(?P<title>\S.*)$")
_LETTER_HEAD = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){0,3})(?P<dot>\.?)\s+(?P<title>\S.*)$")
_ROMAN_HEAD = re.compile(r"^(?P<num>(?:X{0,2})(?:IX|IV|V?I{0,3}))\.\s+(?P<title>\S.*)$")
_INLINE_ABSTRACT = re.compile(r"^(abstract|summary)\s*(?:[:.\u2014\u2013]|-{1,2})\s*(?P<rest>\S.{20,})$", re.I)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(\S.*?)\s*#*$")


def _roman_value(s: str) -> int:
    vals = {"I": 1, "V": 5, "X": 10}
    total = 0
    for i, ch in enumerate(s):
        v = vals[ch]
        total += -v if i + 1 < len(s) and vals[s[i + 1]] > v else v
    return total


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
            return _Cand(-1, 0, path, f"{num} {fix_small_caps(m.group('title').strip())}", dotted)
        return None
    m = _ROMAN_HEAD.match(text)
    if m and m.group("num"):
        title = fix_small_caps(m.group("title").strip())
        if plausible_title(title, max_chars):
            return _Cand(-1, 1, (_roman_value(m.group("num")),), f"{m.group('num')}. {title}")
    m = _LETTER_HEAD.match(text)
    if m and not (roman_doc and m.group("dot") and "." not in m.group("num")):
        title = m.group("title").strip()
        if (plausible_title(title, max_chars) and not title.lower().startswith(("the ", "a ", "an "))
                and title.split()[-1].lower() not in FUNCTION_WORDS):
            parts = m.group("num").split(".")
            path = (ord(parts[0]) - ord("A") + 1, *(int(x) for x in parts[1:]))
            return _Cand(-1, 2, path, f"{m.group('num')} {fix_small_caps(title)}", bool(m.group("dot")))
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


def mark_headings(doc: DocInput) -> list[Line]:
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
        large = bool(body and ln.font_size and ln.font_size >= HEADING_FONT_RATIO * body)
        emphasised = large or bool(ln.bold) or body is None or (ln.font_size or 0) > (body or 0) + 0.5
        if emphasised:
            c = _numbered_candidate(ln.text, MAX_HEADING_CHARS, roman_doc)
            if c is not None and _continues_sentence(nxt):
                # "2 Background: The Underutilization of GPUs" / "in LLM Decoding" wraps;
                # "1 Supply chains focus on ... goods to" / "customers ..." is a note
                assert nxt is not None
                if len(nxt.text) <= 40 and not ends_sentence(nxt.text) and body is None:
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
        if kw and APPENDIX_HEAD.match(kw) and _continues_sentence(nxt):
            kw = None  # "(see" / "Appendix E" / "for details)"
        if kw and ln.text.endswith(".") and prev is not None and re.search(r"[a-z,]$", prev.text):
            kw = None  # "... see Figure 11 in" / "Appendix E." ends a sentence
        if kw and (emphasised or len(ln.text) <= 40):
            ln.heading = kw
            seen_heading = True
            if refs_at is None and REF_TITLE.match(kw):
                refs_at = i
            continue
        if large and len(ln.text) <= MAX_HEADING_CHARS and sum(ch.isalpha() for ch in ln.text) >= 3 \
                and not CAPTION.match(ln.text):
            ln.heading = ln.text
            seen_heading = True
            continue
        if (caps_heading(ln.text, min(MAX_HEADING_CHARS, 60)) and (body is None or emphasised)
                and (seen_heading or ln.page != first_page)
                and not (prev is not None and CAPTION.match(prev.text))):
            ln.heading = fix_small_caps(ln.text)
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
        _mark_ieee_subsections(lines)
    return _merge_wrapped_headings(lines, body)


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


def _merge_wrapped_headings(lines: list[Line], body: float | None) -> list[Line]:
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
                and p.font_size >= HEADING_FONT_RATIO * body):
            glue = True
        elif p.font_size is None and len(ln.text) <= 60 and not ends_sentence(ln.text) and not CAPTION.match(ln.text):
            if (_is_caps(p.heading) and _is_caps(ln.text) and caps_heading(ln.text, 60)
                    and (ln.heading is None or ln.heading == fix_small_caps(ln.text))):
                glue = _numbered_candidate(ln.text, 60, True) is None and not keyword_heading(ln.text)
            elif (ln.heading is None and p.heading.split()[-1].lower() in FUNCTION_WORDS
                  and ln.text[:1].isupper()):
                glue = True
        if glue:
            p.heading = fix_small_caps(f"{p.heading} {ln.text}")
            p.text = f"{p.text} {ln.text}"
            continue
        merged.append(ln)
    return merged


def _mark_ieee_subsections(lines: list[Line]) -> None:
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
        if m and m.group("dot") and m.group("num") == expect and plausible_title(m.group("title"), MAX_HEADING_CHARS):
            ln.heading = f"{m.group('num')}. {m.group('title').strip()}"
            expect = chr(ord(expect) + 1)


