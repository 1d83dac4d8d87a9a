"""One question through plan → retrieve → answer, shown as a person debugging it needs to see it.

The pieces are the pipeline's own (``plan_queries``, ``Retriever``, ``extend_context``,
``answer_question``), so what ``stages.ask`` prints is what the stages would produce
for that question with the same params; this module only adds
a readable doc → section → unit tree.
"""
from __future__ import annotations

from collections.abc import Sequence

from stages.core.answering import ContextBlock
from stages.core.retrieval import Unit
from stages.core.tree_view import TreeView


def to_blocks(units: Sequence[Unit]) -> list[ContextBlock]:
    """Units as the answerer's context blocks (what the answer stage reads from contexts.parquet)."""
    return [ContextBlock(u.doc_id, u.text, u.media) for u in units]


def _section_of(tree: TreeView, node_id: str) -> str | None:
    """The section node above `node_id` (ids are hierarchical: doc:secN:...)."""
    parts = node_id.split(":")
    sec = ":".join(parts[:2]) if len(parts) >= 2 else None
    n = tree.nodes.get(sec) if sec else None
    return sec if n is not None and n.level == "section" else None


def _snippet(text: str, max_chars: int) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= max_chars else t[: max_chars - 1] + "…"


def context_tree(units: Sequence[Unit], tree: TreeView, *, new_from: int | None = None,
                 max_chars: int = 160) -> str:
    """The context grouped doc → section → unit, documents and sections in order of their best unit.

    Each unit line: its rank in the context, node id, score, planner-query frequency,
    source (dense/bm25/both), page, tokens and the start of its text; units at index
    >= `new_from` (added by a retry) are marked ``+``.
    """
    docs: dict[str, dict[str | None, list[tuple[int, Unit]]]] = {}
    for rank, u in enumerate(units):
        docs.setdefault(u.doc_id, {}).setdefault(_section_of(tree, u.key), []).append((rank, u))
    lines = []
    for doc, sections in docs.items():
        n_units = sum(len(v) for v in sections.values())
        title = tree.nodes[doc].title if doc in tree.nodes and tree.nodes[doc].title else ""
        lines.append(f"{doc}  ({n_units} unit{'s' if n_units > 1 else ''}){'  ' + title if title else ''}")
        for sec, items in sections.items():
            heading = tree.section_title(sec) if sec else ""
            lines.append(f"  § {sec or '(no section)'}{'  ' + _snippet(heading, 80) if heading else ''}")
            for rank, u in items:
                mark = "+" if new_from is not None and rank >= new_from else " "
                page = f" p.{u.page}" if u.page is not None else ""
                media = f" [{u.media}]" if u.media else ""
                span = u.key if len(u.node_ids) <= 1 else f"{u.key} (window of {len(u.node_ids)} sentences)"
                lines.append(f"   {mark}#{rank:<2} {span}  score {u.score:.4f}  freq {u.frequency}  {u.source}"
                             f"{page}  {u.n_tokens} tok{media}")
                lines.append(f"        {_snippet(u.text, max_chars)}")
    return "\n".join(lines)
