"""A real S3-compatible server for tests: moto's threaded server on a 127.0.0.1 port with one bucket, the
credentials only in the environment (never in a config file), and a record of the requests it served.

Needs the `test` extra (boto3, moto[server]); the tests that use it skip where they are not installed.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

KEY_ID = "AKIATREERAGTEST0001"
SECRET = "treerag-test-secret-never-in-config"


class S3Server:
    def __init__(self, endpoint: str, client: Any, log: Path) -> None:
        self.endpoint, self.client, self._log = endpoint, client, log

    def requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request served since the server started."""
        if not self._log.exists():
            return []
        rows = [json.loads(line) for line in self._log.read_text().splitlines() if line.strip()]
        return [(r["method"], r["url"].split("://", 1)[-1].split("/", 1)[-1].split("?")[0]) for r in rows]


@contextmanager
def s3_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bucket: str) -> Iterator[S3Server]:
    """The server with ``bucket``; AWS_* set for this test (AWS_ENDPOINT_URL too), no profile or config file."""
    boto3 = pytest.importorskip("boto3", reason="boto3 not installed (pip install -e '.[test]')")
    moto_server = pytest.importorskip("moto.moto_server.threaded_moto_server",
                                      reason="moto[server] not installed (pip install -e '.[test]')")
    from moto.moto_api import recorder

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for k, v in {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
                 "AWS_ENDPOINT_URL": endpoint, "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                 "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials")}.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(k, raising=False)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=bucket)
    log = tmp_path / "s3-requests.jsonl"
    monkeypatch.setattr(recorder, "_location", str(log))  # its file is named at import: this test's own instead
    recorder.reset_recording()
    recorder.start_recording()
    try:
        yield S3Server(endpoint, client, log)
    finally:
        recorder.stop_recording()
        server.stop()
