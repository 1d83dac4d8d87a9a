"""Read-only navigation of tree/nodes.parquet: parents, ordered children, texts.

Ids are hierarchical (`doc:sec2:p3:s4`), so ancestry is a prefix test; this view
keeps the lookups retrieval and answering need in plain dicts.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass
class NodeInfo:
    node_id: str
    parent_id: str | None
    level: str
    doc_id: str
    text: str
    page: int | None
    attachment_type: str | None
    title: str | None


class TreeView:
    """Lookups over the node table."""

    def __init__(self, nodes: pl.DataFrame) -> None:
        cols = {"attachment_type": pl.lit(None, dtype=pl.String), "title": pl.lit(None, dtype=pl.String)}
        for c, default in cols.items():
            if c not in nodes.columns:
                nodes = nodes.with_columns(default.alias(c))
        sort_cols = ["parent_id", "ordinal"] if "ordinal" in nodes.columns else ["parent_id"]
        self.nodes: dict[str, NodeInfo] = {}
        self.children: dict[str, list[str]] = {}
        for r in nodes.sort(sort_cols, nulls_last=False).iter_rows(named=True):
            self.nodes[r["node_id"]] = NodeInfo(
                r["node_id"], r["parent_id"], r["level"], r["doc_id"], r["text"] or "",
                r.get("page"), r.get("attachment_type"), r.get("title"),
            )
            if r["parent_id"] is not None:
                self.children.setdefault(r["parent_id"], []).append(r["node_id"])

    def __getitem__(self, node_id: str) -> NodeInfo:
        return self.nodes[node_id]

    def paragraph_of(self, node_id: str) -> str | None:
        """The paragraph that holds `node_id` (itself if it is one)."""
        n = self.nodes.get(node_id)
        while n is not None and n.level not in ("paragraph",):
            n = self.nodes.get(n.parent_id) if n.parent_id else None
        return n.node_id if n else None

    def window(self, sentence_id: str, siblings: int) -> list[str]:
        """The sentence with up to `siblings` neighbours on each side, in order."""
        parent = self.nodes[sentence_id].parent_id
        sibs = self.children.get(parent, [sentence_id]) if parent else [sentence_id]
        i = sibs.index(sentence_id)
        return sibs[max(0, i - siblings) : i + siblings + 1]

    def section_title(self, node_id: str) -> str:
        """Heading of the section a node belongs to ('' if none)."""
        sec = ":".join(node_id.split(":")[:2])
        n = self.nodes.get(sec)
        return (n.title or "") if n and n.level == "section" else ""


def is_ancestor(a: str, b: str) -> bool:
    """True when node `a` is a strict ancestor of node `b` (id prefix test)."""
    return b.startswith(a + ":")
