"""The LLM client: persistent cache, retries on 5xx, clear errors, weight checks."""
from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stages.core.llm import weights as models
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLMError
from stages.core.llm.session import llm_session


class FlakyHandler(BaseHTTPRequestHandler):
    """An OpenAI-style endpoint that fails the first chat request with HTTP 503."""

    calls = 0

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"data": [{"id": "fake"}]}')

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls += 1
        if type(self).calls == 1:
            self.send_response(503)
            self.end_headers()
            return
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": f"seed={body.get('seed')}"}}],
                 "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake_server():
    FlakyHandler.calls = 0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FlakyHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_retry_then_cache_hit_across_sessions(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    p = LLMParams(base_url=fake_server, model="fake", max_attempts=3)
    msgs = [{"role": "user", "content": "hi"}]
    with llm_session(p) as llm:
        c = llm.complete(msgs, temperature=0.7, seed=5, max_tokens=10)
        assert c.text == "seed=5" and not c.cached
    assert FlakyHandler.calls == 2  # one 503, one success
    with llm_session(p) as llm:  # a new process would see the same SQLite file
        c = llm.complete(msgs, temperature=0.7, seed=5, max_tokens=10)
        assert c.cached and c.text == "seed=5"
        c2 = llm.complete(msgs, temperature=0.7, seed=6, max_tokens=10)
        assert not c2.cached and c2.text == "seed=6"
        assert (llm.stats.hits, llm.stats.misses) == (1, 1)
    assert FlakyHandler.calls == 3


def test_unreachable_base_url_is_one_clear_error(tmp_path, monkeypatch, refused_port):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    url = f"http://127.0.0.1:{refused_port}/v1"
    with pytest.raises(LLMError, match=re.escape(f"llm.base_url={url!r} is unreachable")):
        with llm_session(LLMParams(base_url=url)):
            pass


def test_missing_weight_package_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    fake = models.EmbeddedModel("fake", "fake.gguf", ("treerag_no_such_pkg_part1",), 10, "0" * 64)
    monkeypatch.setitem(models.EMBEDDED_MODELS, "fake", fake)
    with pytest.raises(models.ModelWeightsError, match="treerag-no-such-pkg-part1 is not installed"):
        models.ensure_model("fake")
    with pytest.raises(models.ModelWeightsError, match="not an embedded model"):
        models.ensure_model("gpt-9")


def test_parts_assemble_in_numeric_order_and_sha_is_checked(monkeypatch, tmp_path):
    import hashlib

    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    pkgs = []
    for i in (1, 2, 10):
        d = tmp_path / "site" / f"tr_fake_part{i}" / "data"
        d.mkdir(parents=True)
        (d.parent / "__init__.py").write_text("")
        (d / f"part{i:02d}.bin").write_bytes(f"<{i}>".encode())
        pkgs.append(f"tr_fake_part{i}")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    content = b"<1><2><10>"
    good = models.EmbeddedModel("f", "f.gguf", tuple(reversed(pkgs)), len(content), hashlib.sha256(content).hexdigest())
    monkeypatch.setitem(models.EMBEDDED_MODELS, "f", good)
    assert models.ensure_model("f").read_bytes() == content
    bad = models.EmbeddedModel("g", "g.gguf", tuple(pkgs), len(content), "f" * 64)
    monkeypatch.setitem(models.EMBEDDED_MODELS, "g", bad)
    with pytest.raises(models.ModelWeightsError, match="sha256"):
        models.ensure_model("g")
