"""llm.max_concurrency against a fake endpoint with latency and HTTP 429s: calls overlap, the
rows equal a sequential run's, a 429 pauses the whole pool, library loggers stay quiet."""
from __future__ import annotations

import logging
import time

import polars as pl
import pytest

from fake_openai import FakeConfig, FakeOpenAI
from stages.core.answering import AnswerParams, ContextBlock, EnsembleParams, answer_members
from stages.core.llm import LLMError, LLMParams, llm_session
from stages.core.logs import setup_logging

N_Q = 12
QUESTIONS = pl.DataFrame({"id": [f"q{i:02d}" for i in range(N_Q)],
                          "question": [f"How much energy did system {i} use?" for i in range(N_Q)],
                          "answer_unit": ["MWh"] * N_Q})
CONTEXTS = {f"q{i:02d}": [[ContextBlock(f"doc{i}", f"System {i} used {10 + i} MWh in {2000 + i} and {i}.5 more."),
                           ContextBlock(f"doc{i + 1}", f"Another {3 * i} MWh were reported.")]]
            for i in range(N_Q)}
CORPUS = {f"doc{i}" for i in range(N_Q + 1)}


# the fake endpoint writes the free reader's replies
FREE_READER = AnswerParams(reader="free", temperature=0.7, max_tokens=384, max_retries=2)


def run_answers(base_url: str, concurrency: int, **llm: object) -> tuple[list[list[dict]], float]:
    params = LLMParams(base_url=base_url, model="fake", max_concurrency=concurrency, **llm)
    with llm_session(params) as client:
        t0 = time.perf_counter()
        rows = answer_members(client, "fake", QUESTIONS, CONTEXTS, FREE_READER, EnsembleParams(n=2, seed=0),
                              CORPUS, desc="test")
        return rows, time.perf_counter() - t0


def without_timing(rows: list[list[dict]]) -> list[list[dict]]:
    return [[{k: v for k, v in r.items() if k != "latency_s"} for r in member] for member in rows]


def test_concurrent_answers_equal_sequential_ones_and_overlap(tmp_path, monkeypatch):
    with FakeOpenAI(FakeConfig(latency_s=0.1)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "seq"))
        seq, t_seq = run_answers(fake.base_url, 1)
        assert fake.state.max_in_flight == 1
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "par"))
        par, t_par = run_answers(fake.base_url, 8)
        assert fake.state.max_in_flight == 8
    assert without_timing(par) == without_timing(seq)
    assert [r["question_id"] for r in par[1]] == QUESTIONS["id"].to_list()
    assert all(r["seed"] == 1 for r in par[1]) and not any(r["is_blank"] for r in par[0])
    assert t_seq >= 2 * N_Q * 0.1
    assert t_par < t_seq / 3, (t_seq, t_par)


def test_a_429_pauses_the_whole_pool_and_the_run_still_completes(tmp_path, monkeypatch):
    with FakeOpenAI(FakeConfig(latency_s=0.05)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "ref"))
        ref, _ = run_answers(fake.base_url, 1)
    pause = 0.3
    with FakeOpenAI(FakeConfig(latency_s=0.05, rate_limit_every=7, retry_after_s=pause)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "throttled"))
        rows, _ = run_answers(fake.base_url, 6, max_attempts=1)  # a 429 does not use up max_attempts
        log = fake.log
    assert without_timing(rows) == without_timing(ref)
    refused = [r for r in log if r.status == 429]
    assert len(refused) >= 3
    for r in refused:  # nobody starts a request during the pause that follows a 429
        later = [q.start for q in log if q.start > r.end + 0.03]
        assert not later or min(later) >= r.end + pause - 0.02, (r, min(later) - r.end)


def test_endless_429_fails_with_the_param_named(tmp_path, monkeypatch):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    with FakeOpenAI(FakeConfig(rate_limit_every=1)) as fake:
        params = LLMParams(base_url=fake.base_url, model="fake", backoff_s=0.05, backoff_max_s=0.1,
                           rate_limit_max_wait_s=0.5)
        with llm_session(params) as client, pytest.raises(LLMError, match=r"llm\.rate_limit_max_wait_s=0\.5"):
            client.complete([{"role": "user", "content": "hi"}], temperature=0, seed=0, max_tokens=5)
        assert len(fake.log) >= 3  # it did retry


