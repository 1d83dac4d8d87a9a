"""Query planning: one question becomes several retrieval queries.

The question itself is always query 0. The LLM adds rephrasings with the
documents' likely vocabulary, expanded abbreviations, sub-queries of compound
questions and keyword lists. Malformed output falls back to the question alone;
`n_queries: 1` makes no LLM call.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from stages.core.common.corpus import CorpusParams, corpus_field
from stages.core.llm.protocol import LLM, LLMRequestRefused

log = logging.getLogger("treerag.plan")

TEMPERATURE = 0.0  # greedy planner replies: the same question gets the same queries on every run
MAX_TOKENS = 256  # room for a handful of short queries in JSON


def planner_system(corpus: CorpusParams) -> str:
    """The planner's system prompt for the corpus of params.yaml's `corpus:` section."""
    return f"You write search queries for a retrieval system over {corpus.description}{corpus.about(search=True)}."


INSTRUCTIONS = """Question: {question}

Write {n} short search queries that would find the passage answering this question.
- Rephrase with the words a paper would use (e.g. "PUE" -> "power usage effectiveness").
- Expand abbreviations and name the metric, model, hardware and year involved.
- Split a compound question into its parts.
- One query may be a plain list of likely keywords.
Reply with JSON only: {{"queries": ["...", "..."]}}"""


@dataclass
class PlanParams:
    """The `plan:` section of params.yaml."""

    n_queries: int = 1
    corpus: CorpusParams = corpus_field()  # the `corpus:` section (section() fills it from there)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.n_queries < 1:
            raise ParamError(f"params.yaml: plan.n_queries={self.n_queries} must be >= 1")


def response_format(n: int) -> dict[str, Any]:
    """JSON schema for the planner's reply (enforced by servers that support it)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "queries",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": n}
                },
                "required": ["queries"],
            },
        },
    }


def parse_queries(text: str) -> list[str]:
    """Queries from the model's reply; [] when it is not the JSON we asked for."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        start, end = (text or "").find("{"), (text or "").rfind("}")
        if start < 0 or end <= start:
            return []
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            return []
    qs = data.get("queries") if isinstance(data, dict) else data if isinstance(data, list) else None
    if not isinstance(qs, list):
        return []
    return [q.strip() for q in qs if isinstance(q, str) and q.strip()]


def plan_queries(question: str, llm: LLM | None, params: PlanParams, seed: int = 0) -> tuple[list[str], bool]:
    """(queries, fell_back): the question first, then up to n-1 distinct planner queries."""
    question = question.strip()
    if params.n_queries == 1 or llm is None:
        return [question], False
    n_extra = params.n_queries - 1
    messages = [
        {"role": "system", "content": planner_system(params.corpus)},
        {"role": "user", "content": INSTRUCTIONS.format(question=question, n=n_extra)},
    ]
    try:
        reply = llm.complete(messages, temperature=TEMPERATURE, seed=seed, max_tokens=MAX_TOKENS,
                             response_format=response_format(n_extra))
    except LLMRequestRefused as e:  # this question only (e.g. longer than the context): retrieve it as asked
        log.warning("planner refused (%s); using the question alone: %r", e, question[:80])
        return [question], True
    extra = parse_queries(reply.text)
    seen = {question.lower()}
    out = [question]
    for q in extra:
        if q.lower() not in seen:
            seen.add(q.lower())
            out.append(q)
        if len(out) == params.n_queries:
            break
    if not extra:
        log.warning("planner reply was not valid JSON; using the question alone: %r", reply.text[:200])
    return out, not extra
