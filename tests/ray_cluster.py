"""A real Ray cluster of one-CPU nodes on this machine, on loopback only, for tests and benchmarks.

`ray start --head --node-ip-address=127.0.0.1 --port=0` (Ray picks a free GCS port, read back from the temp
folder's ray_current_cluster), then `ray start --address=127.0.0.1:PORT --node-ip-address=127.0.0.1` per extra
node, all with their own --temp-dir, no dashboard and no usage stats. The head runs the Ray Client server
(`client_address`, ray://127.0.0.1:PORT) on a port the kernel just handed out: with `ray[client]` installed
`ray start --head` starts one anyway, on 10001 unless told, which two clusters on one machine would share. Ray
2.60 swaps a loopback node address for the machine's own one (services.resolve_ip_for_localhost) and then
listens on every interface; with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 the head keeps 127.0.0.1, but `ray start`
refuses that setting for a worker node, so worker nodes run `ray start` with that one function made to keep
the address: every Ray server then listens on 127.0.0.1 (`listening()` checks it). `stop()` ends the processes
this cluster started (the ones whose command line names its temp folder or, for the client server, its GCS
address, and their children), never another Ray on the machine.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# RAY_AUTH_MODE pinned: left unset, `ray start --head` turns token auth on when ~/.ray/auth_token exists (any
# earlier local ray.init() writes one) while `ray start --address` stays off, and the worker node is refused.
HEAD_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
KEEP_LOOPBACK = ("import sys, ray._private.services as s; s.resolve_ip_for_localhost = lambda host: host; "
                 "from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()")


def _kernel_port() -> int:
    """A loopback port the kernel just handed out (from its ephemeral range, above Ray's worker ports)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes() -> dict[int, tuple[int, str]]:
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out[int(d)] = (ppid, cmd)
    return out


class RayCluster:
    def __init__(self, temp_dir: Path, cpus_per_node: int = 1) -> None:
        self.temp_dir = temp_dir.resolve()
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        self.cpus = cpus_per_node
        self.address = ""
        self.client_address = ""
        self.log = ""

    def _ray(self, *args: str, worker: bool = False) -> None:
        env = {**os.environ, **HEAD_ENV}
        if worker:
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
        cmd = [sys.executable, "-c", KEEP_LOOPBACK] if worker else [str(Path(sys.executable).parent / "ray")]
        r = subprocess.run([*cmd, "start", *args, f"--num-cpus={self.cpus}", f"--temp-dir={self.temp_dir}",
                            "--node-ip-address=127.0.0.1", "--disable-usage-stats"], cwd=self.temp_dir, env=env,
                           capture_output=True, text=True, timeout=180)
        self.log += r.stdout + r.stderr
        assert r.returncode == 0, self.log[-3000:]

    def start(self, nodes: int = 2) -> str:
        client_port = _kernel_port()
        self._ray("--head", "--port=0", "--include-dashboard=false", f"--ray-client-server-port={client_port}")
        self.client_address = f"ray://127.0.0.1:{client_port}"
        self.address = (self.temp_dir / "ray_current_cluster").read_text().strip()
        assert self.address.startswith("127.0.0.1:"), self.address
        for _ in range(nodes - 1):
            self.add_node()
        return self.address

    def add_node(self) -> None:
        self._ray(f"--address={self.address}", worker=True)

    def pids(self, tag: str | None = None) -> set[int]:
        """This cluster's processes (command line names its temp folder, or ``tag``), with their children."""
        procs = _processes()
        tags = [tag] if tag else [str(self.temp_dir), f"ray.util.client.server --address={self.address} "]
        mine = {p for p, (_, cmd) in procs.items() if any(t in cmd for t in tags) and p != os.getpid()}
        while True:
            more = {p for p, (pp, _) in procs.items() if pp in mine} - mine
            if not more:
                return mine
            mine |= more

    def listening(self) -> list[str]:
        """Local addresses the cluster's processes listen on (from /proc/net/tcp{,6} and their sockets)."""
        inodes: set[str] = set()
        for p in self.pids():
            try:
                for fd in os.listdir(f"/proc/{p}/fd"):
                    link = os.readlink(f"/proc/{p}/fd/{fd}")
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
            except OSError:
                continue
        found = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:  # LISTEN
                    found.append(f[1])
        return found

    def kill_node(self, raylet_socket_suffix: str) -> None:
        """SIGKILL one node: the raylet whose socket name ends with the suffix (``raylet.1``) and its children."""
        for p in self.pids(f"sockets/{raylet_socket_suffix} "):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
            for p in self.pids():
                try:
                    os.kill(p, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self.pids():
                time.sleep(0.2)


def is_loopback(hex_addr: str) -> bool:
    """A /proc/net/tcp local address (hex IP:port) on 127.0.0.0/8 or ::1 / ::ffff:127.x."""
    ip = hex_addr.split(":")[0]
    if len(ip) == 8:
        return ip[-2:] == "7F"  # little-endian: 127 is the last byte
    return ip == "00000000000000000000000001000000" or (ip[:24] == "0000000000000000FFFF0000" and ip[-2:] == "7F")
