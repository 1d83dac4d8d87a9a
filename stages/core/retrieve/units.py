"""A block of context (paragraph, sentence window or table row) and the token estimate of the budget."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

# characters per token of the budget's estimate: no tokenizer is needed offline, and English prose
# runs about four characters per token in the readers' tokenizers
CHARS_PER_TOKEN = 4.0


@dataclass
class RetrievedUnit:
    """One block of context: a paragraph, a sentence window or a table row."""

    key: str  # node id that identifies the unit (paragraph id, or first matched sentence)
    doc_id: str
    node_ids: list[str]  # the nodes whose text is sent, in document order
    text: str
    score: float
    frequency: int = 0
    sources: set[str] = field(default_factory=set)
    page: int | None = None
    n_tokens: int = 0
    media: str | None = None  # attachment type (table|image) of the unit's paragraph

    @property
    def source(self) -> str:
        return "both" if len(self.sources) > 1 else next(iter(self.sources), "dense")


def count_tokens(text: str) -> int:
    """Token estimate used for the context budget (no LLM tokenizer needed offline)."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))
