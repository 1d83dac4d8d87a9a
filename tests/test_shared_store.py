"""`ray.shared_store` without Ray: the driver's content-addressed upload and the workers' reads of an
index from S3, against a real S3-compatible server (moto's, on 127.0.0.1; tests/s3_server.py), and the
errors a bad setting gets. The cluster run is in tests/test_ray_engine.py."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from stages.core.common import storage
from stages.core.common.params import ParamError
from stages.core.engine.params import engine_params
from stages.core.engine.shared_store import SharedStore, content_key, folder_files

pytest.importorskip("moto", reason="moto not installed (pip install -e '.[test]')")
from s3_server import s3_server  # noqa: E402

BUCKET = "treerag-shared"


def small_index(folder: Path) -> Path:
    """An index folder's file kinds: a Lance table, a Parquet file, JSON."""
    import lancedb

    folder.mkdir(parents=True)
    lancedb.connect(str(folder / "lance")).create_table(
        "nodes", data=[{"node_id": f"n{i}", "vector": [float(i), 1.0, 0.5]} for i in range(5)])
    pl.DataFrame({"doc_id": ["a", "b"], "tokens": [["x", "y"], ["z"]]}).write_parquet(folder / "bm25_units.parquet")
    (folder / "index.json").write_text(json.dumps({"dim": 3}))
    return folder


def test_upload_once_per_content_and_read_back_from_s3(monkeypatch, tmp_path):
    index = small_index(tmp_path / "index")
    with s3_server(monkeypatch, tmp_path, BUCKET) as s3:
        store = SharedStore(f"s3://{BUCKET}/runs")
        files = folder_files(index, "index")
        uri = store.put("retrieve", files)
        assert uri == f"s3://{BUCKET}/runs/retrieve-{content_key(files)}"
        puts = [p for m, p in s3.requests() if m == "PUT"]
        assert f"{BUCKET}/runs/retrieve-{content_key(files)}/index/index.json" in puts

        assert store.put("retrieve", files) == uri  # same content: found, nothing written again
        assert [p for m, p in s3.requests() if m == "PUT"] == puts

        where = f"{uri}/index"
        assert json.loads(storage.read_text(storage.join(where, "index.json"))) == {"dim": 3}
        assert storage.read_parquet(storage.join(where, "bm25_units.parquet")).equals(
            pl.read_parquet(index / "bm25_units.parquet"))
        import lancedb

        lance = storage.join(where, "lance")
        remote = lancedb.connect(lance, storage_options=storage.lance_options(lance)).open_table("nodes").to_arrow()
        assert remote.equals(lancedb.connect(str(index / "lance")).open_table("nodes").to_arrow())
        assert any(m == "GET" and p.endswith(".lance") for m, p in s3.requests())  # Lance read S3 itself

        (index / "index.json").write_text(json.dumps({"dim": 4}))  # new content: a new folder
        assert store.put("retrieve", folder_files(index, "index")) != uri
        with pytest.raises(storage.StorageError, match=f"{BUCKET}/runs/nothing-here"):
            storage.read_bytes(f"s3://{BUCKET}/runs/nothing-here")


def test_a_cut_short_upload_is_done_again(monkeypatch, tmp_path):
    index = small_index(tmp_path / "index")
    with s3_server(monkeypatch, tmp_path, BUCKET) as s3:
        files = folder_files(index, "index")
        uri = SharedStore(f"s3://{BUCKET}/p").put("retrieve", files)
        s3.client.delete_object(Bucket=BUCKET, Key=f"{uri[len('s3://' + BUCKET) + 1:]}/.complete")
        before = len(s3.requests())
        assert SharedStore(f"s3://{BUCKET}/p").put("retrieve", files) == uri
        assert sum(m == "PUT" for m, _ in s3.requests()[before:]) == len(files) + 1


def test_bad_store_settings_name_the_key(monkeypatch, tmp_path, refused_port):
    with pytest.raises(ParamError, match="ray.shared_store"):
        engine_params({"engine": "ray", "ray": {"shared_store": "/mnt/shared"}})
    assert engine_params({"ray": {"shared_store": "s3://b-1/x/y"}}).ray.shared_store == "s3://b-1/x/y"
    with s3_server(monkeypatch, tmp_path, BUCKET):
        with pytest.raises(ParamError, match=r"ray.shared_store='s3://no-such-bucket/x'.*'no-such-bucket' does not"):
            SharedStore("s3://no-such-bucket/x")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        with pytest.raises(ParamError, match="ray.shared_store.*AWS_SECRET_ACCESS_KEY is not set"):
            SharedStore(f"s3://{BUCKET}/x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{refused_port}")
    with pytest.raises(ParamError, match="ray.shared_store.*cannot be reached"):
        SharedStore(f"s3://{BUCKET}/x")
