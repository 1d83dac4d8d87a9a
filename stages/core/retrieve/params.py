"""The `retrieve:` params section, and the two `answer:` keys that decide the retry contexts."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from stages.core.common.params import ParamError


@dataclass
class RetrieveParams:
    """The `retrieve:` section of params.yaml."""

    top_k: int = 10
    rerank: Literal["frequency", "score", "combined"] = "combined"
    alpha: float = 0.5
    siblings: int = 1
    bm25_k: int = 8
    fusion: Literal["append", "rrf"] = "rrf"
    rrf_k: int = 60
    bm25_weight: float = 2.0  # rrf: weight of the BM25 list relative to the dense list
    bm25_query: Literal["question", "all"] = "question"  # what BM25 searches: the question, or all queries joined
    # search the documents a question names first: none | prior | filter ("none", not "off": YAML reads off as false)
    named_docs: Literal["none", "prior", "filter"] = "none"
    doc_prior: float = 1.0  # named_docs=prior: units of a named document score x(1 + doc_prior * confidence)
    doc_share: float = 0.75  # a document is named when its naming score is at least this share of the best
    doc_filter_min: int = 3  # named_docs=filter: fewer BM25 hits in the named documents -> the whole corpus
    unit_boost: float = 0.5  # units with a number in the question's answer unit score x(1+this); 0 = off
    unit_family: bool = True  # unit_boost: a number in any unit of the answer unit's family counts too (kWh for GWh)
    table_blocks: bool = False  # rows of one table in the context share one block (caption and header once)
    # stop: the first unit that does not fit the budget ends the context | skip: shorter units after it still join
    fill: Literal["stop", "skip"] = "stop"
    trim_tokens: int = 0  # a prose unit longer than this is cut to its sentences richest in question keywords; 0 = off
    # a table longer than this keeps its caption, header and the rows richest in question keywords; 0 = off
    trim_table_tokens: int = 80
    # rows as rich in question keywords as the best row all stay, past trim_table_tokens (before/after rows)
    trim_table_ties: bool = True
    # the best row's namesakes in the table's other row groups ("Qwen (After Optimization ...)") stay with it
    trim_table_groups: bool = True
    # at most this many more rows join a trimmed table past trim_table_tokens, each bringing question
    # keywords no kept row has ("training" beside "finetuning" for a sum of both); 0 = none
    trim_table_cover: int = 0
    # a row whose name writes the answer unit in brackets ("Energy (kWh)") is kept first
    # (tables with one column per model)
    trim_table_unit: bool = True
    # a row whose whole name (two words or more) the question writes word for word ("geometric mean") is kept
    # first, as with trim_table_unit
    trim_table_quoted: bool = True
    # a row named by an abbreviation the caption defines ("P&R") also counts the words it stands for as keywords
    trim_table_abbreviations: bool = True
    # selection: a unit's fused score (as a share of the best) plus this x the idf weight of the question
    # keywords it adds to the units chosen before it (as a share of all); 0 = score order
    coverage: float = 0.0
    # fused: the top unit is always chosen and the chosen units are shown in fused-score order |
    # greedy: shown in the order coverage chose them (the top unit may lose its first place)
    coverage_layout: Literal["fused", "greedy"] = "fused"
    top_k_final: int = 16
    max_context_tokens: int = 700
    chars_per_token: float = 4.0
    # tokens one digit costs in the budget estimate (the other characters: chars_per_token each); 0 = a digit is
    # an ordinary character. Qwen's tokenizer splits numbers into digits: a table of numbers costs ~2x chars/4
    tokens_per_digit: float = 0.0
    exclude_references: bool = True

    def validate(self) -> None:
        for name in ("top_k", "top_k_final", "max_context_tokens"):
            if getattr(self, name) < 1:
                raise ParamError(f"params.yaml: retrieve.{name} must be >= 1")
        if not 0.0 <= self.alpha <= 1.0:
            raise ParamError(f"params.yaml: retrieve.alpha={self.alpha} must be within [0, 1]")
        if self.siblings < 0 or self.bm25_k < 0:
            raise ParamError("params.yaml: retrieve.siblings and retrieve.bm25_k must be >= 0")
        if self.doc_prior < 0 or self.unit_boost < 0:
            raise ParamError("params.yaml: retrieve.doc_prior and retrieve.unit_boost must be >= 0")
        if not 0.0 < self.doc_share <= 1.0:
            raise ParamError(f"params.yaml: retrieve.doc_share={self.doc_share} must be within (0, 1]")
        if self.doc_filter_min < 0:
            raise ParamError("params.yaml: retrieve.doc_filter_min must be >= 0")
        if self.chars_per_token <= 0:
            raise ParamError("params.yaml: retrieve.chars_per_token must be > 0")
        for name in ("trim_tokens", "trim_table_tokens"):
            if getattr(self, name) < 0:
                raise ParamError(f"params.yaml: retrieve.{name}={getattr(self, name)} must be >= 0 (0 = off)")
        if self.coverage < 0:
            raise ParamError(f"params.yaml: retrieve.coverage={self.coverage} must be >= 0 (0 = off)")
        if self.tokens_per_digit < 0:
            raise ParamError(f"params.yaml: retrieve.tokens_per_digit={self.tokens_per_digit} must be >= 0 (0 = off)")
        if self.coverage_layout not in ("fused", "greedy"):
            raise ParamError(f"params.yaml: retrieve.coverage_layout={self.coverage_layout!r} must be fused or greedy")
        if self.fill not in ("stop", "skip"):
            raise ParamError(f"params.yaml: retrieve.fill={self.fill!r} must be stop or skip")

    @property
    def uses_focus(self) -> bool:
        """Whether retrieval needs the question's keyword weights (the trims and coverage read them):
        the one place a new user of them is added."""
        return self.trim_tokens > 0 or self.trim_table_tokens > 0 or self.coverage > 0

    def scaled(self, factor: float) -> RetrieveParams:
        """The same params with depth and budget multiplied (for answer retries)."""
        return RetrieveParams(**{**self.__dict__,
                                 "top_k": math.ceil(self.top_k * factor),
                                 "bm25_k": math.ceil(self.bm25_k * factor),
                                 "top_k_final": math.ceil(self.top_k_final * factor),
                                 "max_context_tokens": math.ceil(self.max_context_tokens * factor)})


@dataclass
class RetryContextParams:
    """``answer.max_retries`` and ``answer.retry_k_factor``: retrieve builds a wider context for each
    retry the reader may make (the answer stage reads the same keys through AnswerParams)."""

    max_retries: int = 1
    retry_k_factor: float = 2.0

    def validate(self) -> None:
        if self.max_retries < 0:
            raise ParamError("params.yaml: answer.max_retries must be >= 0")
        if self.retry_k_factor < 1.0:
            raise ParamError(f"params.yaml: answer.retry_k_factor={self.retry_k_factor} must be >= 1")
