"""Artifact sharing through S3: a real S3-compatible server (moto's, on a loopback port), the
DVC remote configured with credentials from the environment only, and the team round trip
of README "Team: sharing artifacts": `dvc repro` + push from one clone; a fresh clone pulls
and `dvc repro` runs no stage, with the same submission sha256 (bench/teamwork_roundtrip.sh);
then an experiment travels with `dvc exp push` / `dvc exp pull`.

The tiny project's LLM and embedder are a fake OpenAI-compatible endpoint (tests/fake_openai.py),
so no model is loaded and the run stays cheap; every stage (extract ... score) and DVC are real.
Needs the `test` extra (dvc-s3, moto[server]); skipped only where they are not installed.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("dvc_s3", reason="dvc-s3 not installed (pip install -e '.[test]')")
boto3 = pytest.importorskip("boto3", reason="boto3 not installed (pip install -e '.[test]')")
moto_server = pytest.importorskip("moto.moto_server.threaded_moto_server",
                                  reason="moto[server] not installed (pip install -e '.[test]')")

from fake_openai import FakeConfig, FakeOpenAI  # noqa: E402
from tiny_project import ROOT, dvc, make_project  # noqa: E402

BUCKET = "treerag-team"
KEY_ID = "AKIATREERAGTEST0001"
SECRET = "treerag-test-secret-never-in-config"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
          "GIT_COMMITTER_EMAIL": "t@example.org"}


def git(cwd: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def identify(repo: Path) -> None:
    """A committer identity in the repository's own config (DVC's git backends read config, not env)."""
    git(repo, "config", "user.name", "treerag test")
    git(repo, "config", "user.email", "test@example.org")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def s3(monkeypatch, tmp_path):
    """An S3 endpoint on 127.0.0.1 with one bucket; credentials only in the environment."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for k, v in {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
                 "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                 "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"), **GIT_ID}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield endpoint, client
    server.stop()


def test_push_fresh_clone_pull_repro_runs_nothing_and_exp_push_pull(s3, tmp_path, monkeypatch):
    endpoint, client = s3
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenAI(FakeConfig(latency_s=0.02)) as fake:
        repo = make_project(tmp_path, name="origin")
        params = yaml.safe_load((repo / "params.yaml").read_text())
        params["llm"].update(base_url=fake.base_url, model="fake", max_concurrency=4)
        params["embed"].update(base_url=fake.base_url, model="fake-embed")
        params["extract"]["workers"] = 1  # no worker processes to spawn for three files
        (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        git(repo, "init", "-q", "-b", "main")
        identify(repo)
        dvc(repo, "init", "-q")
        dvc(repo, "config", "core.analytics", "false")
        dvc(repo, "remote", "add", "-d", "team", f"s3://{BUCKET}/treerag")
        dvc(repo, "remote", "modify", "team", "endpointurl", endpoint)  # an address, not a secret
        config = (repo / ".dvc" / "config").read_text()
        assert endpoint in config and SECRET not in config and KEY_ID not in config
        dvc(repo, "repro")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "pipeline run")

        env = {**os.environ, "DVC": str(Path(sys.executable).parent / "dvc"),
               "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        clone = tmp_path / "clone"
        r = subprocess.run(["bash", str(ROOT / "bench" / "teamwork_roundtrip.sh"), str(repo), str(clone)], env=env,
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        assert "PASS: push -> clone -> pull -> repro ran no stage" in r.stdout
        assert sha256(clone / "submissions" / "submission.csv") == sha256(repo / "submissions" / "submission.csv")
        stored = client.list_objects_v2(Bucket=BUCKET, Prefix="treerag/")
        assert stored["KeyCount"] > 10  # the outputs really live in the bucket

        # an experiment run in the clone travels to a teammate through git (refs) and S3 (outputs)
        identify(clone)
        dvc(clone, "exp", "run", "-n", "one-member", "-S", "ensemble.n=1")
        exp_sub = sha256(clone / "submissions" / "submission.csv")
        dvc(clone, "exp", "push", "origin", "one-member")
        mate = tmp_path / "mate"
        git(tmp_path, "clone", "-q", str(repo), str(mate))
        identify(mate)
        dvc(mate, "exp", "pull", "origin", "one-member")
        dvc(mate, "exp", "apply", "one-member")
        dvc(mate, "pull")
        assert sha256(mate / "submissions" / "submission.csv") == exp_sub
        assert "ensemble.n" in dvc(mate, "params", "diff", "HEAD")
