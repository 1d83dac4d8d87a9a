"""PDF extraction with PyMuPDF: lines with fonts and boxes, images as PNG, tables as markdown.

Why these choices:
- lines (not PyMuPDF blocks) so build_tree can see a heading line inside a block and
  measure the vertical gaps that separate paragraphs;
- images through ``Pixmap(doc, xref)`` plus the soft mask (SMask), so diagrams with
  transparency keep it instead of turning black;
- tables from ``page.find_tables()``, each cell's text read as ``page.get_textbox(rect)``
  reads it (find_tables' own cell text drops the spaces between words), but from one
  text extraction of the page (``PageChars``) instead of one per cell: get_textbox builds
  a text page and walks every character of it in Python for each cell, ~4 s per table on
  a real 10-K page; the same characters, the same overlap test, the same order give the
  same strings (bench/extract_speed.py checks it on real PDFs);
- the table search only where it can find something (find_tables' character pass costs ~0.1 s
  on any text page): not on a page whose drawings make no vertical edge (table_rules.py), nor
  on one with more than ``TABLE_MAX_DRAWINGS`` paths (its cost grows with them); its
  character list comes from table_chars.py (the same list, ~40% less CPU).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

from stages.core.extract.captions import CAPTION
from stages.core.extract.records import MIN_IMAGE_SIZE, DocumentError, ImageRecord, Line, LoadedDoc
from stages.core.extract.table_chars import fast_table_chars
from stages.core.extract.table_rules import may_hold_ruled_table

BOLD_FLAG = 16  # PyMuPDF span flag bit for bold
CAPTION_MAX_GAP = 40.0  # pt: a "Figure N: ..." line starting this close to an image is its caption (a line or two)
# a page with more vector drawings skips the table search: a ruled table needs far fewer paths, and a
# page of diagrams would cost ~1 s in it (see find_page_tables)
TABLE_MAX_DRAWINGS = 2000
_WS = re.compile(r"\s+")
_HEADING_LIKE = re.compile(
    r"^((\d{1,2}(\.\d{1,2})*|[IVX]{1,5}|[A-H](\.\d{1,2})+)\.?\s+\S|(abstract|introduction|contents|references)\b)", re.I)


def _clean_cell(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip().replace("|", "\\|")


def table_markdown(rows: list[list[str]]) -> str:
    """Markdown table; the first row is the header."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(["---"] * width) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


