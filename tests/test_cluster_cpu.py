"""bench/cluster_cpu.py and the corpus rule of bench/ray_stages.py.

A Ray job's task workers exit with the job, and the raylet that reaps them does not add their CPU to its own
children's count: a reading taken only before and after the job sees almost nothing (the 200-page run's
extract once showed 1.5 CPU s for ~27 CPU s of parsing). `ClusterCpu.follow` must count them.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pymupdf
import pytest

pytest.importorskip("ray", reason="ray not installed (pip install -e '.[ray]')")

from bench.cluster_cpu import ClusterCpu  # noqa: E402
from bench.ray_stages import real_corpus  # noqa: E402
from ray_cluster import RayCluster  # noqa: E402

BURN_S = 1.5  # CPU seconds each task spends (process time, so load on the machine does not change it)
JOB = """
import ray, time
ray.init(address={address!r})
@ray.remote(num_cpus=1)
def burn(n):
    t = time.process_time()
    while time.process_time() - t < n:
        pass
    return time.process_time() - t
print(sum(ray.get([burn.remote({burn}) for _ in range(4)])))
"""


def test_cpu_of_task_workers_that_exit_with_the_job_is_counted():
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    try:
        address = cluster.start(nodes=2)
        cpu = ClusterCpu(cluster)
        proc = subprocess.Popen([sys.executable, "-c", JOB.format(address=address, burn=BURN_S)],
                                env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        status, _ = cpu.follow(proc.pid)
        burned = float(proc.stdout.read())
        assert os.waitstatus_to_exitcode(status) == 0
        r = cpu.result()
        # every burned second is seen, but for each exited worker's last sampling interval
        assert r["cluster_cpu_s"] + r["cluster_cpu_unseen_max_s"] >= burned >= 4 * BURN_S
        assert r["cluster_exited_processes"] >= 1  # the job's workers are gone: read while they lived
        assert r["cluster_cpu_s"] < burned + 30  # the cluster's own processes, not the whole machine
    finally:
        cluster.stop()


def make_pdf(path: Path, pages: int) -> None:
    doc = pymupdf.open()
    for i in range(pages):
        doc.new_page().insert_text((72, 72), f"{path.stem} page {i + 1}")
    doc.save(path)


def test_real_corpus_takes_the_first_files_by_name_that_reach_the_pages(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, pages in (("b", 2), ("a", 3), ("c", 4)):
        make_pdf(src / f"{name}.pdf", pages)
    for min_pages, want in ((4, ["a.pdf", "b.pdf"]), (3, ["a.pdf"]), (0, ["a.pdf", "b.pdf", "c.pdf"])):
        dest = tmp_path / f"dest{min_pages}"
        dest.mkdir()
        chosen = real_corpus(src, min_pages, dest)
        assert [c["file"] for c in chosen] == want
        assert sorted(p.name for p in dest.iterdir()) == want
        assert all((dest / f).resolve() == (src / f).resolve() for f in want)  # read in place
    dest = tmp_path / "too_many"
    dest.mkdir()
    with pytest.raises(SystemExit, match=r"9 pages, fewer than --min-pages 10"):
        real_corpus(src, 10, dest)
