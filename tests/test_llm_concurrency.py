"""llm.max_concurrency against a fake endpoint with latency and HTTP 429s: calls overlap, the
rows equal a sequential run's, a 429 pauses the whole pool, library loggers stay quiet."""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

import polars as pl
import pytest
from concurrent_answers import questions, run
from fake_openai import FakeConfig, FakeOpenAI

from stages.core.common.concurrency import Throttle
from stages.core.common.logs import setup_logging
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLMError
from stages.core.llm.session import llm_session

N_Q = 12
QUESTIONS = questions(N_Q)


def run_answers(base_url: str, concurrency: int, **llm: object) -> tuple[list[list[dict]], int]:
    """(rows, the most requests the client had in flight)."""
    return run(base_url, concurrency, N_Q, 2, **llm)


def without_timing(rows: list[list[dict]]) -> list[list[dict]]:
    return [[{k: v for k, v in r.items() if k != "latency_s"} for r in member] for member in rows]


def test_concurrent_answers_equal_sequential_ones_and_overlap(tmp_path, monkeypatch):
    with FakeOpenAI(FakeConfig(latency_s=0.1)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "seq"))
        seq, peak_seq = run_answers(fake.base_url, 1)
        assert peak_seq == fake.state.max_in_flight == 1
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "par"))
        par, peak_par = run_answers(fake.base_url, 8)
        # overlap is proven by the server seeing several requests at once, not by wall time,
        # which a busy CI machine blurs
        assert peak_par == 8 and fake.state.max_in_flight >= 2
    assert without_timing(par) == without_timing(seq)
    assert [r["question_id"] for r in par[1]] == QUESTIONS["id"].to_list()
    assert all(r["seed"] == 1 for r in par[1]) and not any(r["is_blank"] for r in par[0])


def test_a_429_pauses_the_whole_pool_and_the_run_still_completes(tmp_path, monkeypatch):
    with FakeOpenAI(FakeConfig(latency_s=0.05)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "ref"))
        ref, _ = run_answers(fake.base_url, 1)
    # record, under the throttle's own lock and clock, when each request passed the gate and
    # each backoff was decided (a busy machine cannot blur these, unlike the server's clock)
    passed: list[float] = []
    backoffs: list[tuple[float, float]] = []
    real_slot, real_limited = Throttle.slot, Throttle.on_rate_limited

    @contextmanager
    def slot(self):
        with real_slot(self) as s:
            passed.append(s.started)
            yield s

    def on_rate_limited(self, s, retry_after=None):
        pause = real_limited(self, s, retry_after)
        with self._cond:
            backoffs.append((self._last_backoff_at, self._not_before))
        return pause

    monkeypatch.setattr(Throttle, "slot", slot)
    monkeypatch.setattr(Throttle, "on_rate_limited", on_rate_limited)
    pause = 0.3
    with FakeOpenAI(FakeConfig(latency_s=0.05, rate_limit_every=7, retry_after_s=pause)) as fake:
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "throttled"))
        rows, _ = run_answers(fake.base_url, 6, max_attempts=1)  # a 429 does not use up max_attempts
        refused = [r for r in fake.log if r.status == 429]
    assert without_timing(rows) == without_timing(ref)
    assert len(refused) >= 3 and len(backoffs) >= 1
    for decided, until in backoffs:  # once a pause is decided, nobody passes the gate before it ends
        assert until >= decided + pause - 1e-6
        assert all(t >= until for t in passed if t > decided), (decided, until)


