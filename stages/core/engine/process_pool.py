"""The local engine's pool: processes on this machine that each hold one object built once (an embedder),
fed items as they free up; the same calls as the `ray` engine's actor pool (`size`, `attr`, `map`).

Processes are spawned (MuPDF, ONNX Runtime and torch are not fork-safe) and built by ``factory()`` in
each; a process that dies (killed, out of memory) or an object whose ``factory()`` fails ends the run
with one error naming the pool, not a hang.
"""
from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

_held: Any = None  # the object of this pool process


def _build(factory: Callable[[], Any]) -> None:
    global _held
    _held = factory()


def _call(method: str, *args: Any) -> Any:
    return getattr(_held, method)(*args)


def _attr(name: str) -> Any:
    return getattr(_held, name)


class ProcessPool:
    """``size`` processes, each holding ``factory()``; `close()` (or the engine's) stops them."""

    def __init__(self, factory: Callable[[], Any], size: int) -> None:
        self.size = max(1, size)
        self._ex = ProcessPoolExecutor(self.size, mp_context=mp.get_context("spawn"), initializer=_build,
                                       initargs=(factory,))

    def _result(self, future: Any) -> Any:
        try:
            return future.result()
        except BrokenProcessPool as e:
            raise RuntimeError("engine local: a process of the pool died or could not build its object "
                               f"(its error is printed above): {e}") from e

    def attr(self, name: str) -> Any:
        return self._result(self._ex.submit(_attr, name))

    def map(self, method: str, items: Sequence[Any], on_done: Callable[[Any], None] | None = None) -> list[Any]:
        """``obj.method(item)`` for every item, each on the next free process; results in item order."""
        futures = [self._ex.submit(_call, method, item) for item in items]
        out = []
        for f in futures:
            out.append(self._result(f))
            if on_done is not None:
                on_done(out[-1])
        return out

    def close(self) -> None:
        self._ex.shutdown(wait=True, cancel_futures=True)
