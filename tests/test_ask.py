"""Tests of the `stages.ask` helpers: the retry-context loop and the doc → section → unit tree."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from stages.core.ask import context_tree, to_blocks
from stages.core.retriever import retrieve_attempts
from stages.core.retrieval import RetrieveParams, Unit
from stages.core.tree_view import TreeView

ROOT = Path(__file__).resolve().parents[1]


def tree() -> TreeView:
    rows = [
        ("d1", None, "document", "d1", 0, "", None, "Doc One"),
        ("d1:sec1", "d1", "section", "d1", 0, "", 1, "2 Results"),
        ("d1:sec1:p0", "d1:sec1", "paragraph", "d1", 0, "The farm makes 150 MWh.", 1, None),
        ("d1:sec1:p1", "d1:sec1", "paragraph", "d1", 1, "It avoids 90 t CO2e.", 1, None),
        ("d1:sec1:p1:s0", "d1:sec1:p1", "sentence", "d1", 0, "It avoids 90 t CO2e.", 1, None),
        ("d1:sec2", "d1", "section", "d1", 1, "", 2, "3 Water"),
        ("d1:sec2:p0", "d1:sec2", "paragraph", "d1", 0, "Cooling uses water.", 2, None),
        ("d2", None, "document", "d2", 0, "", None, "Doc Two"),
        ("d2:sec0", "d2", "section", "d2", 0, "", 1, "1 Intro"),
        ("d2:sec0:p0", "d2:sec0", "paragraph", "d2", 0, "A100 draws 400 W. " * 20, 1, None),
    ]
    cols = ["node_id", "parent_id", "level", "doc_id", "ordinal", "text", "page", "title"]
    return TreeView(pl.DataFrame(rows, schema=cols, orient="row"))


def unit(key: str, score: float, ids: list[str] | None = None, sources: set[str] | None = None) -> Unit:
    t = tree()
    ids = ids or [key]
    return Unit(key, t[key].doc_id, ids, " ".join(t[i].text for i in ids), score, 2, sources or {"dense"},
                t[key].page, n_tokens=10)


def test_context_tree_groups_doc_section_unit() -> None:
    units = [unit("d1:sec1:p0", 0.9), unit("d2:sec0:p0", 0.8, sources={"dense", "bm25"}),
             unit("d1:sec2:p0", 0.7), unit("d1:sec1:p1:s0", 0.6)]
    text = context_tree(units, tree(), new_from=3, max_chars=40)
    lines = text.splitlines()
    assert lines[0] == "d1  (3 units)  Doc One"
    assert lines[1] == "  § d1:sec1  2 Results"
    assert "#0  d1:sec1:p0  score 0.9000  freq 2  dense p.1  10 tok" in lines[2]
    assert "#3  d1:sec1:p1:s0" in lines[4] and lines[4].lstrip().startswith("+#3")  # added by a retry
    assert "  § d1:sec2  3 Water" in lines
    d2 = lines.index("d2  (1 unit)  Doc Two")
    assert d2 > lines.index("  § d1:sec2  3 Water")  # documents in order of their best unit
    assert "both" in lines[d2 + 2]
    assert any(line.strip().endswith("…") and len(line.strip()) == 40 for line in lines)  # long text cut


def test_retrieve_attempts_widens_and_keeps_previous_units() -> None:
    class StubRetriever:
        def __init__(self) -> None:
            self.calls: list[RetrieveParams] = []

        def retrieve(self, queries: list[str], p: RetrieveParams, answer_unit: str | None = None) -> list[Unit]:
            self.calls.append(p)
            keys = ["d1:sec1:p0", "d2:sec0:p0", "d1:sec2:p0"][: p.top_k_final]
            return [unit(k, 1.0 - i / 10) for i, k in enumerate(keys)]

    r = StubRetriever()
    p = RetrieveParams(top_k_final=1, max_context_tokens=1000)
    attempts = retrieve_attempts(r, ["q"], p, max_retries=2, retry_k_factor=2.0)  # type: ignore[arg-type]
    assert [c.top_k_final for c in r.calls] == [1, 2, 4]
    assert [[u.key for u in a] for a in attempts] == [
        ["d1:sec1:p0"], ["d1:sec1:p0", "d2:sec0:p0"], ["d1:sec1:p0", "d2:sec0:p0", "d1:sec2:p0"]]
    blocks = to_blocks(attempts[0])
    assert blocks[0].doc_id == "d1" and blocks[0].text == "The farm makes 150 MWh."


def test_ask_cli_help() -> None:
    r = subprocess.run([sys.executable, "-m", "stages.ask", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=900)  # a hang guard: cold imports took >120 s under load
    assert r.returncode == 0 and "--no-answer" in r.stdout
