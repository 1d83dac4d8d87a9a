"""Build document → section → paragraph → sentence trees from extracted lines.

Retrieval can only be as precise as its units, so the tree follows the document's own
structure rather than pages:
- sections come from headings: a larger font (PDF), or, for text without fonts (the
  WattBot JSON), numbered heading lines ("3", "3.1", "A.2", "IV.") whose numbers form
  a plausible sequence, plus well-known unnumbered headings and short ALL-CAPS lines;
- paragraphs come from vertical gaps (PDF) or line structure (blank lines, short last
  lines, captions, bullets, indentation) and are capped in length on sentence bounds;
- every node keeps the pages it came from; ids ``doc:sec{i}:p{j}:s{k}`` restart under
  each parent, so ancestry is a prefix test;
- tables in the text become table nodes whose rows carry caption and header;
- bibliography and front matter are flagged so retrieval can leave these decoys out.

The steps live in their own modules: lines (shared types and text rules), headings,
paragraphs, sentences and tables; this one assembles the nodes.
"""
from __future__ import annotations

import math
import re
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Iterable

import polars as pl
from tqdm import tqdm

from stages.core.extract.captions import CAPTION
from stages.core.extract.records import Line
from stages.core.tree.lines import (
    REF_ENTRY,
    REF_TITLE,
    WS,
    YEAR,
    DocInput,
    TreeParams,
    clean_line,
    drop_page_furniture,
    join_lines,
    page_at,
)
from stages.core.tree.paragraphs import Para, group_sections
from stages.core.tree.sentences import SentenceSplitter, chunk_sentences, sentence_spans
from stages.core.tree.tables import find_tables, table_row_sentences

# the tree's parts, re-exported for callers that import them from here
__all__ = ["TreeParams", "Line", "DocInput", "Node", "NODE_SCHEMA", "clean_line", "join_lines", "chunk_sentences",
           "table_row_sentences", "build_doc_tree", "doc_inputs", "build_tree", "nodes_frame", "tree_stats"]


NODE_SCHEMA = {
    "node_id": pl.Utf8, "parent_id": pl.Utf8, "level": pl.Utf8, "doc_id": pl.Utf8, "ordinal": pl.Int64,
    "text": pl.Utf8, "page": pl.Int64, "page_end": pl.Int64, "title": pl.Utf8, "attachment_type": pl.Utf8,
    "source": pl.Utf8, "is_reference": pl.Boolean, "is_front_matter": pl.Boolean,
}


@dataclass
class Node:
    node_id: str
    parent_id: str | None
    level: str
    doc_id: str
    ordinal: int
    text: str
    page: int
    page_end: int
    title: str | None = None
    attachment_type: str | None = None
    source: str | None = None
    is_reference: bool = False
    is_front_matter: bool = False


_FRONT_SIGNALS = re.compile(
    r"@|\buniversity\b|\binstitute\b|\blaborator|\barxiv\b|\bcopyright\b|\u00a9|\bpermission to make\b|"
    r"\bcorresponding author\b|\bkeywords\b|\bpreprint\b|\bproceedings\b|\bconference\b|\bdoi\b|\bisbn\b",
    re.I)


# an unlabelled abstract ("In this paper, we ...") is content, not front matter
_ABSTRACT_VOICE = re.compile(r"\b(we|our|this paper|this work|this article|in this)\b", re.I)


def is_reference_entry(text: str) -> bool:
    """'[105] Author, Title, 2023' style bibliography entries."""
    return bool(REF_ENTRY.match(text) and (YEAR.search(text) or re.search(r"arxiv|doi|http", text, re.I)))


