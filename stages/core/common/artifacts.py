"""Atomic reads and writes of stage artifacts (Parquet, JSON, CSV).

A stage writes each output to a temp file beside it and renames it into place, so a
killed stage never leaves a half-written artifact that a later stage would trust.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq


def _umask() -> int:
    """The process umask (read from /proc where it can be: setting it to read it races with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def _atomic(path: str | Path) -> Iterator[Path]:
    """Yield a temp file beside `path`; on success it replaces `path`, on failure it is removed."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600: the output gets the mode open() would give it
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)


def write_parquet(df: pl.DataFrame, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write a DataFrame to Parquet atomically, with optional key/value file metadata."""
    with _atomic(path) as tmp:
        if metadata:
            table = df.to_arrow()
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
            pq.write_table(table, tmp)
        else:
            df.write_parquet(tmp)
    return Path(path)


def write_json(obj: Any, path: str | Path) -> Path:
    """Write JSON atomically (sorted keys, so DVC metrics diff cleanly)."""
    with _atomic(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return Path(path)


def write_text(text: str, path: str | Path) -> Path:
    """Write a text file atomically."""
    with _atomic(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_csv(df: pl.DataFrame, path: str | Path) -> Path:
    """Write a CSV atomically."""
    with _atomic(path) as tmp:
        df.write_csv(tmp)
    return Path(path)


def _existing(path: str | Path, stage_hint: str) -> Path:
    """`path`, or an error that says which stage makes it if missing."""
    p = Path(path)
    if not p.exists():
        hint = f" (it is written by the {stage_hint} stage: run `dvc repro {stage_hint}`)" if stage_hint else ""
        raise FileNotFoundError(f"{p}: artifact not found{hint}")
    return p


def read_parquet(path: str | Path, stage_hint: str = "") -> pl.DataFrame:
    """Read a Parquet artifact, with an error that says which stage makes it if missing."""
    return pl.read_parquet(_existing(path, stage_hint))


def parquet_batches(path: str | Path, rows: int, stage_hint: str = "") -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """A Parquet artifact's schema and its rows as Arrow batches of at most `rows` rows, in file order:
    a stage that handles one batch at a time holds one batch, not the whole file, in memory."""
    f = pq.ParquetFile(_existing(path, stage_hint))
    return f.schema_arrow, f.iter_batches(batch_size=rows)


def parquet_metadata(path: str | Path, stage_hint: str = "") -> dict[str, str]:
    """The key/value metadata written by `write_parquet(..., metadata=...)`."""
    meta = pq.read_schema(_existing(path, stage_hint)).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
