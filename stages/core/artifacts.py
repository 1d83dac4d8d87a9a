"""Atomic reads and writes of stage artifacts (Parquet, JSON, CSV).

A stage writes each output to a temp file beside it and renames it into place, so a
killed stage never leaves a half-written artifact that a later stage would trust.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq


def _atomic_target(path: str | Path) -> tuple[Path, Path]:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    return p, Path(tmp)


def write_parquet(df: pl.DataFrame, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write a DataFrame to Parquet atomically, with optional key/value file metadata."""
    p, tmp = _atomic_target(path)
    try:
        if metadata:
            table = df.to_arrow()
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
            pq.write_table(table, tmp)
        else:
            df.write_parquet(tmp)
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def write_json(obj: Any, path: str | Path) -> Path:
    """Write JSON atomically (sorted keys, so DVC metrics diff cleanly)."""
    p, tmp = _atomic_target(path)
    try:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def write_text(text: str, path: str | Path) -> Path:
    """Write a text file atomically."""
    p, tmp = _atomic_target(path)
    try:
        tmp.write_text(text)
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def write_csv(df: pl.DataFrame, path: str | Path) -> Path:
    """Write a CSV atomically."""
    p, tmp = _atomic_target(path)
    try:
        df.write_csv(tmp)
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def read_parquet(path: str | Path, stage_hint: str = "") -> pl.DataFrame:
    """Read a Parquet artifact, with an error that says which stage makes it if missing."""
    p = Path(path)
    if not p.exists():
        hint = f" (it is written by the {stage_hint} stage: run `dvc repro {stage_hint}`)" if stage_hint else ""
        raise FileNotFoundError(f"{p}: artifact not found{hint}")
    return pl.read_parquet(p)


def parquet_metadata(path: str | Path) -> dict[str, str]:
    """The key/value metadata written by `write_parquet(..., metadata=...)`."""
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
