"""The engine params: `engine: local | ray` and, for ray, `ray.address`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from stages.core.common.params import ParamError, section

ENGINES = ("local", "ray")
_ADDRESS = re.compile(r"^(auto|(ray://)?[A-Za-z0-9_.\-]+:\d{1,5})$")


@dataclass(frozen=True)
class RayParams:
    """``address``: ``auto`` (the cluster `ray start` runs on this node, or RAY_ADDRESS), ``host:port`` (a
    head's GCS), ``ray://host:port`` (Ray Client), or empty: start a Ray instance on this machine for the run."""

    address: str = ""

    def validate(self) -> None:
        if self.address and not _ADDRESS.match(self.address):
            raise ParamError(f"params.yaml: ray.address={self.address!r} is not auto, host:port, ray://host:port "
                             "or empty (start a local Ray instance)")


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
