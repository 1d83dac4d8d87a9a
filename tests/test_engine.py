"""The engine params and the local engine (no Ray): bad values are one error naming the key; `engine: local`
imports no Ray anywhere in the stages that can run on it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stages.core.common.params import ParamError
from stages.core.engine.local import LocalEngine, chunks, open_engine
from stages.core.engine.params import engine_params

ROOT = Path(__file__).resolve().parents[1]


def test_engine_params_defaults_and_errors() -> None:
    ep = engine_params({})
    assert ep.kind == "local" and ep.ray.address == ""
    assert engine_params({"engine": "ray", "ray": {"address": "127.0.0.1:6379"}}).ray.address == "127.0.0.1:6379"
    for ok in ("auto", "ray://head.example:10001", "head-1:6379"):
        assert engine_params({"ray": {"address": ok}}).ray.address == ok
    with pytest.raises(ParamError, match="engine='spark' is not allowed"):
        engine_params({"engine": "spark"})
    with pytest.raises(ParamError, match="ray.address='http://x' is not auto"):
        engine_params({"ray": {"address": "http://x"}})
    with pytest.raises(ParamError, match=r"unknown parameter\(s\) ray.adress"):
        engine_params({"ray": {"adress": "auto"}})


def test_local_engine_maps_in_order_and_chunks_keep_order() -> None:
    seen: list[int] = []
    assert LocalEngine().map(lambda x: x * x, [3, 1, 2], seen.append) == [9, 1, 4] == seen
    assert chunks(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert chunks([1, 2], 5) == [[1], [2]] and chunks([], 4) == []
    with open_engine({"engine": "local"}) as engine:
        assert engine.kind == "local"


def test_local_engine_imports_no_ray() -> None:
    code = ("import sys; import stages.extract, stages.build_tree, stages.embed, stages.retrieve, stages.answer; "
            "from stages.core.engine.local import open_engine\n"
            "with open_engine({}) as e: pass\n"
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


def test_local_pool_holds_one_object_per_process_and_maps_in_order() -> None:
    from functools import partial

    with open_engine({"engine": "local"}) as engine:
        pool = engine.pool(partial(list, ["a", "b", "c"]), size=2)
        assert pool.size == 2 and pool.attr("__len__")() == 3
        seen: list[int] = []
        assert pool.map("index", ["c", "a", "b", "a"], seen.append) == [2, 0, 1, 0] == seen
        with pytest.raises(ValueError, match="'z' is not in list"):  # the object's own error, not a hang
            pool.map("index", ["a", "z"])
    assert not engine._pools  # the engine stopped its pool on leaving


def test_local_pool_whose_object_cannot_be_built_names_the_pool() -> None:
    from functools import partial

    with open_engine({"engine": "local"}) as engine:
        pool = engine.pool(partial(int, "not a number"), size=1)
        with pytest.raises(RuntimeError, match="engine local: a process of the pool died or could not build"):
            pool.map("bit_length", [1])
