"""Every completed LLM response, persisted, keyed by everything that determines it.

A killed or re-run stage never pays twice for a call it already made. The file lives
outside DVC outs (common.paths.cache_dir), since DVC deletes a stage's outs before a rerun.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from stages.core.common.sqlite_store import SqliteStore


class ResponseCache(SqliteStore):
    """Persistent response cache in SQLite (safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    @staticmethod
    def key(payload: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        rows = self.query("SELECT value FROM responses WHERE key = ?", (key,))
        return json.loads(rows[0][0]) if rows else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.write("INSERT OR REPLACE INTO responses VALUES (?, ?)", [(key, json.dumps(value))])
