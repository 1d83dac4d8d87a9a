"""ordered_map: concurrent, but results, logs and errors as in a sequential loop; Throttle: the
shared 429 backoff and the adaptive limit."""
from __future__ import annotations

import logging
import threading
import time

import pytest

from stages.core.common.concurrency import Throttle, ordered_map


def _slow_square(x: int) -> int:
    time.sleep(0.05 * ((7 * x) % 5))  # finishing order differs from item order
    logging.getLogger("treerag.test").warning("item %d", x)
    return x * x


def test_results_and_logs_in_item_order_whatever_the_finishing_order(caplog):
    caplog.set_level(logging.WARNING, logger="treerag.test")
    done: list[int] = []
    out = ordered_map(_slow_square, list(range(12)), max_workers=6, progress=done.append)
    assert out == [x * x for x in range(12)]
    assert [r.getMessage() for r in caplog.records] == [f"item {x}" for x in range(12)]
    assert sorted(done) == sorted(out) and done != out  # progress moves in finishing order


def test_runs_concurrently():
    """Eight items wait at a barrier of eight: only eight workers running at once get past it
    (a sequential loop would break the barrier), whatever the machine's speed."""
    barrier = threading.Barrier(8, timeout=60)
    active, peak, lock = [0], [0], threading.Lock()

    def work(_: int) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        barrier.wait()
        with lock:
            active[0] -= 1

    ordered_map(work, range(16), max_workers=8)
    assert peak[0] == 8


def test_one_worker_is_a_plain_loop_in_the_calling_thread():
    threads = ordered_map(lambda _: threading.current_thread(), range(3), max_workers=1)
    assert set(threads) == {threading.current_thread()}


def test_first_failing_item_raises_and_earlier_logs_come_out(caplog):
    caplog.set_level(logging.WARNING, logger="treerag.test")
    started: list[int] = []

    def work(x: int) -> int:
        started.append(x)
        time.sleep(0.02 if x != 3 else 0.2)  # item 3 fails last, but it comes first in item order
        if x in (3, 5):
            raise ValueError(f"bad {x}")
        logging.getLogger("treerag.test").warning("ok %d", x)
        return x

    with pytest.raises(ValueError, match="bad 3"):
        ordered_map(work, range(40), max_workers=4)
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[:3] == ["ok 0", "ok 1", "ok 2"] and "ok 4" not in msgs
    assert len(started) < 40  # items not started when the error came are never run


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_throttle_burst_of_429_pauses_once_and_halves_the_limit():
    clock = FakeClock()
    th = Throttle(8, backoff_s=1.0, backoff_max_s=30.0, clock=clock)
    slots = []
    for _ in range(4):  # four requests in flight when the endpoint starts refusing
        with th.slot() as s:
            slots.append(s)
    clock.t += 0.5
    assert th.on_rate_limited(slots[0]) == 1.0
    assert th.limit == 4
    for s in slots[1:]:  # same burst: no doubling, no further halving
        th.on_rate_limited(s)
    assert th.limit == 4 and th.rate_limited == 4
    clock.t += 1.0
    with th.slot() as later:
        pass
    clock.t += 0.1
    assert th.on_rate_limited(later) == 2.0  # a new burst right after: the wait doubles
    assert th.limit == 2
    clock.t += 1.1
    assert th.on_rate_limited(later, retry_after=7.0) == pytest.approx(0.9)  # same burst: what is left
    th.on_success()
    th.on_success()
    assert th.limit == 3  # additive increase after `limit` successes


def test_throttle_blocks_new_requests_until_the_backoff_ends():
    th = Throttle(4, backoff_s=0.3, backoff_max_s=30.0)
    with th.slot() as s:
        pass
    th.on_rate_limited(s)
    t0 = time.monotonic()
    with th.slot():
        waited = time.monotonic() - t0
    assert waited >= 0.25  # a lower bound only: a busy machine may wait longer, never less


def test_throttle_never_exceeds_its_limit():
    th = Throttle(3, backoff_s=0.1, backoff_max_s=1.0)

    def work(_: int) -> None:
        with th.slot():
            time.sleep(0.02)

    ordered_map(work, range(30), max_workers=10)
    assert th.max_in_flight == 3
