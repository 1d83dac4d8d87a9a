"""Retrying calls to an OpenAI-compatible endpoint: 5xx/timeouts back off, a 429 pauses the pool."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception

from stages.core.common.concurrency import Throttle
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLMError, LLMRequestRefused

T = TypeVar("T")


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
        error = LLMRequestRefused if e.status_code in (400, 413, 422) else LLMError
        raise error(f"{what} answered HTTP {e.status_code}: {e.message}") from e
    raise AssertionError("unreachable: tenacity either returns or raises")
