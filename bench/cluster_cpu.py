"""CPU seconds a Ray cluster of tests/ray_cluster.py used while a command ran, for the benchmarks.

A job's task and actor workers are children of a raylet and exit when the job (the stage) ends. The raylet
reaps them without their CPU reaching its own children's count (/proc/<raylet>/stat cutime stays 0, checked
with a job burning 6 CPU s), so an exited worker's CPU is only known from what was read while it lived.
`follow` therefore reads /proc/<pid>/stat of every process under the cluster every `interval` seconds
(children found through /proc/<pid>/task/<tid>/children, cheap enough to poll), keyed by (pid, start time)
so a reused pid is not mistaken for the old process. What a worker used in its last interval before exiting
is missed: `result()` gives that bound (`unseen_max_s`: exited processes times the interval).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
INTERVAL_S = 0.2  # short against a worker's life (seconds to minutes), long against a /proc walk (< 5 ms)


def _stat(pid: int) -> tuple[int, int] | None:
    """(start time, user + system ticks) of a live process, or None."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[19]), int(f[11]) + int(f[12])
    except (OSError, IndexError, ValueError):
        return None


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            out |= {int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()}
    except OSError:
        pass
    return out


class ClusterCpu:
    """CPU ticks of a cluster's processes from construction to the last `sample`."""

    def __init__(self, cluster: Any | None, interval: float = INTERVAL_S) -> None:
        self.cluster = cluster
        self.interval = interval
        self.roots: set[int] = set(cluster.pids()) if cluster else set()
        self.before = self._read()
        self.seen = dict(self.before)
        self.alive = set(self.before)

    def _read(self) -> dict[tuple[int, int], int]:
        todo, found, out = list(self.roots), set(), {}
        while todo:
            p = todo.pop()
            if p in found:
                continue
            found.add(p)
            s = _stat(p)
            if s is not None:
                out[(p, s[0])] = s[1]
                todo += _children(p)
        return out

    def sample(self) -> None:
        now = self._read()
        self.seen.update(now)
        self.alive = set(now)

    def follow(self, pid: int) -> tuple[int, Any]:
        """Sample until child ``pid`` exits; its wait status and resource usage (os.wait4)."""
        while True:
            done, status, ru = os.wait4(pid, os.WNOHANG)
            self.sample()
            if done:
                if self.cluster:
                    self.roots = set(self.cluster.pids())  # roots started during the command, if any
                    self.sample()
                return status, ru
            time.sleep(self.interval)

    def result(self) -> dict[str, float]:
        used = sum(t - self.before.get(k, 0) for k, t in self.seen.items())
        exited = [k for k in self.seen if k not in self.alive]
        return {"cluster_cpu_s": round(used / TICK, 1),
                "cluster_exited_processes": len(exited),
                "cluster_cpu_unseen_max_s": round(len(exited) * self.interval, 1)}
