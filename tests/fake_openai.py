"""A fake OpenAI-compatible endpoint on a loopback port, for tests and benchmarks.

- Every request waits `latency_s` (like a remote model), concurrently: one thread per
  connection, so N requests in flight take ~latency, not N x latency.
- `rate_limit_every=k` answers every k-th chat/embeddings request with HTTP 429
  (and `Retry-After: retry_after_s` when that is set); `rate_limit_rps=r` is a quota
  like a hosted API's: a token bucket of r requests per second (burst r), a request
  that finds it empty gets HTTP 429.
- Chat replies are a deterministic function of the request (messages and seed): an
  answer JSON citing the first `[ref_id=...]` block of the prompt with one of its numbers,
  so a run's output does not depend on timing, retries or the order requests arrive in.
- Embeddings are deterministic unit vectors of `dim` derived from each input's hash.
- `log` records (start, end, status, path) of every request; `max_in_flight` the most
  requests that were being served at once.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


@dataclass
class FakeConfig:
    latency_s: float = 0.0
    rate_limit_every: int = 0  # 0 = never; k = every k-th POST gets HTTP 429
    retry_after_s: float | None = None
    rate_limit_rps: float = 0.0  # 0 = no quota
    dim: int = 8
    max_request_chars: int = 0  # 0 = no limit; a chat request longer than this gets llama.cpp's HTTP 400


@dataclass
class RequestRecord:
    start: float
    end: float
    status: int
    path: str


@dataclass
class FakeState:
    config: FakeConfig
    log: list[RequestRecord] = field(default_factory=list)
    posts: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    tokens: float = -1.0  # the quota's bucket (-1: not started)
    refilled_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def over_quota(self) -> bool:
        """Take one token from the bucket (call with the lock held); True when it was empty."""
        rps = self.config.rate_limit_rps
        if not rps:
            return False
        now = time.monotonic()
        if self.tokens < 0:
            self.tokens, self.refilled_at = rps, now
        self.tokens = min(rps, self.tokens + (now - self.refilled_at) * rps)
        self.refilled_at = now
        if self.tokens < 1:
            return True
        self.tokens -= 1
        return False


_REF = re.compile(r"\[ref_id=([^\]]+)\]([^\[]*)")
_NUM = re.compile(r"\d+(?:\.\d+)?")


def chat_reply(body: dict[str, Any]) -> str:
    """The deterministic reply to one chat request."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    h = int(hashlib.sha256(f"{text}\x00{body.get('seed')}".encode()).hexdigest(), 16)
    blocks = _REF.findall(text)
    if "search queries" in text or '"queries"' in text:  # the planner
        return json.dumps({"queries": [f"query {h % 97}", f"keywords {h % 89}"]})
    if not blocks:
        return json.dumps({"explanation": "is_blank", "answer": "is_blank", "answer_value": "is_blank",
                           "ref_id": []})
    doc, passage = blocks[h % min(len(blocks), 2)]
    numbers = _NUM.findall(passage) or ["1"]
    value = numbers[h % len(numbers)]
    return json.dumps({"explanation": passage.strip()[:80], "answer": f"{value}", "answer_value": value,
                       "ref_id": [doc.strip()]})


def embedding(text: str, dim: int) -> list[float]:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).standard_normal(dim)
    return (v / np.linalg.norm(v)).round(6).tolist()


def _handler(state: FakeState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stall

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

        def do_POST(self) -> None:
            start = time.monotonic()
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            cfg = state.config
            with state.lock:
                state.posts += 1
                n = state.posts
                limited = state.over_quota() or bool(cfg.rate_limit_every and n % cfg.rate_limit_every == 0)
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            status = 200
            try:
                if not limited:  # a refusal comes at once, as from a hosted API's rate limiter
                    time.sleep(cfg.latency_s)
                if limited:
                    status = 429
                    headers = {} if cfg.retry_after_s is None else {"Retry-After": f"{cfg.retry_after_s:g}"}
                    self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}}, headers)
                elif cfg.max_request_chars and not self.path.endswith("/embeddings") and \
                        sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) > cfg.max_request_chars:
                    status = 400  # what llama.cpp's server answers a prompt longer than its context
                    self._send(400, {"error": {"code": 400, "type": "exceed_context_size_error",
                                               "message": "the request exceeds the available context size"}})
                elif self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i, "embedding": embedding(t, cfg.dim)}
                            for i, t in enumerate(inputs)]
                    self._send(200, {"object": "list", "data": data, "model": body["model"],
                                     "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})
                else:
                    reply = {"id": f"c{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": chat_reply(body)}}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                    self._send(200, reply)
            finally:
                with state.lock:
                    state.in_flight -= 1
                    state.log.append(RequestRecord(start, time.monotonic(), status, self.path))

    return Handler


class FakeOpenAI:
    """`with FakeOpenAI(FakeConfig(latency_s=0.5)) as fake: ... fake.base_url ...`"""

    def __init__(self, config: FakeConfig | None = None) -> None:
        self.state = FakeState(config or FakeConfig())
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self._server.daemon_threads = True
        self._server.request_queue_size = 128
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def log(self) -> list[RequestRecord]:
        with self.state.lock:
            return list(self.state.log)