# ----------------------------------------------------------------- tree builder
def build_doc_tree(doc: DocInput, params: TreeParams, splitter: SentenceSplitter) -> list[Node]:
    """All nodes of one document, in document order."""
    sections = group_sections(doc)
    pages = [ln.page for ln in doc.lines] or [1]
    doc_node = Node(doc.doc_id, None, "document", doc.doc_id, 0, doc.title, min(pages),
                    max(max(pages), doc.n_pages or 0), doc.title, None, doc.source)
    nodes = [doc_node]
    first_page = min(pages)
    limit = params.max_paragraph_chars
    for si, sec in enumerate(sections):
        sec_id = f"{doc.doc_id}:sec{si}"
        sec_ref = bool(sec.title and REF_TITLE.match(sec.title))
        sec_node = Node(sec_id, doc.doc_id, "section", doc.doc_id, si, "", sec.page, sec.page,
                        sec.title, None, doc.source, is_reference=sec_ref)
        nodes.append(sec_node)
        para_nodes: list[Node] = []
        children: list[list[Node]] = []
        for para in sec.paras:
            for pnode, snodes in _paragraph_nodes(para, splitter, limit):
                para_nodes.append(pnode)
                children.append(snodes)
        # an image node that carries the figure caption makes the caption paragraph redundant
        image_texts = [p.text for p in para_nodes if p.attachment_type == "image"]
        if image_texts:
            dup = [p.attachment_type is None and CAPTION.match(p.text) is not None
                   and any(t.startswith(p.text) for t in image_texts) for p in para_nodes]
            children = [c for c, d in zip(children, dup) if not d]
            para_nodes = [p for p, d in zip(para_nodes, dup) if not d]
        # front matter (title block, affiliations) is the untitled start of a document that has sections
        # after it: a memo or one-page note with no heading detected is all content
        front_ok = si == 0 and sec.title is None and len(sections) > 1
        for pj, (pn, sns) in enumerate(zip(para_nodes, children)):
            pn.node_id = f"{sec_id}:p{pj}"
            pn.parent_id = sec_id
            pn.ordinal = pj
            pn.doc_id = doc.doc_id
            pn.source = doc.source
            pn.is_reference = sec_ref or (pn.attachment_type is None and is_reference_entry(pn.text))
            pn.is_front_matter = front_ok and pn.page == first_page and pn.attachment_type is None and (
                len(pn.text) < 400 or (bool(_FRONT_SIGNALS.search(pn.text)) and not _ABSTRACT_VOICE.search(pn.text)))
            nodes.append(pn)
            for sk, sn in enumerate(sns):
                sn.node_id = f"{pn.node_id}:s{sk}"
                sn.parent_id = pn.node_id
                sn.ordinal = sk
                sn.doc_id = doc.doc_id
                sn.source = doc.source
                sn.is_reference = pn.is_reference
                sn.is_front_matter = pn.is_front_matter
                nodes.append(sn)
        sec_node.text = "\n\n".join(p.text for p in para_nodes)
        if para_nodes:
            sec_node.page = min(sec.page, min(p.page for p in para_nodes))
            sec_node.page_end = max(sec.page, max(p.page_end for p in para_nodes))
            sec_node.is_front_matter = front_ok and all(p.is_front_matter for p in para_nodes)
    if not any(n.level == "paragraph" and not n.is_front_matter and not n.is_reference for n in nodes):
        for n in nodes:  # nothing of the document would be retrieved: a short document is its own content
            n.is_front_matter = False
    return nodes


def _paragraph_nodes(para: Para, splitter: SentenceSplitter, limit: int) -> Iterable[tuple[Node, list[Node]]]:
    """One or more paragraph nodes (long ones split) with their sentence nodes (ids set later)."""
    def mk(level: str, text: str, page: int, page_end: int, att: str | None = None) -> Node:
        return Node("", None, level, "", 0, text, page, page_end, None, att)

    if para.kind == "table":
        md, page = para.parts[0]
        rows = table_row_sentences(md)
        yield mk("paragraph", md, page, page, "table"), [mk("sentence", r, page, page) for r in rows]
        return
    text, marks = join_lines(para.parts)
    if not text.strip() or (len(text) <= 5 and not any(c.isalpha() for c in text)):
        return  # empty, or a stray footnote mark / page number
    spans = sentence_spans(text, splitter, limit)
    sents = [(WS.sub(" ", text[s:e]), page_at(marks, s), page_at(marks, e - 1)) for s, e in spans]
    att = "image" if para.kind == "image" else None
    groups = [sents] if att else chunk_sentences(sents, limit)
    for g in groups:
        if not g:
            continue
        ptext = " ".join(s[0] for s in g)
        yield (mk("paragraph", ptext, min(s[1] for s in g), max(s[2] for s in g), att),
               [mk("sentence", s[0], s[1], s[2]) for s in g])


