"""Where caches live: outside DVC outs, so a rerun stage (DVC deletes its outs first)
still finds every LLM response and embedding it paid for.

Default ``~/.cache/treerag``; set ``TREERAG_CACHE_DIR`` to move it (tests use a temp dir).
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """Return (and create) a folder under the treerag cache root."""
    root = os.environ.get("TREERAG_CACHE_DIR") or str(Path.home() / ".cache" / "treerag")
    p = Path(root, *parts)
    p.mkdir(parents=True, exist_ok=True)
    return p
