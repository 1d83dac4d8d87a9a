"""Keyword side of retrieval: tokenisation and a BM25 index that actually matches.

NLTK's Treebank-style word tokenizer (no punkt download needed), lower-cased,
stop words removed, thousands separators dropped ("1,287" -> "1287") and
hyphenated terms kept whole and split ("gpt-3" -> "gpt-3", "gpt", "3"), so the
question's spelling meets the document's.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from nltk.tokenize import NLTKWordTokenizer
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

_TOKENIZER = NLTKWordTokenizer()
_WORD = re.compile(r"[a-z0-9]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"'s", "n't", "et", "al", "e.g", "i.e", "cf"}


def tokenize(text: str) -> list[str]:
    """Lower-cased content tokens for BM25."""
    text = _THOUSANDS.sub("", text.lower())
    out: list[str] = []
    for tok in _TOKENIZER.tokenize(text):
        tok = tok.strip(".'\"")
        if not tok or not _WORD.search(tok) or tok in STOP_WORDS:
            continue
        out.append(tok)
        if "-" in tok or "/" in tok:
            out.extend(p for p in re.split(r"[-/]", tok) if p and p not in STOP_WORDS)
    return out


class KeywordIndex:
    """BM25 (Okapi, k1=1.5, b=0.75) over pre-tokenised units.

    rank-bm25 gives negative idf on tiny corpora (a term in more than half the
    documents); we floor idf at a small epsilon so a matching term never lowers a
    score, and an empty corpus simply returns nothing.
    """

    def __init__(self, tokens: Sequence[Sequence[str]]) -> None:
        self.size = len(tokens)
        self._bm25 = BM25Okapi([list(t) or ["\x00"] for t in tokens], epsilon=0.25) if self.size else None
        if self._bm25 is not None:
            floor = 0.25 * max(1e-6, float(np.mean(list(self._bm25.idf.values()))) if self._bm25.idf else 1.0)
            self._bm25.idf = {w: max(v, floor) for w, v in self._bm25.idf.items()}

    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """Top-k (unit index, score) with a positive score, best first."""
        if self._bm25 is None or not query_tokens or k <= 0:
            return []
        scores = self._bm25.get_scores(list(query_tokens))
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
