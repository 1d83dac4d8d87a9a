"""Reading an input that is a local path or an ``s3://bucket/key`` URI (`ray.shared_store`: Ray workers on
nodes that do not share the driver's disk read the index and the tree from S3).

The S3 endpoint and credentials come from the environment only (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
optional AWS_SESSION_TOKEN, AWS_ENDPOINT_URL for an S3-compatible server, AWS_REGION or
AWS_DEFAULT_REGION), never from params: params travel with the repository, secrets must not. A local path
is read as before (``pl.read_parquet``); an S3 object's bytes go through the same Parquet reader.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import polars as pl

S3 = "s3://"
# the environment variables that locate and open S3 (read by s3_settings; a Ray worker gets the driver's)
AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_REGION",
           "AWS_DEFAULT_REGION")
TIMEOUT_S = 10.0  # connect and request timeout: an unreachable endpoint fails in seconds, not minutes


class StorageError(RuntimeError):
    """An S3 location that cannot be used (no credentials, unreachable endpoint, missing bucket or object)."""


def is_s3(loc: str | Path) -> bool:
    return str(loc).startswith(S3)


def join(loc: str | Path, *parts: str) -> str:
    return "/".join([str(loc).rstrip("/"), *parts]) if is_s3(loc) else str(Path(loc, *parts))


def _env(name: str, what: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise StorageError(f"{what}: no S3 credentials: {name} is not set (AWS_ACCESS_KEY_ID and "
                           "AWS_SECRET_ACCESS_KEY come from the environment, never from params)")
    return value


def s3_settings(what: str) -> dict[str, str]:
    """Credentials, endpoint and region from the environment (``what`` names the setting in errors)."""
    return {"key": _env("AWS_ACCESS_KEY_ID", what), "secret": _env("AWS_SECRET_ACCESS_KEY", what),
            "token": os.environ.get("AWS_SESSION_TOKEN", ""), "endpoint": os.environ.get("AWS_ENDPOINT_URL", ""),
            "region": os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"}


def s3_filesystem(what: str) -> Any:
    """A pyarrow S3 filesystem on the environment's endpoint and credentials."""
    from pyarrow import fs

    s = s3_settings(what)
    endpoint = s["endpoint"]
    return fs.S3FileSystem(access_key=s["key"], secret_key=s["secret"], session_token=s["token"] or None,
                           region=s["region"], endpoint_override=endpoint or None,
                           scheme="http" if endpoint.startswith("http://") else "https",
                           connect_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S,
                           retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=2))


def lance_options(loc: str | Path) -> dict[str, str] | None:
    """The `storage_options` Lance opens ``loc`` with (None for a local path)."""
    if not is_s3(loc):
        return None
    s = s3_settings(str(loc))
    opts = {"aws_access_key_id": s["key"], "aws_secret_access_key": s["secret"], "aws_region": s["region"]}
    if s["token"]:
        opts["aws_session_token"] = s["token"]
    if s["endpoint"]:
        opts["aws_endpoint"] = s["endpoint"]
        opts["allow_http"] = str(s["endpoint"].startswith("http://")).lower()
    return opts


def read_bytes(loc: str | Path) -> bytes:
    if not is_s3(loc):
        return Path(loc).read_bytes()
    try:
        with s3_filesystem(str(loc)).open_input_stream(str(loc)[len(S3):]) as f:
            return f.read()
    except OSError as e:
        raise StorageError(f"{loc}: cannot be read from S3 ({e})") from e


def exists(loc: str | Path) -> bool:
    if not is_s3(loc):
        return Path(loc).exists()
    from pyarrow import fs

    try:
        return s3_filesystem(str(loc)).get_file_info(str(loc)[len(S3):]).type != fs.FileType.NotFound
    except OSError as e:
        raise StorageError(f"{loc}: cannot be checked on S3 ({e})") from e


def read_text(loc: str | Path) -> str:
    return read_bytes(loc).decode("utf-8")


def read_parquet(loc: str | Path) -> pl.DataFrame:
    """A Parquet file from a path or S3 (its bytes through the same reader, so the frame is the same)."""
    return pl.read_parquet(io.BytesIO(read_bytes(loc))) if is_s3(loc) else pl.read_parquet(loc)
