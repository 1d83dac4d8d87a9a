"""Actors for the `ray` engine: a pool whose actors each hold one object built once (an embedder, a
retriever, an LLM client), fed items as they free up; and one object on the driver's node that workers
call (the response cache, so that every answer lands in the file the driver reads).

A pool actor that dies (its node went away) loses only the item it held: the item goes to another actor,
and the run fails only when no actor is left.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

log = logging.getLogger("treerag.engine")


@ray.remote(max_restarts=0)
class Holder:
    def __init__(self, root: str, factory: Callable[[], Any]) -> None:
        if root:  # empty: the node does not share the driver's paths (ray.shared_store)
            os.chdir(root)
        self.obj = factory()

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.obj, method)(*args)

    def attr(self, name: str) -> Any:
        return getattr(self.obj, name)


class Pool:
    def __init__(self, engine: Any, factory: Callable[[], Any], per_node: bool, limit: int | None = None) -> None:
        options: list[dict[str, Any]] = []
        for n in engine.nodes():
            pin = NodeAffinitySchedulingStrategy(n.node_id, soft=False)
            options += [{"num_cpus": n.cpus, "scheduling_strategy": pin}] if per_node else \
                [{"num_cpus": 1, "scheduling_strategy": pin}] * n.cpus
        self.actors = [Holder.options(**o).remote(engine.worker_root, factory) for o in options[:limit]]
        self.per_node = per_node
        self.lost = 0

    @property
    def size(self) -> int:
        return len(self.actors)

    def attr(self, name: str) -> Any:
        return ray.get(self.actors[0].attr.remote(name))

    def each(self, method: str, *args: Any) -> list[Any]:
        """``method(*args)`` on every live actor (e.g. their stats at the end)."""
        return ray.get([a.call.remote(method, *args) for a in self.actors])

    def map(self, method: str, items: Sequence[Any], on_done: Callable[[Any], None] | None = None) -> list[Any]:
        """``obj.method(item)`` for every item, each on the next free actor; results in item order."""
        todo = list(range(len(items)))[::-1]
        out: list[Any] = [None] * len(items)
        running: dict[Any, tuple[Any, int]] = {}
        idle = list(self.actors)
        while todo or running:
            while todo and idle:
                actor, i = idle.pop(0), todo.pop()
                running[actor.call.remote(method, items[i])] = (actor, i)
            if not running:
                raise RuntimeError("engine ray: every actor of the pool died; the run cannot go on")
            ready, _ = ray.wait(list(running), num_returns=1)
            actor, i = running.pop(ready[0])
            try:
                out[i] = ray.get(ready[0])
            except ray.exceptions.RayActorError as e:  # its node died: the item goes to another actor
                log.warning("engine ray: an actor died (%s); its item goes to another one", type(e).__name__)
                self.actors.remove(actor)
                self.lost += 1
                todo.append(i)
                continue
            idle.append(actor)
            if on_done is not None:
                on_done(out[i])
        return out


class RemoteObject:
    """``factory()`` held by an actor on the driver's node; `call(method, *args)` from anywhere in the cluster."""

    def __init__(self, engine: Any, factory: Callable[[], Any]) -> None:
        me = ray.get_runtime_context().get_node_id()
        self.actor = Holder.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(me, soft=False)
                                    ).remote(engine.root, factory)

    def call(self, method: str, *args: Any) -> Any:
        return ray.get(self.actor.call.remote(method, *args))
