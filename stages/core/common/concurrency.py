"""Run many independent calls at once and get the results as a sequential run would.

- `ordered_map(fn, items, max_workers, progress)` calls `fn` on every item from a pool of
  threads and returns the results in *item* order, whatever order they finish in. Log
  records that `fn` emits in a worker are held back and handed to the handlers in item
  order too, so a stage's log reads the same at any concurrency. The first failing item
  (in item order) raises, as it would sequentially; items not started by then are
  cancelled.
- `Throttle` is the shared gate of one endpoint: at most `limit` requests in flight and,
  after a rate-limit answer (HTTP 429), no request of the whole pool starts before the
  backoff ends. Each 429 burst halves `limit` (down to 1); every `limit` successes in a
  row raise it by one again, up to the configured maximum (additive increase,
  multiplicative decrease), so a pool settles at what the endpoint allows.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("treerag.concurrency")

# ------------------------------------------------------------------ ordered logs
_local = threading.local()  # .buffer: list of (handler, record) while a worker runs a task
_install_lock = threading.Lock()
_installed: list[tuple[logging.Handler, logging.Filter]] = []
_install_count = 0


class _HoldInWorker(logging.Filter):
    """On one handler: a record emitted by a worker thread is kept for later, not handled now."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        buffer = getattr(_local, "buffer", None)
        if buffer is None:
            return True
        buffer.append((self.handler, record))
        return False


def _all_handlers() -> list[logging.Handler]:
    loggers = [logging.getLogger()] + [lg for lg in logging.Logger.manager.loggerDict.values()
                                       if isinstance(lg, logging.Logger)]
    return list(dict.fromkeys(h for lg in loggers for h in lg.handlers))


@contextmanager
def _holding_worker_logs() -> Iterator[None]:
    """Install the hold filter on every handler for the duration (nesting-safe)."""
    global _install_count
    with _install_lock:
        if _install_count == 0:
            for h in _all_handlers():
                f = _HoldInWorker(h)
                h.addFilter(f)
                _installed.append((h, f))
        _install_count += 1
    try:
        yield
    finally:
        with _install_lock:
            _install_count -= 1
            if _install_count == 0:
                for h, f in _installed:
                    h.removeFilter(f)
                _installed.clear()


def _replay(buffer: list[tuple[logging.Handler, logging.LogRecord]]) -> None:
    for handler, record in buffer:
        handler.handle(record)


@dataclass
class _Task:
    result: object = None
    error: BaseException | None = None
    logs: list[tuple[logging.Handler, logging.LogRecord]] | None = None


def _run_held(fn: Callable[[T], R], item: T) -> _Task:
    task = _Task(logs=[])
    _local.buffer = task.logs
    try:
        task.result = fn(item)
    except BaseException as e:  # noqa: BLE001 - handed back to the caller in item order
        task.error = e
    finally:
        _local.buffer = None
    return task


def ordered_map(fn: Callable[[T], R], items: Sequence[T], max_workers: int,
                progress: Callable[[R], None] | None = None) -> list[R]:
    """`[fn(x) for x in items]` with up to `max_workers` calls at once, same order, same logs.

    `progress(result)` is called in the calling thread once per finished item (in finishing
    order, so a progress bar moves as work completes). With `max_workers <= 1` it is a plain
    loop in the calling thread.
    """
    items = list(items)
    if max_workers <= 1 or len(items) <= 1:
        out = []
        for x in items:
            r = fn(x)
            if progress is not None:
                progress(r)
            out.append(r)
        return out
    tasks: list[_Task | None] = [None] * len(items)
    released = 0  # items[:released] have had their logs handed on
    first_error: int | None = None
    with _holding_worker_logs(), ThreadPoolExecutor(max_workers=min(max_workers, len(items)),
                                                     thread_name_prefix="treerag") as pool:
        index_of: dict[Future[_Task], int] = {pool.submit(_run_held, fn, x): i for i, x in enumerate(items)}
        pending = set(index_of)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    if fut.cancelled():
                        continue
                    i = index_of[fut]
                    task = tasks[i] = fut.result()
                    if task.error is not None:
                        if first_error is None or i < first_error:
                            first_error = i
                        for other in pending:  # not started yet: never start; running ones finish
                            other.cancel()
                    elif progress is not None:
                        progress(task.result)  # type: ignore[arg-type]
                while released < len(items) and tasks[released] is not None and released != first_error:
                    _replay(tasks[released].logs or [])  # type: ignore[union-attr]
                    released += 1
        except BaseException:
            for other in pending:
                other.cancel()
            raise
    if first_error is not None:
        err = tasks[first_error]
        assert err is not None and err.error is not None
        _replay(err.logs or [])
        raise err.error
    return [t.result for t in tasks]  # type: ignore[union-attr,misc]


# ---------------------------------------------------------------------- throttle
@dataclass
class Slot:
    """One request's pass through the gate (its start time tells which backoff it saw)."""

    started: float


class Throttle:
    """At most `limit` requests in flight; after a 429 the whole pool waits, and `limit` halves."""

    def __init__(self, max_concurrency: int, backoff_s: float, backoff_max_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.max_concurrency = max_concurrency
        self.limit = max_concurrency
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._clock = clock
        self._cond = threading.Condition()
        self._in_flight = 0
        self._not_before = 0.0
        self._last_backoff_at = float("-inf")  # when the current backoff was decided
        self._streak = 0  # 429 bursts in a row (each burst doubles the next wait)
        self._ok = 0  # successes since the limit last changed
        self.rate_limited = 0  # 429 answers seen (for the stage's log)
        self.max_in_flight = 0  # the most requests ever in flight at once

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        """Wait for a free slot outside any backoff, then hold it for one request."""
        with self._cond:
            while True:
                now = self._clock()
                if now < self._not_before:
                    self._cond.wait(self._not_before - now)
                elif self._in_flight >= self.limit:
                    self._cond.wait()
                else:
                    break
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            s = Slot(self._clock())
        try:
            yield s
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def on_rate_limited(self, slot: Slot, retry_after: float | None = None) -> float:
        """A request that held `slot` got HTTP 429: pause everyone; returns the pause (s).

        Requests that started before the current backoff was decided belong to the same
        burst: they extend nothing and do not double the wait again."""
        with self._cond:
            self.rate_limited += 1
            now = self._clock()
            if slot.started < self._last_backoff_at:
                return max(0.0, self._not_before - now)
            self._streak += 1
            pause = retry_after if retry_after is not None else min(
                self.backoff_max_s, self.backoff_s * 2 ** (self._streak - 1))
            self._not_before = max(self._not_before, now + pause)
            self._last_backoff_at = now
            old, self.limit = self.limit, max(1, self.limit // 2)
            self._ok = 0
            self._cond.notify_all()
        log.warning("rate limited (HTTP 429): every request waits %.1fs; concurrency %d -> %d", pause, old,
                    self.limit)
        return pause

    def on_success(self) -> None:
        """A request succeeded: the 429 streak ends; after `limit` successes the limit grows by one."""
        with self._cond:
            self._streak = 0
            self._ok += 1
            if self.limit < self.max_concurrency and self._ok >= self.limit:
                self.limit += 1
                self._ok = 0
                self._cond.notify_all()
