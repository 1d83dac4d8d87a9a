"""The `ray` engine: a stage's items as Ray tasks, or method calls on a pool of actors, on the cluster of
`ray.address`; results come back in item order, so artifacts are those of the local engine.

Every task and actor first changes into the driver's working directory (the repository root: artifacts,
params and the code are read from there, a shared path on a real cluster) and gets the driver's TREERAG_*
environment (the cache folder) plus the variables the stage names (an API key's). With `ray.shared_store`
(s3://..., nodes that do not share the driver's disk) they do not: the code travels as a Ray `py_modules`
package, the driver puts the inputs a stage's workers read in the store (`store`), and the workers get the
driver's AWS_* variables (credentials and endpoint come from the environment only); the actor on the
driver's node still works in the driver's folder.

A cluster on loopback (a 127.x address, or the local instance that an empty address starts) keeps Ray on
127.0.0.1: Ray otherwise swaps a loopback node address for the machine's own address and listens on every
interface.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stages.core.engine.params import RayParams

log = logging.getLogger("treerag.engine")


def _loopback(address: str) -> bool:
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    return not address or host == "localhost" or host.startswith("127.")


def _run_in(root: str, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    if root:  # empty: the node does not share the driver's paths (ray.shared_store)
        os.chdir(root)
    return [fn(x) for x in items]


@dataclass(frozen=True)
class NodeInfo:
    node_id: str
    cpus: int
    is_driver: bool


class RayEngine:
    kind = "ray"

    def __init__(self, params: RayParams, root: str, env: Sequence[str] = ()) -> None:
        if _loopback(params.address):
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when ray is imported
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray

        self.ray = ray
        self.root = root
        self.store = None
        runtime_env: dict[str, Any] = {}
        env_vars = {k: v for k, v in os.environ.items() if k.startswith("TREERAG_") or k in env}
        if params.shared_store:
            from stages.core.common import storage
            from stages.core.engine.shared_store import SharedStore

            self.store = SharedStore(params.shared_store)  # checked before Ray starts: a bad store fails fast
            env_vars.update({k: os.environ[k] for k in storage.AWS_ENV if k in os.environ})
            runtime_env["py_modules"] = [str(Path(root, "stages"))]  # the checkout's code, shipped by Ray
        else:
            env_vars["PYTHONPATH"] = root  # the workers import this checkout's stages package
        self.worker_root = "" if self.store else root
        kwargs: dict[str, Any] = {"include_dashboard": False} if not params.address else {}
        for attempt in (1, 2):  # Ray Client's per-connection server can die as it starts: one more try
            try:
                ray.init(address=params.address or None, runtime_env={"env_vars": env_vars, **runtime_env},
                         log_to_driver=False, logging_level=logging.WARNING, **kwargs)
                break
            except ConnectionError as e:
                if attempt == 2 or not params.address.startswith("ray://"):
                    raise
                log.warning("engine ray: connecting to %s failed (%s); trying once more", params.address, e)
        self._task = ray.remote(_run_in)
        log.info("engine ray: %d node(s), %d CPUs", len(self.nodes()), self.cpus())

    def nodes(self) -> list[NodeInfo]:
        """The cluster's live nodes with CPUs, the driver's first."""
        me = self.ray.get_runtime_context().get_node_id()
        found = [NodeInfo(n["NodeID"], int(n["Resources"].get("CPU", 0)), n["NodeID"] == me)
                 for n in self.ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) >= 1]
        return sorted(found, key=lambda n: (not n.is_driver, n.node_id))

    def cpus(self) -> int:
        return sum(n.cpus for n in self.nodes())

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callable[[Any], None] | None = None,
            per_task: int = 1) -> list[Any]:
        """One task per ``per_task`` items (one CPU each); results in item order, `on_done` as tasks finish."""
        ray = self.ray
        runs = [list(items[i:i + per_task]) for i in range(0, len(items), per_task)]
        refs = [self._task.options(num_cpus=1).remote(self.worker_root, fn, r) for r in runs]
        index = {ref: i for i, ref in enumerate(refs)}
        done: list[list[Any] | None] = [None] * len(refs)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                done[index[ref]] = res = ray.get(ref)
                for r in res if on_done is not None else ():
                    on_done(r)
        return [r for res in done for r in (res or [])]

    def pool(self, factory: Callable[[], Any], per_node: bool = False, limit: int | None = None) -> Any:
        """Actors holding ``factory()`` each (built once per actor): one per CPU, or one per node (all its CPUs);
        at most ``limit`` of them."""
        from stages.core.engine.ray_pool import Pool

        return Pool(self, factory, per_node, limit)

    def on_driver_node(self, factory: Callable[[], Any]) -> Any:
        """``factory()`` in an actor on the driver's node (no CPU reserved); calls on it go through `call`."""
        from stages.core.engine.ray_pool import RemoteObject

        return RemoteObject(self, factory)

    def close(self) -> None:
        self.ray.shutdown()


def assigned_cpus() -> int:
    """Inside a task or actor: the CPUs Ray gave it."""
    import ray

    return int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1))
