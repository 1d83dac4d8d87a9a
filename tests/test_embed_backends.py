"""The local embedding backends (embed.backend): ONNX Runtime fp32/int8 against the torch
reference, their cache names, the one-time export, and the params' validation.

Real parts: the shipped all-MiniLM-L6-v2 weights, a real torch.onnx export into a temp
folder (~20 s, once per module), real ONNX Runtime sessions."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stages.core.common.params import ParamError, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder

TEXTS = [
    "Training GPT-3 consumed an estimated 1,287 MWh of electricity.",
    "The data centre's water usage effectiveness (WUE) was 0.18 L/kWh in 2023.",
    "Table 2: Energy per inference (Wh) by model size.",
    "x",
    "",
    "   leading and trailing spaces are stripped, as sentence-transformers does   ",
    "Operating income rose 12.8% year over year, driven by the cloud segment. " * 12,  # longer than most
    "Le modèle consomme 3,5 kWh par heure.",
]


@pytest.fixture(scope="module")
def onnx_env(tmp_path_factory: pytest.TempPathFactory):
    """A private cache root for the module: the ONNX export happens once, here."""
    root = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("TREERAG_CACHE_DIR", str(root))
    mp.delenv("TREERAG_ONNX_DIR", raising=False)  # conftest's shared export: this module checks the cache folder
    yield root
    mp.undo()


@pytest.fixture(scope="module")
def reference(onnx_env: Path) -> np.ndarray:
    return make_embedder(EmbedParams(backend="torch")).embed(TEXTS)


def test_onnx_fp32_reproduces_the_torch_vectors(onnx_env: Path, reference: np.ndarray,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from stages.core.embed import embedder

    monkeypatch.setattr(embedder, "ONNX_BATCH_SIZE", 3)  # batches of unequal lengths: padding is masked
    emb = make_embedder(EmbedParams(backend="onnx"))
    v = emb.embed(TEXTS)
    assert v.shape == reference.shape == (len(TEXTS), 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    cos = (v * reference).sum(axis=1)
    assert cos.min() > 0.9999, cos
    assert emb.path.is_file() and emb.path.is_relative_to(onnx_env)
    # order-independent: embedding a text alone gives the same vector as within a batch
    assert np.allclose(emb.embed([TEXTS[1]])[0], v[1], atol=1e-5)


def test_onnx_int8_stays_close_to_torch_but_is_quantized(onnx_env: Path, reference: np.ndarray) -> None:
    emb = make_embedder(EmbedParams(backend="onnx_int8"))
    v = emb.embed(TEXTS)
    cos = (v * reference).sum(axis=1)
    assert cos.mean() > 0.98 and cos.min() > 0.95, cos
    assert cos.min() < 0.99999  # really int8 weights, not the fp32 file under another name
    assert emb.path.name == "model-int8.onnx"
    # one text per pass: a text's vector does not depend on what it is embedded with
    assert np.array_equal(emb.embed([TEXTS[1]])[0], v[1])
    assert np.array_equal(emb.embed(TEXTS[::-1])[::-1], v)
    assert emb.path.stat().st_size < 0.4 * (emb.path.parent / "model.onnx").stat().st_size


def test_export_is_made_once_and_reused(onnx_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stages.core.embed import onnx_backend

    make_embedder(EmbedParams(backend="onnx_int8"))  # both files exist after this

    def boom(*a, **k):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_backend, "_export_fp32", boom)
    monkeypatch.setattr(onnx_backend, "_quantize_int8", boom)
    assert make_embedder(EmbedParams(backend="onnx")).dim == 384
    assert make_embedder(EmbedParams(backend="onnx_int8")).dim == 384
    assert not list(onnx_env.glob("onnx/*/*.tmp"))  # no half-written files left behind


def test_each_backend_caches_and_indexes_under_its_own_name(onnx_env: Path) -> None:
    names = {b: make_embedder(EmbedParams(backend=b)).name for b in ("torch", "onnx", "onnx_int8")}
    assert names["torch"] == "all-MiniLM-L6-v2"  # caches and indexes from before backends stay valid
    assert len(set(names.values())) == 3
    assert len({EmbeddingCache.key(n, "same text") for n in names.values()}) == 3


def test_threads_param_reaches_onnx_runtime(onnx_env: Path) -> None:
    emb = make_embedder(EmbedParams(backend="onnx", threads=1))
    assert emb._session.get_session_options().intra_op_num_threads == 1


def test_backend_and_threads_are_validated_with_the_param_named() -> None:
    with pytest.raises(ParamError, match=r"embed\.backend='tensorrt'.*'torch'.*'onnx_int8'"):
        section(EmbedParams, "embed", {"embed": {"backend": "tensorrt"}})
    with pytest.raises(ParamError, match=r"embed\.threads=-1"):
        section(EmbedParams, "embed", {"embed": {"threads": -1}})
    with pytest.raises(ParamError, match=r"embed\.threads"):
        section(EmbedParams, "embed", {"embed": {"threads": "all"}})
    assert section(EmbedParams, "embed", {"embed": {"backend": "onnx_int8", "threads": 2}}).threads == 2


def test_missing_weights_are_named(tmp_path: Path) -> None:
    from stages.core.embed.onnx_backend import onnx_model_file

    with pytest.raises(FileNotFoundError, match=r"model\.safetensors"):
        onnx_model_file(tmp_path, int8=False, folder=tmp_path / "out")


def test_local_engine_embeds_with_a_pool_of_one_thread_processes_and_the_same_vectors(
        onnx_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from stages.core.embed.pooled import PooledEmbedder, engine_embedder
    from stages.core.engine.local import LocalEngine
    from stages.core.llm.params import LLMParams
    from stages.core.llm.retry import RetryPolicy

    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # the same pool on any machine

    for backend in ("onnx", "onnx_int8"):
        params = EmbedParams(backend=backend, batch_size=2)  # runs of 16 texts: several per call, both processes
        alone = make_embedder(params)
        engine = LocalEngine()
        try:
            pooled = engine_embedder(engine, params, "OPENAI_API_KEY", RetryPolicy.from_params(LLMParams()))
            assert isinstance(pooled, PooledEmbedder) and pooled.pool.size == 2
            assert pooled.name == alone.name and pooled.dim == alone.dim
            assert pooled.pool.attr("threads") == 1 and alone.threads == 0
            texts = TEXTS * 5
            # one thread against the runtime's default: equal up to float rounding on any CPU (byte-equal on ours)
            assert np.allclose(pooled.embed(texts), alone.embed(texts), rtol=0, atol=1e-6), backend
        finally:
            engine.close()
    # one process when the user names the threads, or for torch
    assert not isinstance(engine_embedder(LocalEngine(), EmbedParams(threads=2), "K", None), PooledEmbedder)
