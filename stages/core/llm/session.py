"""A chat client for the configured endpoint, or for the embedded llama.cpp server started on demand."""
from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2 as httpx
import openai

from stages.core.common.paths import cache_dir
from stages.core.llm.client import ChatClient
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLMError
from stages.core.llm.response_cache import ResponseCache
from stages.core.llm.retry import RetryPolicy

log = logging.getLogger("treerag.llm")


def api_key(env_name: str) -> str:
    """The API key from the environment variable the params name (never from params, never logged);
    local servers need none, and the openai client wants a non-empty string."""
    return os.environ.get(env_name or "", "") or "not-needed"


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
def llm_session(params: LLMParams, cache_name: str = "responses.sqlite", cache: Any = None) -> Iterator[ChatClient]:
    """A chat client for the configured endpoint; the embedded server lives as long as the session.
    ``cache``: a response cache with get/put to use instead of this machine's file (the caller closes it)."""
    own = cache is None
    cache = ResponseCache(cache_dir("llm") / cache_name) if own else cache
    server_box: list[Any] = []

    if params.base_url:
        key = api_key(params.api_key_env)
        check_reachable(params.base_url, key)

        def endpoint() -> openai.OpenAI:
            return openai.OpenAI(base_url=params.base_url, api_key=key, timeout=params.timeout_s, max_retries=0)
    else:
        from stages.core.llm.weights import ensure_model

        ensure_model(params.model)  # fail early with a clear message if weights are missing

        def endpoint() -> openai.OpenAI:
            from stages.core.llm.server import EmbeddedServer

            server = EmbeddedServer(params.model, n_ctx=params.n_ctx, threads=params.threads,
                                    slots=params.max_concurrency, cache_ram_mib=params.cache_ram_mib)
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
        if own:
            cache.close()
