"""Helpers for extract's tests: loaders for its worker processes (module-level, so a spawned worker can import
them) and a ruled table drawn on a PyMuPDF page."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pymupdf

from stages.core.extract.loaders import load_one
from stages.core.extract.records import LoadedDoc


def crash_on_name(path: Path, doc_id: str, fmt: str, params: Any, images_dir: Path | None) -> LoadedDoc:
    """load_one, except that a file named crash* kills its worker process (as a MuPDF segfault would)."""
    if path.name.startswith("crash"):
        os._exit(3)
    return load_one(path, doc_id, fmt, params, images_dir)


def draw_ruled_grid(page: pymupdf.Page, rows: list[list[str]], xs: list[float], top: float = 80,
                    pitch: float = 20) -> list[float]:
    """``rows`` as a fully ruled table (a line above and below each row, one at each x in ``xs``), each cell's
    text 3 pt right of its left rule; the rules' y positions are returned."""
    ys = [top + pitch * r for r in range(len(rows) + 1)]
    for y in ys:
        page.draw_line((xs[0], y), (xs[-1], y))
    for x in xs:
        page.draw_line((x, ys[0]), (x, ys[-1]))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            page.insert_text((xs[c] + 3, ys[r] + 14), cell, fontsize=9)
    return ys
