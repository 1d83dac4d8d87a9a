"""Sentence splitting that works offline on technical text.

NLTK's ``sent_tokenize`` needs the punkt model, which cannot be downloaded here, and
training Punkt on a 32-document corpus learns junk abbreviations. So we run an
untrained ``PunktSentenceTokenizer`` with a curated abbreviation list: "Fig. 3",
"Sec. 4.2", "et al.", "e.g." and "approx. 5" never end a sentence, while numbers
such as "1,287 MWh" or "0.429 kg" are left alone by Punkt itself.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

# Lower-cased, without the final period, as Punkt stores them.
DEFAULT_ABBREVIATIONS: tuple[str, ...] = (
    # references to parts of a document
    "fig", "figs", "sec", "secs", "sect", "eq", "eqs", "tab", "tabs", "app", "appx",
    "ch", "chap", "no", "nos", "vol", "vols", "pp", "ed", "eds", "ref", "refs",
    "alg", "thm", "lem", "prop", "cor",
    # Latin and connectives
    "al", "e.g", "i.e", "cf", "vs", "etc", "approx", "ca", "viz", "resp", "w.r.t", "a.k.a",
    "incl", "excl", "avg", "dept", "univ", "assoc",
    # titles and companies ("Ms." left out: "ms." ends many sentences about latency)
    "dr", "mr", "mrs", "prof", "inc", "ltd", "co", "corp", "jr", "sr", "st",
    # places and months (units such as "min." or "lbs." often do end a sentence: left out)
    "u.s", "u.k", "u.n", "e.u", "u.s.a", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec",
)

# Capitalised words that start a new sentence even right after an abbreviation
# ("... by Strubell et al. The results ...").
DEFAULT_SENT_STARTERS: tuple[str, ...] = (
    "the", "we", "this", "these", "those", "our", "in", "however", "it", "its", "they",
    "thus", "therefore", "moreover", "furthermore", "finally", "such", "although",
    "while", "for", "to", "as", "there", "here", "overall", "similarly", "additionally",
)

_WS = re.compile(r"\s+")


class SentenceSplitter:
    """Punkt with curated abbreviations; `spans()` keeps character offsets for provenance."""

    def __init__(self, extra_abbreviations: Iterable[str] = ()) -> None:
        params = PunktParameters()
        abbrevs = {a.lower().rstrip(".") for a in (*DEFAULT_ABBREVIATIONS, *extra_abbreviations)}
        params.abbrev_types = {a for a in abbrevs if a}
        params.sent_starters = set(DEFAULT_SENT_STARTERS)
        self._tok = PunktSentenceTokenizer(params)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) offsets of the sentences of `text`, whitespace trimmed."""
        out = []
        for s, e in self._tok.span_tokenize(text):
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                out.append((s, e))
        return out

    def split(self, text: str) -> list[str]:
        """The sentences of `text`, each with runs of whitespace collapsed."""
        return [_WS.sub(" ", text[s:e]) for s, e in self.spans(text)]


# ------------------------------------------- sentences of a paragraph (tree builder)
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