class PageChars:
    """A page's characters as ``page.get_textbox`` sees them, extracted once.

    get_textbox(rect) = a text page with flags 0, then every character whose box overlaps
    ``rect`` (strictly, in MuPDF's float32 boxes), in text-page order, a newline between
    characters of different lines. Here the text page and its character boxes are read once
    (``extractRAWDICT``, the same ``JM_char_bbox`` boxes) and each cell is a numpy filter."""

    def __init__(self, page: pymupdf.Page):
        tp = page.get_textpage()  # the flags get_textbox uses
        boxes: list[tuple[float, float, float, float]] = []
        text: list[str] = []
        line_no: list[int] = []
        n = 0
        for b in tp.extractRAWDICT().get("blocks", []):
            if b.get("type") != 0:
                continue
            for ln in b.get("lines", []):
                for sp in ln.get("spans", []):
                    for ch in sp.get("chars", []):
                        boxes.append(ch["bbox"])
                        c = ch["c"]
                        text.append("\ufffd" if "\ud800" <= c <= "\udfff" else c)  # as get_textbox's escape
                        line_no.append(n)
                n += 1
        box = np.array(boxes, dtype=np.float32).reshape(-1, 4)
        self.x0, self.y0, self.x1, self.y1 = box[:, 0], box[:, 1], box[:, 2], box[:, 3]
        self.text = text
        self.line_no = line_no

    def overlapping(self, r: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Mask over the chars `idx` (all when None) whose box overlaps ``r`` = (x0, y0, x1, y1), float32."""
        x0, y0, x1, y1 = (a if idx is None else a[idx] for a in (self.x0, self.y0, self.x1, self.y1))
        return ~((r[0] >= x1) | (r[1] >= y1) | (r[2] <= x0) | (r[3] <= y0))

    def textbox(self, rect: Any, within: np.ndarray | None = None) -> str:
        """``page.get_textbox(rect)``; `within`: indices known to hold every overlapping char."""
        r = np.asarray(tuple(pymupdf.Rect(rect)), dtype=np.float32)  # MuPDF's fz_rect is float32
        idx = np.arange(len(self.text)) if within is None else within
        hit = self.overlapping(r, idx)
        out: list[str] = []
        prev = -1
        for i in idx[hit].tolist():
            if prev >= 0 and self.line_no[i] != prev:
                out.append("\n")
            out.append(self.text[i])
            prev = self.line_no[i]
        return "".join(out)


def read_table_cells(page: pymupdf.Page, table: Any, chars: PageChars | None = None) -> list[list[str]]:
    """Cell text as get_textbox reads each cell rect (find_tables' extract() drops spaces),
    from one extraction of the page's characters (`chars`, made here if not given)."""
    chars = chars if chars is not None else PageChars(page)
    within = np.flatnonzero(_overlaps(chars, pymupdf.Rect(table.bbox)))
    out = []
    for row in table.rows:
        out.append([_clean_cell(chars.textbox(c, within)) if c is not None else "" for c in row.cells])
    out = [r for r in out if any(r)]
    if not out:
        return out
    width = max(len(r) for r in out)
    out = [r + [""] * (width - len(r)) for r in out]
    keep = [j for j in range(width) if any(r[j] for r in out)]  # phantom columns from double rules
    return [[r[j] for j in keep] for r in out]


def _overlaps(chars: PageChars, rect: pymupdf.Rect) -> np.ndarray:
    """Mask of the chars that overlap `rect` grown by 1 pt (a superset of those of its cells)."""
    return chars.overlapping(np.asarray((rect.x0 - 1, rect.y0 - 1, rect.x1 + 1, rect.y1 + 1), dtype=np.float32))


def _page_lines(page: pymupdf.Page) -> list[dict[str, Any]]:
    """Horizontal text lines in content-stream order with dominant font size and bold."""
    d = page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT)
    lines: list[dict[str, Any]] = []
    for b in d.get("blocks", []):
        if b.get("type") != 0:
            continue
        for ln in b.get("lines", []):
            dx, dy = ln.get("dir", (1, 0))
            if abs(dy) > 0.1 or dx <= 0:  # rotated text (e.g. the arXiv side stamp)
                continue
            spans = [s for s in ln.get("spans", []) if s.get("text")]
            text = "".join(s["text"] for s in spans)
            if not text.strip():
                continue
            weights: dict[float, int] = {}
            bold_chars = 0
            n = 0
            for s in spans:
                k = len(s["text"].strip())
                size = round(float(s["size"]), 2)
                weights[size] = weights.get(size, 0) + k
                if (s.get("flags", 0) & BOLD_FLAG) or "bold" in s.get("font", "").lower():
                    bold_chars += k
                n += k
            size = max(weights.items(), key=lambda kv: kv[1])[0]
            x0, y0, x1, y1 = ln["bbox"]
            prev = lines[-1] if lines else None
            # PyMuPDF may cut one visual line into several: glue pieces on the same baseline
            if (prev is not None and prev["block"] == b["number"] and abs(prev["y0"] - y0) < 0.3 * (y1 - y0)
                    and x0 >= prev["x1"] - 1):
                prev["text"] += " " + text
                prev["x1"] = max(prev["x1"], x1)
                prev["y1"] = max(prev["y1"], y1)
                prev["_n"] += n
                prev["_bold"] += bold_chars
                continue
            lines.append({"text": text, "size": size, "_bold": bold_chars, "_n": n, "x0": x0, "y0": y0,
                          "x1": x1, "y1": y1, "block": b["number"]})
    for ln in lines:
        ln["bold"] = ln["_n"] > 0 and ln["_bold"] * 2 >= ln["_n"]
    return lines


def _overlap_x(a0: float, a1: float, b0: float, b1: float) -> bool:
    return min(a1, b1) - max(a0, b0) > 0


def _nearby_caption(lines: list[dict[str, Any]], rect: pymupdf.Rect) -> str | None:
    """The "Figure N: ..." text right below (preferred) or above an image, whole block."""
    best: tuple[int, float, int] | None = None
    for i, ln in enumerate(lines):
        if not CAPTION.match(ln["text"]) or not _overlap_x(ln["x0"], ln["x1"], rect.x0, rect.x1):
            continue
        below = ln["y0"] - rect.y1
        above = rect.y0 - ln["y1"]
        if -2 <= below <= CAPTION_MAX_GAP:
            cand = (0, below, i)
        elif -2 <= above <= CAPTION_MAX_GAP:
            cand = (1, above, i)
        else:
            continue
        if best is None or cand < best:
            best = cand
    if best is None:
        return None
    i = best[2]
    blk = lines[i]["block"]
    parts = [lines[i]["text"]]
    for ln in lines[i + 1:]:
        if ln["block"] != blk:
            break
        parts.append(ln["text"])
    return _WS.sub(" ", " ".join(parts)).strip()


def _save_image(doc: pymupdf.Document, xref: int, smask: int, out: Path) -> tuple[int, int]:
    """Write image `xref` as PNG with its soft mask applied; returns (width, height)."""
    pix = pymupdf.Pixmap(doc, xref)
    if pix.colorspace is not None and pix.colorspace.n > 3:  # CMYK etc. -> RGB (PNG needs it)
        pix = pymupdf.Pixmap(pymupdf.csRGB, pix)
    if smask:
        mask = pymupdf.Pixmap(doc, smask)
        if pix.alpha:
            pix = pymupdf.Pixmap(pix, 0)  # drop the existing alpha before adding the mask
        pix = pymupdf.Pixmap(pix, mask)
    out.parent.mkdir(parents=True, exist_ok=True)
    pix.save(str(out))
    return pix.width, pix.height


def _pdf_title(doc: pymupdf.Document, first_lines: list[dict[str, Any]]) -> str | None:
    t = (doc.metadata or {}).get("title") or ""
    t = t.strip()
    if t and not re.match(r"(?i)^(microsoft (word|powerpoint)|untitled|document\d*$)", t) and not t.lower().endswith((".doc", ".docx", ".tex", ".pdf", ".dvi")):
        return t
    if not first_lines:
        return None
    # else the largest line(s) on page 1, unless that is a heading ("1 Introduction", "Abstract")
    top = max(ln["size"] for ln in first_lines)
    parts = []
    for ln in first_lines:
        if abs(ln["size"] - top) < 0.5:
            parts.append(ln["text"].strip())
        elif parts:
            break
    title = _WS.sub(" ", " ".join(parts)).strip()
    if not title or _HEADING_LIKE.match(title) or len(title) > 250:
        return None
    return title


def extract_pdf(path: Path, doc_id: str, images_dir: Path | None) -> LoadedDoc:
    """Lines, tables and images of one PDF in reading order; DocumentError if unusable."""
    try:
        doc = pymupdf.open(str(path))
    except Exception as e:
        raise DocumentError(f"cannot open as PDF, corrupt or not a PDF ({type(e).__name__}: {e})") from e
    try:
        if doc.needs_pass:
            raise DocumentError("encrypted: the PDF needs a password")
        if not doc.is_pdf:
            raise DocumentError("not a PDF document")
        if doc.page_count == 0:
            raise DocumentError("the PDF has zero pages")
        loaded = _extract_pages(doc, path, doc_id, images_dir)
        if doc.is_repaired:  # a truncated or damaged file: MuPDF reads what it can, which may be part of the text
            damaged = "damaged PDF (truncated, or a broken cross-reference table) repaired on reading: text may be lost"
            loaded.message = "; ".join(m for m in (damaged, loaded.message) if m)
        return loaded
    finally:
        doc.close()


def find_page_tables(page: pymupdf.Page, max_drawings: int = TABLE_MAX_DRAWINGS) -> tuple[list[Any], bool]:
    """(tables, skipped): find_tables (ruled tables, found by their lines), unless the page's
    vector drawings cannot make one or there are more than `max_drawings` of them (0: no limit).

    find_tables (without the layout model) builds its edges only from the page's vector paths
    (``get_drawings``, i.e. ``get_cdrawings``), so a page without drawings, or whose drawings
    make no vertical edge (table_rules.py), gets no table, but find_tables first reads every
    character of the page into Python dicts (~0.1 s per text page); skipping it changes no
    table. Many drawings: find_tables costs ~60-100 µs per path, so a page of diagrams (a
    TikZ manual: thousands of paths a page) costs 0.3-1 s while its text takes 10 ms;
    get_cdrawings costs a tenth of that, and a ruled table needs far fewer paths."""
    paths = page.get_cdrawings()
    if not paths or not may_hold_ruled_table(page.rotation, paths):
        return [], False
    if max_drawings and len(paths) > max_drawings:
        return [], True
    try:
        with fast_table_chars():
            return list(page.find_tables(use_layout=False).tables), False
    except Exception:  # find_tables can fail on odd drawings; text still counts
        return [], False


def _extract_pages(doc: pymupdf.Document, path: Path, doc_id: str, images_dir: Path | None) -> LoadedDoc:
    blocks: list[Line] = []
    images: list[ImageRecord] = []
    order = 0
    seen_xrefs: set[int] = set()
    bad_pages: list[str] = []
    first_lines: list[dict[str, Any]] = []
    drawing_pages: list[int] = []  # pages whose table search was skipped
    n_chars = 0
    for pno in range(doc.page_count):
        try:
            page = doc[pno]
            lines = _page_lines(page)
        except Exception as e:  # one broken page: keep the rest, say which page
            bad_pages.append(f"page {pno + 1} unreadable ({type(e).__name__}: {e})")
            continue
        if pno == 0:
            first_lines = lines
        n_chars += sum(len(ln["text"].strip()) for ln in lines)
        # tables: read cell by cell; lines inside a table are not body text
        objects: list[dict[str, Any]] = []
        tables, skipped = find_page_tables(page, TABLE_MAX_DRAWINGS)
        if skipped:
            drawing_pages.append(pno + 1)
        chars = PageChars(page) if tables else None
        for t in tables:
            cells = read_table_cells(page, t, chars)
            if len(cells) < 2 or max(len(r) for r in cells) < 2:
                continue
            r = pymupdf.Rect(t.bbox)
            objects.append({"kind": "table", "rect": r, "text": table_markdown(cells)})
        if objects:
            def in_table(ln: dict[str, Any]) -> bool:
                cx, cy = (ln["x0"] + ln["x1"]) / 2, (ln["y0"] + ln["y1"]) / 2
                return any(o["rect"].x0 - 1 <= cx <= o["rect"].x1 + 1 and o["rect"].y0 - 1 <= cy <= o["rect"].y1 + 1
                           for o in objects)
            lines = [ln for ln in lines if not in_table(ln)]
        # images: pixel size filter, soft mask applied, each xref once per document
        k = 0
        for img in page.get_images(full=True):
            xref, smask, w, h = img[0], img[1], img[2], img[3]
            if xref in seen_xrefs or min(w, h) < MIN_IMAGE_SIZE:
                continue
            rects = page.get_image_rects(xref)
            if not rects:
                continue
            seen_xrefs.add(xref)
            k += 1
            rect = pymupdf.Rect(rects[0])
            image_id = f"{doc_id}:p{pno + 1}:img{k}"
            out_path: str | None = None
            has_pixels = False
            if images_dir is not None:
                out = Path(images_dir) / f"{doc_id}_p{pno + 1}_img{k}.png"
                try:
                    w, h = _save_image(doc, xref, smask, out)
                    out_path, has_pixels = str(out), True
                except Exception as e:
                    bad_pages.append(f"page {pno + 1} image {k} unreadable ({type(e).__name__}: {e})")
            objects.append({"kind": "image", "rect": rect, "rec": ImageRecord(
                image_id=image_id, doc_id=doc_id, page=pno + 1, path=out_path, width=int(w), height=int(h),
                has_pixels=has_pixels, nearby_caption=_nearby_caption(lines, rect),
                x0=rect.x0, y0=rect.y0, x1=rect.x1, y1=rect.y1,
            )})
        # reading order: an object goes before the first line below its top edge in its column
        items: list[tuple[str, Any]] = [("line", ln) for ln in lines]
        for o in sorted(objects, key=lambda o: (o["rect"].y0, o["rect"].x0)):
            r = o["rect"]
            pos = next((i for i, (kind, ln) in enumerate(items)
                        if kind == "line" and ln["y0"] >= r.y0 - 1 and _overlap_x(ln["x0"], ln["x1"], r.x0, r.x1)),
                       len(items))
            items.insert(pos, ("obj", o))
        for kind, it in items:
            if kind == "line":
                blocks.append(Line(
                    it["text"], pno + 1, order, "text", font_size=float(it["size"]), bold=bool(it["bold"]),
                    x0=it["x0"], y0=it["y0"], x1=it["x1"], y1=it["y1"], line_height=it["y1"] - it["y0"],
                    block=(pno + 1) * 10000 + it["block"], doc_id=doc_id,
                ))
            elif it["kind"] == "table":
                r = it["rect"]
                blocks.append(Line(it["text"], pno + 1, order, "table", x0=r.x0, y0=r.y0, x1=r.x1, y1=r.y1, doc_id=doc_id))
            else:
                it["rec"].order = order
                images.append(it["rec"])
            order += 1
    if n_chars == 0:
        for rec in images:  # the document is dropped: so are its PNGs
            if rec.path:
                Path(rec.path).unlink(missing_ok=True)
        raise DocumentError(
            f"no text layer in {doc.page_count} page(s) (image-only or scanned PDF; OCR is not supported)"
        )
    if drawing_pages:
        bad_pages.append(f"no table search on {len(drawing_pages)} page(s) with more than {TABLE_MAX_DRAWINGS} "
                         f"vector drawings: {_page_ranges(drawing_pages)}")
    return LoadedDoc(
        title=_pdf_title(doc, first_lines), n_pages=doc.page_count, blocks=blocks, images=images,
        message="; ".join(bad_pages),
    )


def _page_ranges(pages: list[int]) -> str:
    """[1, 2, 3, 7] -> 'pages 1-3, 7'."""
    parts: list[str] = []
    start = prev = pages[0]
    for p in pages[1:] + [None]:  # type: ignore[list-item]
        if p is not None and p == prev + 1:
            prev = p
            continue
        parts.append(f"{start}-{prev}" if prev > start else f"{start}")
        if p is not None:
            start = prev = p
    return "pages " + ", ".join(parts)
