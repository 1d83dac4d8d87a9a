"""The `retrieve:` params section, the retrieval constants, and how deep one search goes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from stages.core.common.params import ParamError
from stages.core.common.retry import RETRY_K_FACTOR  # noqa: F401 - re-exported: the retry depth lives with the search

TOP_K = 10  # dense hits per query: a 700-token context holds ~10 units, so deeper hits rarely reach it
BM25_K = 8  # BM25 units per question, fused with the dense list
TOP_K_FINAL = 16  # at most this many units in a context (the token budget usually ends it first)


@dataclass
class RetrieveParams:
    """The `retrieve:` section of params.yaml."""

    max_context_tokens: int = 700
    # documents a question names (authors, title, company, period): none | prior (their units score higher);
    # "none", not "off": YAML reads off as false
    named_docs: Literal["none", "prior"] = "none"

    def validate(self) -> None:
        if self.max_context_tokens < 1:
            raise ParamError("params.yaml: retrieve.max_context_tokens must be >= 1")


@dataclass(frozen=True)
class Depth:
    """How many hits one search takes and how much context it keeps: a retry's wider context
    multiplies all four together."""

    top_k: int
    bm25_k: int
    top_k_final: int
    max_context_tokens: int

    @classmethod
    def of(cls, p: RetrieveParams, factor: float = 1.0) -> Depth:
        return cls(math.ceil(TOP_K * factor), math.ceil(BM25_K * factor), math.ceil(TOP_K_FINAL * factor),
                   math.ceil(p.max_context_tokens * factor))


@dataclass
class RetryContextParams:
    """``answer.max_retries``: retrieve builds a wider context for each retry the reader may make
    (the answer stage reads the same key through AnswerParams)."""

    max_retries: int = 1

    def validate(self) -> None:
        if self.max_retries < 0:
            raise ParamError("params.yaml: answer.max_retries must be >= 0")
