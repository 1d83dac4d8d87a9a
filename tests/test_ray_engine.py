"""`engine: ray` on a real two-node Ray cluster (two one-CPU nodes on 127.0.0.1, tests/ray_cluster.py):
`dvc repro` of the tiny project writes the artifacts and submission of `engine: local`, and every answer the
cluster's workers paid for is in the response cache the driver reads. On the same cluster (one start: CI
time), retrieve again through Ray Client (`ray://`) with `ray.shared_store` on an S3 server (moto's, on
127.0.0.1): the workers read the index and the tree from S3 (the server served their GETs; they run the
code Ray shipped, in no folder of the driver's) and write the contexts of `engine: local`.

The LLM is the fake OpenAI-compatible endpoint (tests/fake_openai.py); the embedder is the real local MiniLM
(torch), so the embed stage runs its actor pool. The answers' `latency_s` column is the one difference: it
records each fake call's own time. Needs the `ray` extra (scripts/setup.sh test installs it).
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

pytest.importorskip("ray", reason="ray not installed (pip install -e '.[ray]')")
pytest.importorskip("moto", reason="moto not installed (pip install -e '.[test]')")

from fake_openai import FakeConfig, FakeOpenAI  # noqa: E402
from ray_cluster import RayCluster, is_loopback  # noqa: E402
from s3_server import s3_server  # noqa: E402
from tiny_project import dvc, make_project  # noqa: E402

BUCKET = "treerag-cluster"
RETRIEVED = ("artifacts/retrieve/contexts.parquet", "artifacts/retrieve/retry_contexts.parquet")
TIMED = {"metrics/embed.json": {"seconds"}, "metrics/retrieval.json": {"ms_per_retrieval"}}


def configure(proj: Path, fake_url: str, **top: object) -> None:
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["llm"].update(base_url=fake_url, model="fake", max_concurrency=2)
    params["embed"].update(backend="torch")
    params["extract"]["workers"] = 1
    params.update(top)
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def chat_calls(fake: FakeOpenAI) -> int:
    return sum(r.path.endswith("/chat/completions") for r in fake.log)


def artifact_files(proj: Path) -> list[str]:
    """Every artifact file but the Lance table's own files (UUID-named and timestamped even between two local
    runs; the index stage runs in the driver either way): `lance_rows` compares what the table holds."""
    return sorted(str(p.relative_to(proj)) for p in (proj / "artifacts").rglob("*")
                  if p.is_file() and "artifacts/index/lance/" not in p.as_posix())


def lance_rows(proj: Path) -> object:
    import lancedb

    db = lancedb.connect(str(proj / "artifacts" / "index" / "lance"))
    return {name: db.open_table(name).to_arrow() for name in db.list_tables().tables}


def without_timing(path: Path) -> object:
    rel = path.as_posix()
    if rel.endswith(".json"):
        data = json.loads(path.read_text())
        return {k: v for k, v in data.items() if not any(rel.endswith(f) and k in keys for f, keys in TIMED.items())}
    return pl.read_parquet(path).drop("latency_s").to_dicts()


def where_workers_run(address: str, store: str, root: Path, monkeypatch) -> list[tuple[str, str]]:
    """(the `stages` package's file, the working folder) as two tasks see them with the shared store."""
    from stages.core.engine.params import RayParams
    from stages.core.engine.ray_engine import RayEngine

    def where(_x: int) -> tuple[str, str]:  # nested: pickled by value, the workers cannot import this module
        import os

        import stages

        return stages.__file__, os.getcwd()

    for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED"):  # RayEngine sets them: not after
        monkeypatch.setenv(k, "0")
    engine = RayEngine(RayParams(address, store), str(root))
    try:
        return engine.map(where, [0, 1])
    finally:
        engine.close()


def test_two_node_cluster_repro_equals_local(tmp_path, monkeypatch):
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))  # short: Ray's socket paths < 108 bytes
    with FakeOpenAI(FakeConfig()) as fake:
        local = make_project(tmp_path, name="local")
        configure(local, fake.base_url)
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache-local"))
        dvc(local, "init", "--no-scm", "-q")
        t0 = time.monotonic()
        dvc(local, "repro")
        print(f"local repro {time.monotonic() - t0:.0f} s")
        try:
            address = cluster.start(nodes=2)
            listening = cluster.listening()
            assert listening and all(is_loopback(a) for a in listening), listening
            on_ray = make_project(tmp_path, name="on_ray")
            configure(on_ray, fake.base_url, engine="ray", ray={"address": address})
            monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache-ray"))
            dvc(on_ray, "init", "--no-scm", "-q")
            calls_before = chat_calls(fake)
            t0 = time.monotonic()
            out = dvc(on_ray, "repro")
            print(f"ray repro {time.monotonic() - t0:.0f} s")
            assert out.count("engine ray: 2 node(s), 2 CPUs") == 5, out[-3000:]  # extract ... answer
            assert chat_calls(fake) > calls_before

            # the same cluster through Ray Client, the workers reading retrieve's inputs from S3
            on_gcs = {f: (on_ray / f).read_bytes() for f in RETRIEVED}
            with s3_server(monkeypatch, tmp_path, BUCKET) as s3:
                store = f"s3://{BUCKET}/treerag"
                configure(on_ray, fake.base_url, engine="ray", ray={"address": cluster.client_address,
                                                                   "shared_store": store})
                t0 = time.monotonic()
                out = dvc(on_ray, "repro", "-f", "-s", "retrieve")
                print(f"ray:// + S3 retrieve {time.monotonic() - t0:.0f} s")
                assert "engine ray: 2 node(s), 2 CPUs" in out and "uploaded to s3://" in out, out[-3000:]
                gets = [p for m, p in s3.requests() if m == "GET" and p.startswith(f"{BUCKET}/treerag/retrieve-")]
                for name in ("/index/index.json", "/index/bm25_units.parquet", "/index/doc_cards.json",
                             "/nodes.parquet"):
                    assert sum(p.endswith(name) for p in gets) >= 2, (name, gets)  # each of the two actors
                assert any(".lance/" in p for p in gets), gets
                for code, cwd in where_workers_run(cluster.client_address, store, on_ray, monkeypatch):
                    assert "/py_modules_files/" in code and not cwd.startswith(str(tmp_path)), (code, cwd)
            listening = cluster.listening()
            assert all(is_loopback(a) for a in listening), listening
            assert f"{int(cluster.client_address.rsplit(':', 1)[1]):04X}" in {a.split(":")[-1] for a in listening}
            for f in RETRIEVED:
                assert (on_ray / f).read_bytes() == on_gcs[f] == (local / f).read_bytes(), f
        finally:
            cluster.stop()
            shutil.rmtree(cluster.temp_dir, ignore_errors=True)
        assert not cluster.pids()

        # byte for byte: every artifact but the answers (their latency_s), the submission, the tree metrics
        files = artifact_files(local)
        assert files == artifact_files(on_ray) and "artifacts/embed/vectors.parquet" in files
        timed = [f for f in files if f.startswith("artifacts/answers/")]
        assert timed == ["artifacts/answers/run_0.parquet", "artifacts/answers/run_1.parquet"]
        for f in files:
            if f not in timed:
                assert (local / f).read_bytes() == (on_ray / f).read_bytes(), f
        for f in [*timed, "metrics/embed.json", "metrics/retrieval.json"]:
            assert without_timing(local / f) == without_timing(on_ray / f), f
        tables = lance_rows(local)
        assert tables["nodes"].num_rows > 0 and tables == lance_rows(on_ray)
        for f in ("submissions/submission.csv", "metrics/tree.json", "metrics/score.json"):
            assert (local / f).read_bytes() == (on_ray / f).read_bytes(), f

        # the workers' answers are in the driver's cache: answering again here pays for no call
        ray_answers = {f: pl.read_parquet(on_ray / f) for f in timed}
        configure(on_ray, fake.base_url, engine="local")
        calls_before = chat_calls(fake)
        dvc(on_ray, "repro", "-f", "-s", "answer")
        assert chat_calls(fake) == calls_before
        for f, before in ray_answers.items():
            after = pl.read_parquet(on_ray / f)
            paid = (after["attempts"] - after["cache_hits"] - after["shared"]).to_list()  # calls sent: none
            assert paid == [0] * after.height and after["attempts"].to_list() == before["attempts"].to_list()
            assert after.drop("latency_s", "cache_hits").equals(before.drop("latency_s", "cache_hits")), f
