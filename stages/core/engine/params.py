"""The engine params: `engine: local | ray` and, for ray, `ray.address`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from stages.core.common.params import ParamError, section

ENGINES = ("local", "ray")
_ADDRESS = re.compile(r"^(auto|(ray://)?[A-Za-z0-9_.\-]+:\d{1,5})$")
_STORE = re.compile(r"^s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/[^\s]*)?$")


@dataclass(frozen=True)
class RayParams:
    """``address``: ``auto`` (the cluster `ray start` runs on this node, or RAY_ADDRESS), ``host:port`` (a
    head's GCS), ``ray://host:port`` (Ray Client), or empty: start a Ray instance on this machine for the run.
    ``shared_store``: empty (every node reads the driver's paths: one machine or a shared file system) or
    ``s3://bucket/prefix``, where the driver puts the inputs its workers read (stages/core/engine/shared_store.py)."""

    address: str = ""
    shared_store: str = ""

    def validate(self) -> None:
        if self.address and not _ADDRESS.match(self.address):
            raise ParamError(f"params.yaml: ray.address={self.address!r} is not auto, host:port, ray://host:port "
                             "or empty (start a local Ray instance)")
        if self.shared_store and not _STORE.match(self.shared_store):
            raise ParamError(f"params.yaml: ray.shared_store={self.shared_store!r} is not s3://bucket/prefix or "
                             "empty (the nodes share the driver's paths)")


@dataclass(frozen=True)
class EngineParams:
    kind: Literal["local", "ray"] = "local"
    ray: RayParams = field(default_factory=RayParams)


def engine_params(params: dict[str, Any]) -> EngineParams:
    """The top-level `engine` key and the `ray:` section (checked even when the engine is local)."""
    kind = params.get("engine", EngineParams.kind)
    if kind not in ENGINES:
        raise ParamError(f"params.yaml: engine={kind!r} is not allowed; use one of: "
                         + ", ".join(repr(e) for e in ENGINES))
    return EngineParams(kind, section(RayParams, "ray", params))
