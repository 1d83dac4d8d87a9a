"""Kill a worker node of a two-node Ray cluster in the middle of the answer stage (issue 46).

The tiny project (tests/tiny_project.py) with the fake OpenAI-compatible LLM endpoint (tests/fake_openai.py,
`--latency` seconds per call, so the answer stage runs long enough to be interrupted) is run twice:
`engine: local` for reference, then `engine: ray` on two one-CPU nodes on 127.0.0.1 (tests/ray_cluster.py);
once the Ray run's answer stage has made `--after` LLM calls, the worker node (its raylet and every process
under it) is SIGKILLed. Prints the calls each run paid, whether the submissions are equal, and the stage's
log line about the lost node; writes bench/results/ray_node_kill.json.

    python bench/ray_node_kill.py [--latency 1.0] [--after 2]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fake_openai import FakeConfig, FakeOpenAI  # noqa: E402
from ray_cluster import RayCluster  # noqa: E402
from tiny_project import dvc, make_project  # noqa: E402


def configure(proj: Path, url: str, **top: object) -> None:
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["llm"].update(base_url=url, model="fake", max_concurrency=2)
    params["embed"].update(backend="torch")
    params["extract"]["workers"] = 1
    params.update(top)
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def chat_calls(fake: FakeOpenAI) -> int:
    return sum(r.path.endswith("/chat/completions") for r in fake.log)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--after", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="nodekill"))
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    with FakeOpenAI(FakeConfig(latency_s=args.latency)) as fake:
        local = make_project(tmp, name="local")
        configure(local, fake.base_url)
        os.environ["TREERAG_CACHE_DIR"] = str(tmp / "cache-local")
        dvc(local, "init", "--no-scm", "-q")
        dvc(local, "repro")
        local_calls = chat_calls(fake)
        try:
            address = cluster.start(nodes=2)
            on_ray = make_project(tmp, name="on_ray")
            configure(on_ray, fake.base_url, engine="ray", ray={"address": address})
            os.environ["TREERAG_CACHE_DIR"] = env["TREERAG_CACHE_DIR"] = str(tmp / "cache-ray")
            dvc(on_ray, "init", "--no-scm", "-q")
            before = chat_calls(fake)
            dvc(on_ray, "repro", "plan")  # plan's calls (n_queries 2) come before the answer stage's
            plan_calls = chat_calls(fake) - before
            dvc(on_ray, "repro", "retrieve")
            start = chat_calls(fake)
            t0 = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-m", "dvc", "repro"], cwd=on_ray, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            while chat_calls(fake) - start < args.after and proc.poll() is None:
                time.sleep(0.05)
            killed_at = chat_calls(fake) - start
            cluster.kill_node("raylet.1")
            kill_s = time.monotonic() - t0
            out, _ = proc.communicate(timeout=1200)
            wall = time.monotonic() - t0
        finally:
            cluster.stop()
            shutil.rmtree(cluster.temp_dir, ignore_errors=True)
        ray_calls = plan_calls + chat_calls(fake) - start
    lost = [ln for ln in out.splitlines() if "node(s) lost" in ln or "actor died" in ln]
    result = {"latency_s": args.latency, "killed_after_calls": killed_at, "kill_at_s": round(kill_s, 1),
              "rc": proc.returncode, "answer_vote_score_wall_s": round(wall, 1), "local_calls": local_calls,
              "ray_calls": ray_calls, "calls_paid_twice": ray_calls - local_calls,
              "same_submission": proc.returncode == 0 and sha(local / "submissions/submission.csv")
              == sha(on_ray / "submissions/submission.csv"), "log": lost}
    print(json.dumps(result, indent=1))
    if proc.returncode:
        print(out[-4000:])
    (ROOT / "bench" / "results" / "ray_node_kill.json").write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if result["same_submission"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
