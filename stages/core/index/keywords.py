"""Keyword side of retrieval: tokenisation and a BM25 index that actually matches.

`words`: NLTK's Treebank-style word tokenizer (no punkt download needed), lower-cased,
stop words removed, thousands separators dropped ("1,287" -> "1287") and
hyphenated terms kept whole and split ("gpt-3" -> "gpt-3", "gpt", "3").
`tokenize` (what the index and the query use): the same, with every token in its
canonical form from stages/core/vocab.py (pounds/lbs -> lb, eight -> 8, 1.170 ->
1.17, plural -s dropped) and "5.6 billion" also as 5600000000, so the question's
spelling meets the document's. The retrieval metrics count quote words with `words`,
so a change of vocabulary never changes what they measure.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from nltk.tokenize import NLTKWordTokenizer
from rank_bm25 import BM25Okapi
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from stages.core.common.vocab import (
    EQUIVALENT,
    MAGNITUDES,
    SIZE_SUFFIXES,
    canonical,
    number,
    rewrite,
    scaled,
)

_TOKENIZER = NLTKWordTokenizer()
_WORD = re.compile(r"[a-z0-9]")
# Stripped from a token's ends: the tokenizer leaves an elision mark glued on ("…between"),
# as in the labels' quotes, and such a word would never match the text it quotes.
_EDGE_PUNCT = ".'\"\u2026"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_ACRONYM_SUFFIX = re.compile(r"([A-Z]{2,})([a-z]{3,})")
_DIGIT_LETTER = re.compile(r"(?<=\d)(?=[A-Za-z])")
_SIZE_SUFFIX = re.compile(rf"([A-Z][a-z]{{2,}})({'|'.join(SIZE_SUFFIXES)})")
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"'s", "n't", "et", "al", "e.g", "i.e", "cf"}


def _glued_parts(tok: str) -> list[str]:
    """Pieces of a token that PDF extraction glued together: a flattened subscript
    after an acronym ("BERTbase" -> "bert", "base") and a count after a model name
    ("V100x64" -> "v100", "x64"), so "BERT base ... V100" finds the table row."""
    m = _ACRONYM_SUFFIX.fullmatch(tok) or _SIZE_SUFFIX.fullmatch(tok)
    if m:
        return [m.group(1).lower(), m.group(2)]
    parts = _DIGIT_LETTER.split(tok)
    return [p.lower() for p in parts if len(p) >= 2] if len(parts) > 1 else []


def words(text: str) -> list[str]:
    """Lower-cased content tokens, spelled as written (thousands separators dropped)."""
    text = _THOUSANDS.sub("", text)
    out: list[str] = []
    for raw in _TOKENIZER.tokenize(text):
        raw = raw.strip(_EDGE_PUNCT)
        tok = raw.lower()
        if not tok or not _WORD.search(tok) or tok in STOP_WORDS:
            continue
        out.append(tok)
        if "-" in tok or "/" in tok:
            out.extend(p for p in re.split(r"[-/]", tok) if p and p not in STOP_WORDS)
        elif raw.isalnum():
            out.extend(p for p in _glued_parts(raw) if p not in STOP_WORDS)
    return out


def tokenize(text: str) -> list[str]:
    """Canonical content tokens for BM25, the same for a unit's text and a query."""
    text = rewrite(_THOUSANDS.sub("", text))
    out: list[str] = []
    prev_number: str | None = None
    for raw in _TOKENIZER.tokenize(text):
        raw = raw.strip(_EDGE_PUNCT)
        tok = raw.lower()
        if prev_number is not None and tok in MAGNITUDES:
            big = scaled(prev_number, tok)
            if big:
                out.append(big)  # '5.6 billion' also as 5600000000
        c = canonical(tok)
        prev_number = c if number(c) is not None else None
        if not c or (tok in STOP_WORDS and c == tok) or not (_WORD.search(c) or tok in EQUIVALENT):
            continue
        out.append(c)
        if "-" in tok or "/" in tok:
            for p in re.split(r"[-/]", raw):
                if p and p.lower() not in STOP_WORDS:
                    out.append(canonical(p.lower()))
                    if p.isalnum():
                        out.extend(canonical(g) for g in _glued_parts(p) if g not in STOP_WORDS)
        elif raw.isalnum():
            for p in _glued_parts(raw):
                if p not in STOP_WORDS:
                    out.append(canonical(p))
                    if re.fullmatch(r"x\d+", p):
                        out.append(p[1:])  # 'P100x8': 8 of them
    return out


class KeywordIndex:
    """BM25 (rank-bm25's Okapi, k1=1.5, b=0.75) over pre-tokenised units, scored fast.

    rank-bm25 computes the statistics (idf with its epsilon floor for terms in most
    units); we then precompute every unit's term weights into a sparse matrix, so a
    query costs one sparse product instead of a Python loop over all units per query
    token (~100 ms -> <1 ms per query on 6k paragraphs), with the same scores.
    On tiny corpora the average idf can be <= 0, which would make the floor negative:
    we keep every idf at least a small positive value so a matching term never lowers
    a score. An empty corpus simply returns nothing.
    """

    def __init__(self, tokens: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.size = len(tokens)
        self.idf: dict[str, float] = {}
        self._vocab: dict[str, int] = {}
        self._weights: sparse.csc_matrix | None = None
        if not self.size:
            return
        bm25 = BM25Okapi([list(t) or ["\x00"] for t in tokens], k1=k1, b=b, epsilon=0.25)
        floor = 0.25 * max(1e-6, bm25.average_idf)
        idf = {w: max(v, floor) for w, v in bm25.idf.items()}
        self.idf = idf  # term -> BM25 idf (floored): how much a shared term says (retrieve.trim_tokens)
        self._vocab = {w: i for i, w in enumerate(idf)}
        rows, cols, vals = [], [], []
        for d, (freqs, dl) in enumerate(zip(bm25.doc_freqs, bm25.doc_len)):
            norm = k1 * (1 - b + b * dl / bm25.avgdl)
            for w, tf in freqs.items():
                rows.append(d)
                cols.append(self._vocab[w])
                vals.append(idf[w] * tf * (k1 + 1) / (tf + norm))
        self._weights = sparse.csc_matrix((vals, (rows, cols)), shape=(self.size, len(self._vocab)))

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every unit (a repeated query token counts again, as in rank-bm25)."""
        q = np.zeros(len(self._vocab))
        for t in query_tokens:
            i = self._vocab.get(t)
            if i is not None:
                q[i] += 1.0
        if self._weights is None:
            return np.zeros(self.size)
        return np.asarray(self._weights @ q).ravel()

    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """Top-k (unit index, score) with a positive score, best first."""
        if self._weights is None or not query_tokens or k <= 0:
            return []
        scores = self.scores(query_tokens)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