# ---------------------------------------------------------------- whole corpus
def doc_inputs(documents: pl.DataFrame, blocks: pl.DataFrame, images: pl.DataFrame,
               captions: pl.DataFrame | None) -> list[DocInput]:
    """Join the extract and caption artifacts into one ordered line list per OK document."""
    cap: dict[str, str] = {}
    if captions is not None and captions.height:
        for r in captions.iter_rows(named=True):
            if r.get("caption") and (r.get("caption_source") or "none") != "none":
                cap[r["image_id"]] = r["caption"]
    by_doc: dict[str, list[Line]] = defaultdict(list)
    for r in blocks.sort(["doc_id", "order"]).iter_rows(named=True):
        text = r["text"] if r["kind"] == "table" else clean_line(r["text"] or "")
        if not text.strip():
            continue
        by_doc[r["doc_id"]].append(Line(
            text=text, page=int(r["page"]), order=int(r["order"]), kind=r["kind"], font_size=r["font_size"],
            bold=r["bold"], x0=r["x0"], y0=r["y0"], x1=r["x1"], y1=r["y1"], block=r.get("block"),
        ))
    for r in images.iter_rows(named=True):
        c = cap.get(r["image_id"])
        if c:
            by_doc[r["doc_id"]].append(Line(text=clean_line(c), page=int(r["page"]), order=int(r["order"]), kind="image"))
    out = []
    for d in documents.filter(pl.col("status") == "ok").iter_rows(named=True):
        lines = sorted(by_doc.get(d["doc_id"], []), key=lambda ln: ln.order)
        out.append(DocInput(d["doc_id"], d["title"] or d["doc_id"], d["source"], d["format"],
                            int(d["n_pages"] or 0), lines))
    return out


def build_tree(docs: list[DocInput], params: TreeParams, progress: bool = True) -> list[Node]:
    """Nodes of every document; running headers dropped first."""
    splitter = SentenceSplitter(params.extra_abbreviations)
    nodes: list[Node] = []
    for doc in tqdm(docs, desc="build_tree: documents", unit="doc", disable=not progress, file=sys.stderr):
        doc.lines = drop_page_furniture(doc.lines)
        doc.lines = find_tables(doc.lines)
        nodes.extend(build_doc_tree(doc, params, splitter))
    return nodes


def build_tree_on(engine: Any, docs: list[DocInput], params: TreeParams) -> list[Node]:
    """`build_tree` on an engine: `ray` builds runs of documents as tasks (a few per CPU), in document order."""
    if engine.kind == "local":
        return build_tree(docs, params)
    from stages.core.engine.local import chunks

    runs = engine.map(partial(build_tree, params=params, progress=False), chunks(docs, 4 * engine.cpus()))
    return [n for run in runs for n in run]


def nodes_frame(nodes: list[Node]) -> pl.DataFrame:
    return pl.DataFrame([asdict(n) for n in nodes], schema=NODE_SCHEMA)


_NUMBERED_TITLE = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*|[A-H](?:\.\d{1,2})+|[IVX]{1,5}\.)\s")


def tree_stats(nodes: pl.DataFrame, images: pl.DataFrame, captions: pl.DataFrame | None) -> dict[str, Any]:
    """Counts and paragraph-length percentiles, written as DVC metrics."""
    paras = nodes.filter(pl.col("level") == "paragraph")
    lens = sorted(len(t) for t in paras["text"].to_list())

    def pct(q: float) -> int:
        if not lens:
            return 0
        return int(lens[min(len(lens) - 1, max(0, math.ceil(q * len(lens)) - 1))])

    secs = nodes.filter(pl.col("level") == "section")
    numbered = (secs.filter(pl.col("title").fill_null("").str.contains(_NUMBERED_TITLE.pattern))
                .group_by("doc_id").len().filter(pl.col("len") >= 2))
    captioned = 0
    if captions is not None and captions.height:
        captioned = captions.filter(pl.col("caption_source") != "none").height
    placeholders = images.filter(~pl.col("has_pixels")).height if images.height else 0
    return {
        "documents": nodes.filter(pl.col("level") == "document").height,
        "sections": secs.height,
        "paragraphs": paras.height,
        "sentences": nodes.filter(pl.col("level") == "sentence").height,
        "images_total": images.height,
        "images_captioned": captioned,
        "images_placeholder_skipped": placeholders,
        "image_paragraphs": paras.filter(pl.col("attachment_type") == "image").height,
        "tables": paras.filter(pl.col("attachment_type") == "table").height,
        "paragraph_chars_p50": pct(0.5),
        "paragraph_chars_p95": pct(0.95),
        "paragraph_chars_max": lens[-1] if lens else 0,
        "docs_with_numbered_sections": numbered.height,
        "reference_paragraphs": paras.filter(pl.col("is_reference")).height,
        "front_matter_paragraphs": paras.filter(pl.col("is_front_matter")).height,
    }
