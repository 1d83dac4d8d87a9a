"""The `corpus:` params section: what the documents are and what the questions ask about.

One place for the words every system prompt uses about the corpus: the planner's
(plan stage) and both readers' (answer stage). The defaults are neutral; WattBot's
params.yaml names its papers and topic, with which every prompt is byte-identical to
the prompts written for WattBot before this section existed (so the LLM response cache,
keyed by the messages, still answers). A dataclass that needs it declares
``corpus: CorpusParams = corpus_field()`` and `section()` fills it from this section.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CorpusParams:
    """The `corpus:` section of params.yaml."""

    description: str = "technical and scientific documents"  # the documents, as the prompts name them
    topic: str = ""  # what the questions are about ("" = the prompts name no topic)
    search_topic: str = ""  # the planner's wording of the topic ("" = topic)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if not self.description.strip():
            raise ParamError("params.yaml: corpus.description must name the documents (e.g. 'research papers')")

    def about(self, search: bool = False) -> str:
        """' about <topic>' for a prompt, or '' without a topic."""
        topic = (self.search_topic or self.topic) if search else self.topic
        return f" about {topic}" if topic else ""


def corpus_field() -> Any:
    """A dataclass field holding the `corpus:` section (section() fills it from there)."""
    return dataclasses.field(default_factory=CorpusParams, metadata={"section": "corpus"})
