"""What the planner, the readers and the captioner need from a model: one chat completion."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from stages.core.common.errors import UserError


class LLMError(UserError, RuntimeError):
    """The LLM endpoint is unreachable, misconfigured or failed after retries."""


class LLMRequestRefused(LLMError):
    """The endpoint refused this one request as invalid (HTTP 400/413/422: e.g. a prompt longer than its
    context): other requests may still succeed, so a stage records the item as failed and goes on."""


@dataclass
class Completion:
    """One chat completion and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    finish_reason: str = ""
    # [token, [[alternative, logprob], ...]] per generated token, when top_logprobs was asked
    token_logprobs: list[Any] | None = None
    # prompt tokens the server actually evaluated (llama.cpp `timings.prompt_n`; the rest came
    # from its prompt cache); -1 when the server does not say
    prompt_evaluated: int = -1


class LLM(Protocol):
    """What the planner and the answerer need from a model."""

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        temperature: float,
        seed: int,
        max_tokens: int,
        response_format: dict[str, Any] | None = None,
        top_logprobs: int = 0,
    ) -> Completion: ...