def test_http_request_lines_stay_out_of_the_log_unless_asked(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TREERAG_HTTP_LOG", raising=False)
    caplog.set_level(logging.INFO)
    with FakeOpenAI() as fake:
        params = LLMParams(base_url=fake.base_url, model="fake")
        setup_logging()
        with llm_session(params) as client:
            client.complete([{"role": "user", "content": "a"}], temperature=0, seed=0, max_tokens=5)
        assert not [r for r in caplog.records if "HTTP Request" in r.getMessage()]
        monkeypatch.setenv("TREERAG_HTTP_LOG", "1")
        setup_logging()
        with llm_session(params) as client:
            client.complete([{"role": "user", "content": "b"}], temperature=0, seed=0, max_tokens=5)
        assert [r for r in caplog.records if "HTTP Request: POST" in r.getMessage()]
    monkeypatch.delenv("TREERAG_HTTP_LOG")
    setup_logging()


def test_caption_vision_calls_run_concurrently_in_image_order(tmp_path, capsys):
    from stages.core.captioning import caption_images

    n = 8
    paths = []
    for i in range(n):
        paths.append(tmp_path / f"{i}.png")
        paths[-1].write_bytes(f"png{i}".encode())
    images = pl.DataFrame({"image_id": [f"d:p{i}:img1" for i in range(n)], "doc_id": ["d"] * n,
                           "page": list(range(n)), "path": [str(p) for p in paths], "width": [99] * n,
                           "height": [99] * n, "has_pixels": [True] * n,
                           "nearby_caption": [f"Figure {i}." for i in range(n)], "order": [0] * n})

    def describe(png: bytes) -> str:
        i = int(png.decode()[3:])
        time.sleep(0.05 * (n - i))  # later images finish first
        if i in (2, 5):
            raise RuntimeError(f"vision down for {i}")
        return f"chart {i}"

    t0 = time.perf_counter()
    seq, seq_stats = caption_images(images, describe, progress=False, max_workers=1)
    t_seq = time.perf_counter() - t0
    seq_err = capsys.readouterr().err
    t0 = time.perf_counter()
    par, par_stats = caption_images(images, describe, progress=False, max_workers=8)
    t_par = time.perf_counter() - t0
    assert par.equals(seq) and par_stats == seq_stats and seq_stats["vision_errors"] == 2
    assert capsys.readouterr().err == seq_err and seq_err.index("vision down for 2") < seq_err.index("for 5")
    assert t_par < t_seq / 2


def test_embeddings_endpoint_batches_run_concurrently_in_order(tmp_path):
    from stages.core.embedder import EmbeddingCache, EmbedParams, embed_texts, make_embedder
    from stages.core.llm import RetryPolicy

    texts = [f"sentence number {i} about GPUs" for i in range(96)]
    retry = RetryPolicy(max_attempts=2, backoff_s=0.05, backoff_max_s=0.2, rate_limit_max_wait_s=30)
    results = {}
    for c, every in ((1, 0), (6, 0), (6, 5)):
        with FakeOpenAI(FakeConfig(latency_s=0.1, rate_limit_every=every, dim=16)) as fake:
            embedder = make_embedder(EmbedParams(base_url=fake.base_url, model="fake-embed", batch_size=8,
                                                 max_concurrency=c), retry=retry)
            cache = EmbeddingCache(tmp_path / f"e{c}_{every}.sqlite")
            t0 = time.perf_counter()
            vecs, n_new = embed_texts(texts, embedder, cache, batch_size=8, progress=False)
            results[(c, every)] = (vecs, time.perf_counter() - t0, fake.state.max_in_flight, fake.log)
            cache.close()
        assert n_new == len(texts) and vecs.shape == (96, 16)
    seq, t_seq, peak_seq, _ = results[(1, 0)]
    par, t_par, peak_par, log = results[(6, 0)]
    assert peak_seq == 1 and peak_par == 6 and len(log) == 1 + 96 // 8  # the probe, then 12 batches of 8
    assert (par == seq).all() and t_par < t_seq / 2.5, (t_seq, t_par)
    throttled, _, _, log = results[(6, 5)]
    assert (throttled == seq).all() and any(r.status == 429 for r in log)
