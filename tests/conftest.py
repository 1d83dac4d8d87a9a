"""Make tests/ importable (shared helpers such as tiny_project) and keep the tests
independent of the machine's network settings."""
import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@pytest.fixture(autouse=True)
def _loopback_bypasses_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests talk to servers on 127.0.0.1 (fakes, the embedded llama.cpp server); a machine
    with HTTP(S)_PROXY/ALL_PROXY set and no NO_PROXY for loopback would send those requests to
    the proxy. Subprocesses (stages, dvc) inherit the patched environment."""
    hosts = [h.strip() for name in ("NO_PROXY", "no_proxy") for h in os.environ.get(name, "").split(",") if h.strip()]
    value = ",".join(dict.fromkeys([*hosts, *LOOPBACK]))
    monkeypatch.setenv("NO_PROXY", value)
    monkeypatch.setenv("no_proxy", value)


@pytest.fixture
def refused_port():
    """A loopback port on which a connection is refused: bound by this test (so no other process
    can listen there) but never listening. A fixed port (say 9) may be open on some machines."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture(scope="session", autouse=True)
def _one_onnx_export(tmp_path_factory: pytest.TempPathFactory):
    """The default embedder (embed.backend: onnx) exports MiniLM once per cache folder (~20 s);
    the end-to-end tests each use a private TREERAG_CACHE_DIR, so they share one export here
    (subprocesses such as dvc's stages inherit the variable)."""
    old = os.environ.get("TREERAG_ONNX_DIR")
    os.environ["TREERAG_ONNX_DIR"] = str(tmp_path_factory.mktemp("onnx"))
    yield
    if old is None:
        os.environ.pop("TREERAG_ONNX_DIR", None)
    else:
        os.environ["TREERAG_ONNX_DIR"] = old
