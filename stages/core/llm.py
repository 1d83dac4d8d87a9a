"""The one way treerag talks to an LLM: an OpenAI-compatible chat endpoint.

- `LLMParams` is the `llm:` params section.
- `ResponseCache` persists every completed response (SQLite, outside DVC outs),
  keyed by everything that determines the output, so a killed or re-run stage never
  pays twice for a call it already made.
- `ChatClient` adds tenacity retries on 429/5xx/timeouts/connection errors, a
  concurrency limit and cache-hit accounting.
- `llm_session()` yields a client: against `llm.base_url` when set (checked for
  reachability up front), else against the embedded llama.cpp server, which is only
  started on the first cache miss and stopped when the session ends.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx2 as httpx
import openai
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from stages.core.paths import cache_dir

log = logging.getLogger("treerag.llm")


class LLMError(RuntimeError):
    """The LLM endpoint is unreachable, misconfigured or failed after retries."""


@dataclass
class LLMParams:
    """The `llm:` section of params.yaml."""

    base_url: str = ""
    model: str = "qwen2.5-coder-1.5b"
    api_key_env: str = "OPENAI_API_KEY"
    n_ctx: int = 8192
    threads: int = 0
    max_concurrency: int = 1
    timeout_s: float = 900.0
    max_attempts: int = 4
    prompt_cache: bool = True  # false: llama.cpp evaluates every prompt afresh (bit-reproducible, slower)

    def validate(self) -> None:
        from stages.core.params import ParamError

        if self.max_concurrency < 1:
            raise ParamError("params.yaml: llm.max_concurrency must be >= 1")
        if self.max_attempts < 1:
            raise ParamError("params.yaml: llm.max_attempts must be >= 1")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ParamError(f"params.yaml: llm.base_url={self.base_url!r} must start with http:// or https://")


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


class ResponseCache:
    """Persistent response cache in SQLite (safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(payload: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, json.dumps(value)))
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


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
        max_attempts: int = 4,
        prompt_cache: bool = True,
    ) -> None:
        """`endpoint` is a callable returning an `openai.OpenAI` client, called lazily on the
        first cache miss (so a fully cached stage never starts a server)."""
        self._endpoint = endpoint
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()
        self.model = model
        self.cache = cache
        self.max_attempts = max_attempts
        # llama.cpp reuses the KV cache of a shared prompt prefix; the reused and the fresh
        # evaluation differ in the last bits, so a sampled reply can depend on what the server
        # saw before (e.g. after a restart). Off = same reply whatever the server's history.
        self._extra_body = None if prompt_cache else {"cache_prompt": False}
        self._sem = threading.Semaphore(max_concurrency)
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
        with self._sem:
            c = self._call(payload)
        self.cache.put(key, {k: v for k, v in c.__dict__.items() if k != "cached"})
        self.stats.add(c)
        return c

    def _call(self, payload: dict[str, Any]) -> Completion:
        client = self._openai()
        kwargs = {k: v for k, v in payload.items() if v is not None}
        if self._extra_body:
            kwargs["extra_body"] = self._extra_body
        t0 = time.perf_counter()
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(self.max_attempts),
                wait=wait_exponential(multiplier=1, min=1, max=30),
                retry=retry_if_exception(_retryable),
                reraise=True,
            ):
                with attempt:
                    resp = client.chat.completions.create(**kwargs)
        except openai.APIConnectionError as e:
            raise LLMError(f"LLM endpoint {client.base_url} unreachable after {self.max_attempts} attempts: {e}") from e
        except openai.APIStatusError as e:
            raise LLMError(f"LLM endpoint {client.base_url} answered HTTP {e.status_code}: {e.message}") from e
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


def api_key(params: LLMParams) -> str:
    """The API key from the environment variable the params name (never from params)."""
    return os.environ.get(params.api_key_env, "") or "not-needed"


def check_reachable(base_url: str, key: str, timeout_s: float = 10.0) -> None:
    """Fail fast, with one clear message, when a configured endpoint does not answer."""
    url = base_url.rstrip("/") + "/models"
    try:
        r = httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout_s)
    except Exception as e:  # connection refused, DNS, timeout: all mean "unreachable"
        raise LLMError(f"llm.base_url={base_url!r} is unreachable ({type(e).__name__}: {e})") from e
    if r.status_code >= 500:
        raise LLMError(f"llm.base_url={base_url!r} answered HTTP {r.status_code} on /models")


@contextmanager
def llm_session(params: LLMParams, cache_name: str = "responses.sqlite") -> Iterator[ChatClient]:
    """A chat client for the configured endpoint; the embedded server lives as long as the session."""
    cache = ResponseCache(cache_dir("llm") / cache_name)
    server_box: list[Any] = []

    if params.base_url:
        key = api_key(params)
        check_reachable(params.base_url, key)

        def endpoint() -> openai.OpenAI:
            return openai.OpenAI(base_url=params.base_url, api_key=key, timeout=params.timeout_s, max_retries=0)
    else:
        from stages.core.models import ensure_model

        ensure_model(params.model)  # fail early with a clear message if weights are missing

        def endpoint() -> openai.OpenAI:
            from stages.core.llm_server import EmbeddedServer

            server = EmbeddedServer(params.model, n_ctx=params.n_ctx, threads=params.threads)
            server_box.append(server)
            return openai.OpenAI(base_url=server.base_url, api_key="none", timeout=params.timeout_s, max_retries=0)

    client = ChatClient(endpoint, params.model, cache, max_concurrency=params.max_concurrency,
                        max_attempts=params.max_attempts, prompt_cache=params.prompt_cache)
    try:
        yield client
    finally:
        log.info(client.stats.summary())
        for s in server_box:
            s.close()
        cache.close()
