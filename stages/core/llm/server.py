"""The embedded llama.cpp OpenAI-compatible server (xllamacpp), in-process.

It listens on a free loopback port and is stopped when the object is closed, so
stages need no separately managed service. Its own logs are off unless
TREERAG_LLAMA_VERBOSE is set (errors still reach us as HTTP errors).

`slots` (= `llm.max_concurrency`) parallel sequences share one unified KV cache of
`n_ctx` tokens per slot, so every slot can hold a full-length prompt. One slot keeps
seeded sampling deterministic; with several, llama.cpp decodes concurrent requests in
one batch and the last bits of the logits (so a sampled reply) can depend on what else
was in the batch (measured by bench/llm_slots.py).
"""
from __future__ import annotations

import logging
import os

from stages.core.llm.weights import ensure_model

log = logging.getLogger("treerag.llm")


class EmbeddedServer:
    """A running llama.cpp server for one embedded model."""

    def __init__(self, model_name: str, *, n_ctx: int, threads: int, slots: int = 1,
                 embedding: bool = False, cache_ram_mib: int = 1024) -> None:
        import xllamacpp

        if slots < 1:
            raise ValueError(f"slots={slots} must be >= 1 (params.yaml llm.max_concurrency)")
        path = ensure_model(model_name)
        n_threads = threads or (os.cpu_count() or 2)
        p = xllamacpp.CommonParams()
        p.model.path = str(path)
        p.n_ctx = n_ctx * slots  # unified: the slots share one cache with room for a full prompt each
        p.n_parallel = slots
        p.kv_unified = slots > 1
        p.cpuparams.n_threads = n_threads
        p.cpuparams_batch.n_threads = n_threads
        p.hostnames = ["127.0.0.1"]
        p.port = 0
        p.embedding = embedding
        # host RAM for prompt states saved when a slot moves to another prompt (0 = off); llama.cpp's
        # default (8 GiB) let the answer stage grow by one saved state per question (bench/llm_memory.py)
        p.cache_ram_mib = cache_ram_mib
        # llama.cpp logs several lines per request; TREERAG_LLAMA_VERBOSE=1 brings them back
        p.verbosity = 3 if os.environ.get("TREERAG_LLAMA_VERBOSE") else -1
        log.info("starting embedded llama.cpp server: %s (n_ctx=%d, threads=%d, slots=%d, cache_ram_mib=%d)",
                 model_name, n_ctx, n_threads, slots, cache_ram_mib)
        self._server = xllamacpp.Server(p)
        self.base_url = self._server.listening_address.rstrip("/") + "/v1"
        log.info("embedded server listening at %s", self.base_url)

    def close(self) -> None:
        if self._server is not None:
            del self._server
            self._server = None