def test_endless_429_fails_with_the_param_named(tmp_path, monkeypatch):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    with FakeOpenAI(FakeConfig(rate_limit_every=1)) as fake:
        params = LLMParams(base_url=fake.base_url, model="fake", backoff_s=0.05, backoff_max_s=0.1,
                           rate_limit_max_wait_s=1.0)
        t0 = time.monotonic()
        with llm_session(params) as client, pytest.raises(LLMError, match=r"llm\.rate_limit_max_wait_s=1\b"):
            client.complete([{"role": "user", "content": "hi"}], temperature=0, seed=0, max_tokens=5)
        assert time.monotonic() - t0 >= 1.0 and all(r.status == 429 for r in fake.log)


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
    from stages.core.caption.describe import caption_images

    n = 8
    paths = []
    for i in range(n):
        paths.append(tmp_path / f"{i}.png")
        paths[-1].write_bytes(f"png{i}".encode())
    images = pl.DataFrame({"image_id": [f"d:p{i}:img1" for i in range(n)], "doc_id": ["d"] * n,
                           "page": list(range(n)), "path": [str(p) for p in paths], "width": [99] * n,
                           "height": [99] * n, "has_pixels": [True] * n,
                           "nearby_caption": [f"Figure {i}." for i in range(n)], "order": [0] * n})

    active, peak, lock = [0], [0], threading.Lock()

    def describe(png: bytes) -> str:
        i = int(png.decode()[3:])
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.1 * (n - i))  # later images finish first
        with lock:
            active[0] -= 1
        if i in (2, 5):
            raise RuntimeError(f"vision down for {i}")
        return f"chart {i}"

    seq, seq_stats = caption_images(images, describe, progress=False, max_workers=1)
    assert peak[0] == 1
    seq_err = capsys.readouterr().err
    par, par_stats = caption_images(images, describe, progress=False, max_workers=8)
    assert par.equals(seq) and par_stats == seq_stats and seq_stats["vision_errors"] == 2
    assert capsys.readouterr().err == seq_err and seq_err.index("vision down for 2") < seq_err.index("for 5")
    assert 2 <= peak[0] <= 8  # the vision calls overlapped, within max_workers


def test_embeddings_endpoint_batches_run_concurrently_in_order(tmp_path):
    from stages.core.embed.embedder import (
        EmbeddingCache,
        EmbedParams,
        embed_texts,
        make_embedder,
    )
    from stages.core.llm.retry import RetryPolicy

    texts = [f"sentence number {i} about GPUs" for i in range(96)]
    retry = RetryPolicy(max_attempts=2, backoff_s=0.05, backoff_max_s=0.2, rate_limit_max_wait_s=30)
    results = {}
    for c, every in ((1, 0), (6, 0), (6, 5)):
        with FakeOpenAI(FakeConfig(latency_s=0.1, rate_limit_every=every, dim=16)) as fake:
            embedder = make_embedder(EmbedParams(base_url=fake.base_url, model="fake-embed", batch_size=8,
                                                 max_concurrency=c), retry=retry)
            cache = EmbeddingCache(tmp_path / f"e{c}_{every}.sqlite")
            vecs, n_new = embed_texts(texts, embedder, cache, batch_size=8, progress=False)
            results[(c, every)] = (vecs, embedder._throttle.max_in_flight, fake.log)
            assert fake.state.max_in_flight == 1 if c == 1 else fake.state.max_in_flight >= 2  # overlap at the server
            cache.close()
        assert n_new == len(texts) and vecs.shape == (96, 16)
    seq, peak_seq, _ = results[(1, 0)]
    par, peak_par, log = results[(6, 0)]
    assert peak_seq == 1 and peak_par == 6 and len(log) == 1 + 96 // 8  # the probe, then 12 batches of 8
    assert (par == seq).all()
    throttled, _, log = results[(6, 5)]
    assert (throttled == seq).all() and any(r.status == 429 for r in log)


def test_kill_9_mid_run_resumes_from_the_cache_with_identical_rows(tmp_path):
    """A concurrent answer run killed with SIGKILL loses only the calls in flight: the rerun pays for
    the rest, and its rows equal an uninterrupted run's."""
    import json
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).parent / "concurrent_answers.py"

    def start(cache: Path, out: Path) -> subprocess.Popen:
        env = {**os.environ, "TREERAG_CACHE_DIR": str(cache)}
        return subprocess.Popen([sys.executable, str(script), fake.base_url, "4", str(out)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def cached(cache: Path) -> int:
        try:
            with sqlite3.connect(cache / "llm" / "responses.sqlite", timeout=30) as con:
                return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    with FakeOpenAI(FakeConfig(latency_s=0.2)) as fake:
        ref = start(tmp_path / "ref_cache", tmp_path / "ref.json")
        assert ref.wait(timeout=600) == 0, ref.stderr.read()
        proc = start(tmp_path / "cache", tmp_path / "killed.json")
        deadline = time.time() + 600
        while cached(tmp_path / "cache") < 8 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_before = cached(tmp_path / "cache")
        assert 8 <= done_before < 32 and not (tmp_path / "killed.json").exists()
        rerun_at = time.monotonic()  # the killed run's calls in flight may still finish at the server
        again = start(tmp_path / "cache", tmp_path / "resumed.json")
        assert again.wait(timeout=600) == 0
        new_calls = len([r for r in fake.log if r.start >= rerun_at])
    assert new_calls == 32 - done_before  # nothing completed before the kill is paid again
    assert json.loads((tmp_path / "resumed.json").read_text()) == json.loads((tmp_path / "ref.json").read_text())
