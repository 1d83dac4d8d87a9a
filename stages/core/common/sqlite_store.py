"""A small SQLite key-value file, safe across threads and processes: the base of the response
and embedding caches (one connection, one lock, WAL so readers never block the writer)."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class SqliteStore:
    """One SQLite file with the table ``schema`` creates; subclasses say what a row holds."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(schema)
        self._db.commit()

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    def write(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run ``sql`` once per row, in one transaction."""
        with self._lock:
            self._db.executemany(sql, rows)
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
