"""The one way treerag talks to an LLM: an OpenAI-compatible chat endpoint.

- `LLMParams` is the `llm:` params section.
- `ResponseCache` persists every completed response (SQLite, outside DVC outs),
  keyed by everything that determines the output, so a killed or re-run stage never
  pays twice for a call it already made.
- `ChatClient` adds tenacity retries on 429/5xx/timeouts/connection errors, a
  concurrency limit shared by every thread that calls it (`concurrency.Throttle`: a 429
  pauses the whole pool and lowers its concurrency, it does not fail the run) and
  cache-hit accounting. Callers issue calls from several threads with
  `concurrency.ordered_map(..., max_workers=client.max_concurrency)`.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx2 as httpx
import openai
from tenacity import RetryCallState, Retrying, retry_if_exception

from stages.core.concurrency import Throttle
from stages.core.paths import cache_dir

log = logging.getLogger("treerag.llm")
T = TypeVar("T")


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
    max_concurrency: int = 1  # requests in flight at once; the embedded server gets as many slots
    timeout_s: float = 900.0
    max_attempts: int = 4  # per call, for 5xx/timeouts/connection errors (429s: rate_limit_max_wait_s)
    backoff_s: float = 1.0  # first retry wait; doubles per failure in a row, up to backoff_max_s
    backoff_max_s: float = 30.0
    rate_limit_max_wait_s: float = 600.0  # a call still refused with HTTP 429 after this long fails
    prompt_cache: bool = True  # false: llama.cpp evaluates every prompt afresh (bit-reproducible, slower)

    def validate(self) -> None:
        from stages.core.params import ParamError

        if self.max_concurrency < 1:
            raise ParamError("params.yaml: llm.max_concurrency must be >= 1")
        if self.max_attempts < 1:
            raise ParamError("params.yaml: llm.max_attempts must be >= 1")
        if self.backoff_s < 0 or self.backoff_max_s < self.backoff_s:
            raise ParamError(f"params.yaml: llm.backoff_s={self.backoff_s} and llm.backoff_max_s="
                             f"{self.backoff_max_s} need 0 <= backoff_s <= backoff_max_s")
        if self.rate_limit_max_wait_s < 0:
            raise ParamError("params.yaml: llm.rate_limit_max_wait_s must be >= 0")
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


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a 429 asks for (`retry-after-ms` or `retry-after` in seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """How one endpoint's calls retry: the `llm.max_attempts`, `llm.backoff_s`,
    `llm.backoff_max_s` and `llm.rate_limit_max_wait_s` params."""

    max_attempts: int
    backoff_s: float
    backoff_max_s: float
    rate_limit_max_wait_s: float

    @classmethod
    def from_params(cls, params: LLMParams) -> RetryPolicy:
        return cls(params.max_attempts, params.backoff_s, params.backoff_max_s, params.rate_limit_max_wait_s)


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


def call_with_retries(request: Callable[[], T], throttle: Throttle, policy: RetryPolicy, what: str) -> T:
    """`request()` inside one of the throttle's slots, retried with tenacity.

    5xx, timeouts and connection errors retry with this call's own exponential backoff
    (`policy.max_attempts` attempts in all). An HTTP 429 tells the throttle, which holds
    back every request of the pool until the backoff (or the server's Retry-After) ends
    and lowers the concurrency; the call retries until `rate_limit_max_wait_s` have
    passed. Failures end in one LLMError that names `what` (the endpoint).
    """
    errors = 0  # failures other than 429

    def stop(rs: RetryCallState) -> bool:
        exc = rs.outcome.exception() if rs.outcome else None
        if isinstance(exc, openai.RateLimitError):
            return rs.seconds_since_start >= policy.rate_limit_max_wait_s
        return errors >= policy.max_attempts

    def wait(rs: RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome else None
        if isinstance(exc, openai.RateLimitError):
            return 0.0  # the throttle holds every request back until the backoff ends
        return min(policy.backoff_max_s, policy.backoff_s * 2 ** max(0, errors - 1))

    t0 = time.perf_counter()
    try:
        for attempt in Retrying(stop=stop, wait=wait, retry=retry_if_exception(_retryable), reraise=True):
            with attempt:
                with throttle.slot() as slot:
                    try:
                        result = request()
                    except openai.RateLimitError as e:
                        throttle.on_rate_limited(slot, retry_after_s(e))
                        raise
                    except Exception:
                        errors += 1
                        raise
                throttle.on_success()
                return result
    except openai.RateLimitError as e:
        raise LLMError(f"{what} still answered HTTP 429 (rate limited) after {time.perf_counter() - t0:.0f}s "
                       f"(llm.rate_limit_max_wait_s={policy.rate_limit_max_wait_s:g})") from e
    except openai.APIConnectionError as e:
        raise LLMError(f"{what} unreachable after {policy.max_attempts} attempts: {e}") from e
    except openai.APIStatusError as e:
        raise LLMError(f"{what} answered HTTP {e.status_code}: {e.message}") from e
    raise AssertionError("unreachable: tenacity either returns or raises")


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

            server = EmbeddedServer(params.model, n_ctx=params.n_ctx, threads=params.threads,
                                    slots=params.max_concurrency)
            server_box.append(server)
            return openai.OpenAI(base_url=server.base_url, api_key="none", timeout=params.timeout_s, max_retries=0)

    retry = RetryPolicy.from_params(params)
    client = ChatClient(endpoint, params.model, cache, max_concurrency=params.max_concurrency, retry=retry,
                        prompt_cache=params.prompt_cache)
    try:
        yield client
    finally:
        log.info(client.stats.summary())
        if client.throttle.rate_limited:
            log.info("LLM endpoint rate-limited %d request(s) (HTTP 429); they were retried",
                     client.throttle.rate_limited)
        for s in server_box:
            s.close()
        cache.close()
