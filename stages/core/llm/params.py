"""The `llm:` params section: which endpoint, how long to wait, how to retry."""
from __future__ import annotations

from dataclasses import dataclass

from stages.core.common.params import ParamError


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
    cache_ram_mib: int = 1024  # embedded server: host RAM for saved prompt states (0 = off)

    def validate(self) -> None:
        if self.max_concurrency < 1:
            raise ParamError("params.yaml: llm.max_concurrency must be >= 1")
        if self.cache_ram_mib < 0:
            raise ParamError(f"params.yaml: llm.cache_ram_mib={self.cache_ram_mib} must be >= 0 (0 = no saved prompts)")
        if self.timeout_s <= 0:
            raise ParamError(f"params.yaml: llm.timeout_s={self.timeout_s:g} must be > 0 (seconds per request)")
        if self.max_attempts < 1:
            raise ParamError("params.yaml: llm.max_attempts must be >= 1")
        if self.backoff_s < 0 or self.backoff_max_s < self.backoff_s:
            raise ParamError(f"params.yaml: llm.backoff_s={self.backoff_s} and llm.backoff_max_s="
                             f"{self.backoff_max_s} need 0 <= backoff_s <= backoff_max_s")
        if self.rate_limit_max_wait_s < 0:
            raise ParamError("params.yaml: llm.rate_limit_max_wait_s must be >= 0")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ParamError(f"params.yaml: llm.base_url={self.base_url!r} must start with http:// or https://")
