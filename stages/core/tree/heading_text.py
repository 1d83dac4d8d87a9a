"""What a heading's text looks like: a plausible title, a keyword heading, an ALL CAPS line.

The tests of one line, apart from the document-level decisions in headings.py (which
numbered lines form the section chain, which large or bold lines are headings).
"""
from __future__ import annotations

import re

from stages.core.extract.captions import CAPTION

APPENDIX_HEAD = re.compile(r"^appendix\s+([A-Z]|[IVX]+|\d+)\b(?:\s*[:.\u2014\u2013-]\s*|\s+)?(?P<title>.*)$", re.I)
KEYWORD_HEADINGS = {
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
SMALL_CAPS_SPLIT = re.compile(r"(?<![\w'\u2019])([A-Z]) ([A-Z]{2,})\b")
FUNCTION_WORDS = {"a", "an", "the", "and", "or", "of", "for", "in", "on", "to", "with", "from", "by", "at",
                   "as", "via", "into", "its", "their", "our", "&"}



def plausible_title(title: str, max_chars: int) -> bool:
    """Could `title` be a section heading's text (not a sentence, table row or caption)?"""
    t = title.strip()
    if not 2 <= len(t) <= max_chars or not t[0].isupper():
        return False
    if t.endswith((".", ",", ";")) or len(t.split()) > 14:
        return False
    if re.search(r"[.!?] [A-Z]", t) or re.search(r"[=@%$]|\s\d{1,3}$|\.{3,}", t):
        return False
    if CAPTION.match(t) or re.search(r"[\"\u201c\u201d]", t):
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
    if t.lower() in KEYWORD_HEADINGS:
        return t
    m = APPENDIX_HEAD.match(t)
    if m and len(t) <= 90 and (not m.group("title") or plausible_title(m.group("title"), 90)):
        return t
    return None


def caps_heading(text: str, max_chars: int) -> bool:
    """A short ALL-CAPS line ('EXECUTIVE SUMMARY', 'HEALTHCARE') used as a heading."""
    t = text.strip()
    if len(t) > max_chars or re.search(r"[\d,;()\[\]=%]", t) or t.endswith("."):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’\-/&]*", t)
    if not 1 <= len(words) <= 10 or t.upper() != t or CAPTION.match(t):
        return False
    if len(words) == 1:  # one word: a real one (HEALTHCARE), not an acronym (UNFCCC, TFLOPS)
        w = words[0]
        vowels = sum(ch in "AEIOUY" for ch in w)
        return len(w) >= 6 and vowels >= 2 and vowels >= 0.25 * len(w)
    return any(len(w) >= 5 for w in words)


def fix_small_caps(title: str) -> str:
    """Small-caps headings come out as 'I NTRODUCTION': glue the split word.

    'A' and 'I' are real words too ('A SUSTAINABILITY MINDSET'): glued only when what
    follows cannot start a word (two consonants: 'A PPENDIX', 'I NTRODUCTION').
    """
    def glue(m: re.Match[str]) -> str:
        head, rest = m.group(1), m.group(2)
        if head in "AI" and (rest[0] in "AEIOUY" or rest[1] in "AEIOUYHLR"):
            return m.group(0)
        return head + rest
    return SMALL_CAPS_SPLIT.sub(glue, title)
