"""Turn a corpus folder (PDF, WattBot JSON, Markdown, plain text) into extract rows.

Every format becomes the same three tables (documents, blocks, images), so build_tree
has one input shape. Rows of ``blocks`` are *lines*: one text line of the source with
its raw text (whitespace is normalised later by build_tree), plus one row per table
(``kind="table"``, markdown text, bbox of the table). PDF lines carry the dominant
font size, bold (half or more of the characters), bbox and line_height (the line's box
height, pt); flat formats (JSON, md, txt) leave those null. ``block`` is the source
block (PyMuPDF block, JSON paragraph, blank-line separated chunk): a paragraph hint.
``order`` is one reading-order counter per document shared with images.order, so an
image's place among the lines is known (blocks.order has gaps where images sit). A bad file never takes the others down: it becomes a
``status="skipped"`` document with a message, a warning on stderr naming the file,
or, with ``extract.on_error: fail``, one error listing every bad file.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import polars as pl
from tqdm import tqdm

from stages.core.common.dataio import read_metadata
from stages.core.common.errors import UserError
from stages.core.extract.pdf import extract_pdf
from stages.core.extract.records import (
    MIN_IMAGE_SIZE,
    DocRecord,
    DocumentError,
    ExtractResult,
    ImageRecord,
    Line,
    LoadedDoc,
)
from stages.core.extract.workers import LoadJob, LoadOutcome, engine_load_all, load_all

FORMATS = {".pdf": "pdf", ".json": "json", ".md": "md", ".markdown": "md", ".txt": "txt"}


@dataclass
class ExtractParams:
    """params.yaml `extract` section."""

    on_error: Literal["skip", "fail"] = "skip"
    workers: int = 0  # processes parsing files at once; 0 = one per CPU core

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.workers < 0:
            raise ParamError("params.yaml: extract.workers must be >= 0 (0 = one per CPU core)")

    @property
    def n_workers(self) -> int:
        return self.workers or os.cpu_count() or 1


class ExtractError(UserError, RuntimeError):
    """Raised with on_error=fail: lists every file that could not be extracted."""


def warn(msg: str) -> None:
    """Per-file warnings go to stderr, one line each, so they show in `dvc repro` output."""
    sys.stderr.write(f"WARNING extract: {msg}\n")
    sys.stderr.flush()


def _year(v: Any) -> int | None:
    m = re.search(r"\b(1[89]\d\d|20\d\d)\b", str(v or ""))
    return int(m.group(1)) if m else None


def _decode(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


# --------------------------------------------------------------------------- JSON
def load_wattbot_json(path: Path, doc_id: str) -> LoadedDoc:
    """The pre-extracted WattBot JSON: one block per source paragraph, one row per line.

    Image paragraphs there are placeholders ("[Image page=3 ...]") without pixel data:
    they become images with has_pixels=False (decorations below the size limit dropped).
    """
    try:
        data = json.loads(_decode(path.read_bytes()))
    except (json.JSONDecodeError, ValueError) as e:
        raise DocumentError(f"not valid JSON ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("sections"), list):
        raise DocumentError("not a corpus JSON document (expected an object with a 'sections' list)")
    blocks: list[Line] = []
    images: list[ImageRecord] = []
    order = 0
    block_id = 0
    n_pages = 0
    for si, sec in enumerate(data["sections"]):
        if not isinstance(sec, dict):
            continue
        page = _page_of(sec.get("metadata"), si + 1)
        n_pages = max(n_pages, page)
        for para in sec.get("paragraphs") or []:
            if not isinstance(para, dict):
                continue
            meta = para.get("metadata") or {}
            page_p = _page_of(meta, page)
            if meta.get("attachment_type") == "image" or str(para.get("text", "")).startswith("[Image "):
                w, h = int(meta.get("image_width") or 0), int(meta.get("image_height") or 0)
                if min(w, h) < MIN_IMAGE_SIZE:
                    continue
                idx = meta.get("image_index", len(images) + 1)
                images.append(ImageRecord(
                    image_id=f"{doc_id}:p{page_p}:img{idx}", doc_id=doc_id, page=page_p, path=None,
                    width=w, height=h, has_pixels=False, nearby_caption=None, order=order,
                ))
                order += 1
                continue
            block_id += 1
            for line in str(para.get("text") or "").split("\n"):
                if not line.strip():
                    block_id += 1  # a blank line inside a paragraph is a break too
                    continue
                blocks.append(Line(line.rstrip(), page_p, order, "text", block=block_id, doc_id=doc_id))
                order += 1
    if not any(b.text.strip() for b in blocks):
        raise DocumentError("no text in any section")
    meta = data.get("metadata") or {}
    return LoadedDoc(
        title=(data.get("title") or None), n_pages=n_pages, blocks=blocks, images=images,
        url=meta.get("url") or None, year=_year(meta.get("year")),
    )


def _page_of(meta: Any, default: int) -> int:
    try:
        return int((meta or {}).get("page", default))
    except (TypeError, ValueError):
        return default


# ---------------------------------------------------------------- Markdown / text
_MD_IMAGE = re.compile(r"^\s*!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)[^)]*\)\s*$")


def load_markdown(path: Path, doc_id: str, images_dir: Path | None = None) -> LoadedDoc:
    """Markdown: blank lines separate blocks, `|` lines form a table row, `![..](..)` an image."""
    return _load_flat(path, doc_id, images_dir, markdown=True)


def load_text(path: Path, doc_id: str, images_dir: Path | None = None) -> LoadedDoc:
    """Plain text: blank lines separate blocks; the first short line is the title."""
    return _load_flat(path, doc_id, images_dir, markdown=False)


def _load_flat(path: Path, doc_id: str, images_dir: Path | None, markdown: bool) -> LoadedDoc:
    text = _decode(path.read_bytes()).replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise DocumentError("empty file: no text")
    lines = text.split("\n")
    blocks: list[Line] = []
    images: list[ImageRecord] = []
    order, block_id, i = 0, 1, 0
    title = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            block_id += 1
            i += 1
            continue
        if markdown and line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i].strip())
                i += 1
            blocks.append(Line("\n".join(rows), 1, order, "table", block=block_id, doc_id=doc_id))
            order += 1
            block_id += 1
            continue
        m = _MD_IMAGE.match(line) if markdown else None
        if m:
            rec = _markdown_image(path, doc_id, m.group("src"), m.group("alt"), len(images) + 1,
                                  order, images_dir)
            if rec is not None:
                images.append(rec)
                order += 1
            block_id += 1
            i += 1
            continue
        if title is None:
            if markdown and re.match(r"^#\s+\S", line):
                title = line.lstrip("#").strip()
            elif not markdown and len(line.strip()) <= 150:
                title = line.strip()
        blocks.append(Line(line.rstrip(), 1, order, "text", block=block_id, doc_id=doc_id))
        order += 1
        i += 1
    return LoadedDoc(title=title, n_pages=1, blocks=blocks, images=images)


def _markdown_image(md_path: Path, doc_id: str, src: str, alt: str, idx: int, order: int,
                    images_dir: Path | None) -> ImageRecord | None:
    """A local image referenced by Markdown, converted to PNG; a missing one is a placeholder."""
    image_id = f"{doc_id}:p1:img{idx}"
    f = (md_path.parent / src)
    caption = alt.strip() or None
    if images_dir is None or not f.is_file():
        return ImageRecord(image_id, doc_id, 1, None, 0, 0, False, caption, order)
    import pymupdf

    try:
        pix = pymupdf.Pixmap(str(f))
    except Exception as e:  # unreadable image: keep it as a placeholder, say so
        warn(f"{md_path}: image {src} unreadable ({e}); kept without pixels")
        return ImageRecord(image_id, doc_id, 1, None, 0, 0, False, caption, order)
    if min(pix.width, pix.height) < MIN_IMAGE_SIZE:
        return None
    images_dir.mkdir(parents=True, exist_ok=True)
    out = images_dir / f"{doc_id}_p1_img{idx}.png"
    if pix.colorspace is not None and pix.colorspace.n > 3:
        pix = pymupdf.Pixmap(pymupdf.csRGB, pix)
    pix.save(str(out))
    return ImageRecord(image_id, doc_id, 1, str(out), pix.width, pix.height, True, caption, order)


# ---------------------------------------------------------------------- dispatch
def find_corpus_files(corpus_dir: Path) -> list[Path]:
    """All files of a known format under corpus_dir, sorted (hidden files ignored)."""
    if not corpus_dir.is_dir():
        raise FileNotFoundError(f"{corpus_dir}: corpus folder not found (params.yaml data.corpus_dir)")
    return sorted(
        p for p in corpus_dir.rglob("*")
        if p.is_file() and p.suffix.lower() in FORMATS and not any(part.startswith(".") for part in p.relative_to(corpus_dir).parts)
    )


def _doc_id_for(path: Path, fmt: str) -> str:
    if fmt == "json":
        try:
            data = json.loads(_decode(path.read_bytes()))
            if isinstance(data, dict) and str(data.get("document_id") or "").strip():
                return str(data["document_id"]).strip()
        except Exception:
            pass  # the loader reports the real problem
    return path.stem


def load_one(path: Path, doc_id: str, fmt: str, params: ExtractParams, images_dir: Path | None) -> LoadedDoc:
    """Load one file of any known format (raises DocumentError for an unusable file)."""
    if fmt == "pdf":
        return extract_pdf(path, doc_id, images_dir)
    if fmt == "json":
        return load_wattbot_json(path, doc_id)
    loader: Callable[..., LoadedDoc] = load_markdown if fmt == "md" else load_text
    return loader(path, doc_id, images_dir)


def load_metadata_table(path: str | Path | None) -> dict[str, dict[str, str]]:
    """metadata.csv as {id: row}; an empty path means no metadata."""
    if not path:
        return {}
    p = Path(path)
    if not p.exists():
        warn(f"{p}: metadata file not found; titles/urls come from the files themselves")
        return {}
    return {r["id"].strip(): r for r in read_metadata(p).iter_rows(named=True) if (r.get("id") or "").strip()}


def extract_corpus(corpus_dir: str | Path, params: ExtractParams, images_dir: str | Path | None = None,
                   metadata_path: str | Path | None = None, progress: bool = True, engine: Any = None) -> ExtractResult:
    """Extract every file; bad files are skipped with a warning or, with on_error=fail, raise.

    Files are parsed by `extract.workers` processes; documents, blocks, images and
    warnings come out in file order, identical to one worker. A doc_id is read from its
    first file; a later file with the same id is only read if every earlier one failed
    (otherwise it is skipped as a duplicate, and never parsed). ``engine`` (`engine: ray`): the files are
    parsed by its workers instead of `extract.workers` processes, with the same results.
    """
    corpus = Path(corpus_dir)
    files = find_corpus_files(corpus)
    meta = load_metadata_table(metadata_path)
    img_dir = Path(images_dir) if images_dir is not None else None
    jobs = [LoadJob(path, _doc_id_for(path, FORMATS[path.suffix.lower()]), FORMATS[path.suffix.lower()])
            for path in files]
    outcomes: list[LoadOutcome | None] = [None] * len(jobs)
    pages = 0
    run_jobs = load_all if engine is None or engine.kind == "local" else engine_load_all(engine)

    def done(outcome: LoadOutcome) -> None:  # the bar counts files; its postfix the pages read so far
        nonlocal pages
        pages += outcome.loaded.n_pages if outcome.loaded is not None else 0
        bar.update(1)
        bar.set_postfix(pages=pages)

    with tqdm(total=len(jobs), desc="extract: files (text, tables, images)", unit="file", disable=not progress,
              file=sys.stderr) as bar:
        while True:  # rounds: the first file of each doc_id; a failed one hands over to the next file
            loaded_ids = {j.doc_id for j, o in zip(jobs, outcomes) if o is not None and o.loaded is not None}
            batch: list[int] = []
            claimed: set[str] = set()
            for i, job in enumerate(jobs):
                if outcomes[i] is None and job.doc_id not in loaded_ids and job.doc_id not in claimed:
                    claimed.add(job.doc_id)
                    batch.append(i)
            if not batch:
                break
            results = run_jobs(load_one, [jobs[i] for i in batch], params, img_dir, params.n_workers, done)
            for i, r in zip(batch, results, strict=True):
                outcomes[i] = r
        bar.update(len(jobs) - bar.n)  # duplicates are never parsed
    docs: list[DocRecord] = []
    blocks: list[Line] = []
    images: list[ImageRecord] = []
    seen: dict[str, Path] = {}
    failures: list[str] = []
    for job, outcome in zip(jobs, outcomes, strict=True):
        path, doc_id = job.path, job.doc_id
        rec = DocRecord(doc_id=doc_id, source=str(path), format=job.fmt)
        if outcome is not None and outcome.stderr:
            sys.stderr.write(outcome.stderr)
        if doc_id in seen:  # never parsed (see above)
            reason: str | None = f"duplicate doc_id {doc_id!r} (already read from {seen[doc_id]})"
        else:  # the first file of its doc_id, or every earlier one failed: it was parsed
            assert outcome is not None
            reason = outcome.error
        if reason is not None:
            failures.append(f"{path}: {reason}")
            rec.status, rec.message = "skipped", reason
            warn(f"skipped {path}: {reason}")
            docs.append(rec)
            continue
        assert outcome is not None and outcome.loaded is not None
        loaded = outcome.loaded
        seen[doc_id] = path
        m = meta.get(doc_id, {})
        rec.title = (m.get("title") or "").strip() or loaded.title or doc_id
        rec.url = (m.get("url") or "").strip() or loaded.url
        rec.year = _year(m.get("year")) or loaded.year
        rec.n_pages = loaded.n_pages
        rec.message = loaded.message
        if loaded.message:
            warn(f"{path}: {loaded.message}")
        docs.append(rec)
        blocks.extend(loaded.blocks)
        images.extend(loaded.images)
    if failures and params.on_error == "fail":
        raise ExtractError(
            f"{len(failures)} file(s) could not be extracted (extract.on_error=fail):\n  " + "\n  ".join(failures)
        )
    if not files:
        raise ExtractError(f"{corpus}: no document in the corpus folder (params.yaml data.corpus_dir): no file "
                           f"ending in {', '.join(FORMATS)}")
    if not any(d.status == "ok" for d in docs):  # every later stage would "succeed" on nothing
        raise ExtractError(f"{corpus}: no readable document: all {len(files)} file(s) were skipped (first: "
                           f"{failures[0]})")
    if failures:
        warn(f"{len(failures)} of {len(files)} file(s) skipped; {len(files) - len(failures)} document(s) read")
    return ExtractResult(docs, blocks, images)


# ---------------------------------------------------------------- to DataFrames
DOC_SCHEMA = {"doc_id": pl.Utf8, "source": pl.Utf8, "format": pl.Utf8, "title": pl.Utf8, "url": pl.Utf8,
              "year": pl.Int64, "n_pages": pl.Int64, "status": pl.Utf8, "message": pl.Utf8}
BLOCK_SCHEMA = {"doc_id": pl.Utf8, "page": pl.Int64, "order": pl.Int64, "kind": pl.Utf8, "text": pl.Utf8,
                "font_size": pl.Float64, "bold": pl.Boolean, "x0": pl.Float64, "y0": pl.Float64,
                "x1": pl.Float64, "y1": pl.Float64, "line_height": pl.Float64, "block": pl.Int64}
IMAGE_SCHEMA = {"image_id": pl.Utf8, "doc_id": pl.Utf8, "page": pl.Int64, "path": pl.Utf8, "width": pl.Int64,
                "height": pl.Int64, "has_pixels": pl.Boolean, "nearby_caption": pl.Utf8, "order": pl.Int64,
                "x0": pl.Float64, "y0": pl.Float64, "x1": pl.Float64, "y1": pl.Float64}


def to_frames(result: ExtractResult) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """documents, blocks, images as typed DataFrames (empty ones keep their columns)."""
    return (
        pl.DataFrame([asdict(d) for d in result.documents], schema=DOC_SCHEMA),
        pl.DataFrame([{k: getattr(b, k) for k in BLOCK_SCHEMA} for b in result.blocks], schema=BLOCK_SCHEMA),
        pl.DataFrame([asdict(i) for i in result.images], schema=IMAGE_SCHEMA),
    )
