"""Loaders for extract's worker processes in tests (module-level, so a spawned worker can import them)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stages.core.extract.loaders import load_one
from stages.core.extract.records import LoadedDoc


def crash_on_name(path: Path, doc_id: str, fmt: str, params: Any, images_dir: Path | None) -> LoadedDoc:
    """load_one, except that a file named crash* kills its worker process (as a MuPDF segfault would)."""
    if path.name.startswith("crash"):
        os._exit(3)
    return load_one(path, doc_id, fmt, params, images_dir)
