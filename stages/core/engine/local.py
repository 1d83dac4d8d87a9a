"""The engine a stage runs its items on, and the local one: this process, today's code paths."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from stages.core.engine.params import engine_params


class Engine(Protocol):
    """`map(fn, items)`: ``[fn(x) for x in items]`` in item order, wherever it runs; `on_done(result)` after each."""

    kind: str

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_done: Callable[[Any], None] | None = None) -> list[Any]: ...


class LocalEngine:
    kind = "local"

    def __init__(self) -> None:
        self._pools: list[Any] = []

    def pool(self, factory: Callable[[], Any], size: int | None = None) -> Any:
        """``size`` processes on this machine (default one per CPU), each holding ``factory()`` (built once per
        process), stopped by `close()`."""
        from stages.core.engine.process_pool import ProcessPool

        self._pools.append(ProcessPool(factory, size or os.cpu_count() or 1))
        return self._pools[-1]

    def close(self) -> None:
        while self._pools:
            self._pools.pop().close()

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_done: Callable[[Any], None] | None = None) -> list[Any]:
        out = []
        for x in items:
            out.append(fn(x))
            if on_done is not None:
                on_done(out[-1])
        return out


def chunks(items: Sequence[Any], n: int) -> list[list[Any]]:
    """``items`` cut into at most ``n`` contiguous runs of near-equal length (order kept)."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return [c for c in out if c]


@contextmanager
def open_engine(params: dict[str, Any], env: Sequence[str] = ()) -> Iterator[Any]:
    """The engine the params name; `ray` connects (or starts a local instance) for the block. ``env``: names of
    environment variables the cluster's workers need (an API key's), passed to them with every TREERAG_* one."""
    ep = engine_params(params)
    if ep.kind == "local":
        local = LocalEngine()
        try:
            yield local
        finally:
            local.close()
        return
    from stages.core.engine.ray_engine import RayEngine

    engine = RayEngine(ep.ray, os.getcwd(), env)
    try:
        yield engine
    finally:
        engine.close()
