"""The records every corpus loader returns (PDF, WattBot JSON, Markdown, text).

They live here, apart from the loaders, so that corpus_loaders (dispatch, the flat
formats) and pdf_extract (PyMuPDF) both import them and neither imports the other's
module for its types. All are plain picklable dataclasses: extract's worker
processes send them back to the parent.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# px: an embedded image narrower or lower than this is a decoration (a bullet, a rule, a logo strip)
MIN_IMAGE_SIZE = 64


class DocumentError(Exception):
    """One input file cannot be used (corrupt, encrypted, empty, no text layer...)."""


@dataclass
class DocRecord:
    doc_id: str
    source: str
    format: str
    title: str | None = None
    url: str | None = None
    year: int | None = None
    n_pages: int = 0
    status: str = "ok"
    message: str = ""


@dataclass
class Line:
    """One line of text (or one whole table, or an image's caption) in reading order.

    Extract writes these as rows of pages.parquet (the tree builder's own fields, heading
    and title_line, are not written); build_tree reads them back and marks headings."""

    text: str
    page: int
    order: int
    kind: str = "text"  # text | table | image
    font_size: float | None = None
    bold: bool | None = None
    x0: float | None = None
    y0: float | None = None
    x1: float | None = None
    y1: float | None = None
    line_height: float | None = None
    block: int | None = None  # source block id: lines of one block share it
    doc_id: str = ""
    heading: str | None = None  # build_tree: section title when this line is a heading
    title_line: bool = False  # build_tree: part of the document title on page 1


@dataclass
class ImageRecord:
    image_id: str
    doc_id: str
    page: int
    path: str | None
    width: int
    height: int
    has_pixels: bool
    nearby_caption: str | None = None
    order: int = 0  # position in the same reading order as blocks.order
    x0: float | None = None
    y0: float | None = None
    x1: float | None = None
    y1: float | None = None


@dataclass
class LoadedDoc:
    """What a format loader returns for one file."""

    title: str | None
    n_pages: int
    blocks: list[Line] = field(default_factory=list)
    images: list[ImageRecord] = field(default_factory=list)
    url: str | None = None
    year: int | None = None
    message: str = ""


@dataclass
class ExtractResult:
    documents: list[DocRecord]
    blocks: list[Line]
    images: list[ImageRecord]
