"""llm.cache_ram_mib: the embedded server's RAM for saved prompt states is bounded by params."""
from __future__ import annotations

import sys
import types

import pytest

from stages.core.common.params import ParamError, section
from stages.core.llm import server as server_mod
from stages.core.llm.params import LLMParams


class _FakeServer:
    """Stands in for xllamacpp.Server: records the params it was started with."""

    started: list = []

    def __init__(self, params) -> None:
        type(self).started.append(params)
        self.listening_address = "http://127.0.0.1:1"


class _Params:
    """A stand-in for xllamacpp.CommonParams: plain attributes, nested cpu params."""

    def __init__(self) -> None:
        self.model = types.SimpleNamespace(path="")
        self.cpuparams = types.SimpleNamespace(n_threads=0)
        self.cpuparams_batch = types.SimpleNamespace(n_threads=0)
        self.cache_ram_mib = 8192  # llama.cpp's default


@pytest.fixture
def fake_xllamacpp(monkeypatch, tmp_path):
    _FakeServer.started = []
    monkeypatch.setitem(sys.modules, "xllamacpp", types.SimpleNamespace(CommonParams=_Params, Server=_FakeServer))
    monkeypatch.setattr(server_mod, "ensure_model", lambda name: tmp_path / f"{name}.gguf")
    return _FakeServer


@pytest.mark.parametrize("cap", [0, 256, 1024])
def test_embedded_server_gets_the_cap(fake_xllamacpp, cap):
    s = server_mod.EmbeddedServer("qwen2.5-coder-0.5b", n_ctx=4096, threads=2, slots=1, cache_ram_mib=cap)
    assert s.base_url == "http://127.0.0.1:1/v1"
    (p,) = fake_xllamacpp.started
    assert p.cache_ram_mib == cap  # not llama.cpp's 8192
    assert p.n_ctx == 4096


def test_session_passes_the_param_to_the_server(fake_xllamacpp, monkeypatch, tmp_path):
    from stages.core.llm import session as session_mod

    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("stages.core.llm.weights.ensure_model", lambda name: tmp_path / f"{name}.gguf")
    params = section(LLMParams, "llm", {"llm": {"cache_ram_mib": 300}})
    with session_mod.llm_session(params) as client:
        client._openai()  # the embedded server starts on the client's first use
    assert [p.cache_ram_mib for p in fake_xllamacpp.started] == [300]


def test_negative_cap_names_the_param():
    with pytest.raises(ParamError, match="llm.cache_ram_mib"):
        section(LLMParams, "llm", {"llm": {"cache_ram_mib": -1}})
