"""The one way treerag talks to an LLM: an OpenAI-compatible chat endpoint.

- `ChatClient` (here) answers from the persistent `ResponseCache` when it can and adds tenacity retries on 429/5xx/timeouts/connection errors, a
  concurrency limit shared by every thread that calls it (`concurrency.Throttle`: a 429
  pauses the whole pool and lowers its concurrency, it does not fail the run) and
  cache-hit accounting. Callers issue calls from several threads with
  `concurrency.ordered_map(..., max_workers=client.max_concurrency)`.
- `session.llm_session()` yields a client: against `llm.base_url` when set (checked for
  reachability up front), else against the embedded llama.cpp server, which is only
  started on the first cache miss and stopped when the session ends.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import openai

from stages.core.common.concurrency import Throttle
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import Completion
from stages.core.llm.response_cache import ResponseCache
from stages.core.llm.retry import RetryPolicy, call_with_retries


@dataclass
class CallStats:
    """Cache hits and real calls made by one client, for the stage's log."""

    hits: int = 0
    misses: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, c: Completion) -> None:
        with self._lock:
            if c.cached:
                self.hits += 1
            else:
                self.misses += 1
                self.prompt_tokens += c.prompt_tokens
                self.completion_tokens += c.completion_tokens

    def summary(self) -> str:
        return (
            f"LLM calls: {self.hits + self.misses} total, {self.hits} cache hits, {self.misses} new "
            f"({self.prompt_tokens} prompt + {self.completion_tokens} completion tokens paid)"
        )


class ChatClient:
    """OpenAI-compatible chat client with cache, retries and a concurrency limit."""

    def __init__(
        self,
        endpoint: Any,
        model: str,
        cache: ResponseCache,
        *,
        max_concurrency: int = 1,
        retry: RetryPolicy | None = None,
        prompt_cache: bool = True,
    ) -> None:
        """`endpoint` is a callable returning an `openai.OpenAI` client, called lazily on the
        first cache miss (so a fully cached stage never starts a server)."""
        self._endpoint = endpoint
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()
        self.model = model
        self.cache = cache
        self.retry = retry or RetryPolicy.from_params(LLMParams())
        self.max_concurrency = max_concurrency
        # llama.cpp reuses the KV cache of a shared prompt prefix; the reused and the fresh
        # evaluation differ in the last bits, so a sampled reply can depend on what the server
        # saw before (e.g. after a restart). Off = same reply whatever the server's history.
        self._extra_body = None if prompt_cache else {"cache_prompt": False}
        self.throttle = Throttle(max_concurrency, self.retry.backoff_s, self.retry.backoff_max_s)
        self.stats = CallStats()

    def _openai(self) -> openai.OpenAI:
        with self._client_lock:
            if self._client is None:
                self._client = self._endpoint()
            return self._client

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        temperature: float,
        seed: int,
        max_tokens: int,
        response_format: dict[str, Any] | None = None,
        top_logprobs: int = 0,
    ) -> Completion:
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "response_format": response_format,
        }
        if top_logprobs:  # only then: cache keys of calls without log-probabilities stay as they were
            payload["logprobs"] = True
            payload["top_logprobs"] = top_logprobs
        key = ResponseCache.key(payload)
        hit = self.cache.get(key)
        if hit is not None:
            c = Completion(**{**hit, "cached": True})
            self.stats.add(c)
            return c
        c = self._call(payload)
        self.cache.put(key, {k: v for k, v in c.__dict__.items() if k != "cached"})
        self.stats.add(c)
        return c

    def _call(self, payload: dict[str, Any]) -> Completion:
        """One completion through the shared throttle (see `call_with_retries`)."""
        client = self._openai()
        kwargs = {k: v for k, v in payload.items() if v is not None}
        if self._extra_body:
            kwargs["extra_body"] = self._extra_body
        t0 = time.perf_counter()
        resp = call_with_retries(lambda: client.chat.completions.create(**kwargs), self.throttle, self.retry,
                                 f"LLM endpoint {client.base_url}")
        choice = resp.choices[0]
        usage = resp.usage
        token_logprobs = None
        if payload.get("logprobs") and getattr(choice, "logprobs", None) and choice.logprobs.content:
            token_logprobs = [[t.token, [[a.token, a.logprob] for a in (t.top_logprobs or [])]]
                              for t in choice.logprobs.content]
        timings = (getattr(resp, "model_extra", None) or {}).get("timings") or {}
        return Completion(
            prompt_evaluated=int(timings.get("prompt_n", -1)),
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            latency_s=round(time.perf_counter() - t0, 3),
            finish_reason=choice.finish_reason or "",
            token_logprobs=token_logprobs,
        )
