"""Figures at answer time: a context unit that is a figure is sent with its pixels.

With `vision.base_url` set, an image context unit (a tree paragraph of attachment_type
image, whose text is the figure's caption) is traced back to its PNG in
artifacts/extract/images/ (`FigureIndex`), and the reader's user message carries the
image as an OpenAI image content part right after that unit's text (`with_figures`):
up to `vision.max_images_per_call` figures per call, downscaled so that the longest side
is at most `vision.max_image_px`. A call that holds an image goes to the vision endpoint
(`vision.model`), every other call to the `llm:` endpoint as before (`FigureRouter`);
both through the project's LLM client, so a figure call is cached (the data URL is part
of the messages, hence of the cache key), retried and throttled like any other.

Without a vision endpoint no block has an image and every message is the one built
before this module existed (the same object, byte for byte).
"""
from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.answer.record import ContextBlock, context_blocks, context_levels
from stages.core.common.dataio import InputError
from stages.core.common.vision import VisionParams, png_data_url
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLM, Completion

log = logging.getLogger("treerag.answer")

IMAGES_FILE = Path("artifacts/extract/images.parquet")
CAPTIONS_FILE = Path("artifacts/caption/captions.parquet")
# the readers tag a figure unit "(image)": "[k] doc (image): text" (typed), "[ref_id=doc] (image) text" (free)
_TAG = r"\(image\):? "


def _key(text: str) -> str:
    """Text compared without case, spacing or punctuation (the tree cleans and re-joins captions)."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


@dataclass(frozen=True)
class Figure:
    path: str
    key: str  # _key of the caption the tree made the image node from


class FigureIndex:
    """The figures that became image nodes (pixels and a caption), by (doc_id, page)."""

    def __init__(self, images: pl.DataFrame, captions: pl.DataFrame | None) -> None:
        cap: dict[str, str] = {}
        if captions is not None and captions.height:
            for r in captions.iter_rows(named=True):  # as build_tree's doc_inputs: a caption from some source
                if r.get("caption") and (r.get("caption_source") or "none") != "none":
                    cap[r["image_id"]] = r["caption"]
        self.by_page: dict[tuple[str, int], list[Figure]] = {}
        rows = images.sort("doc_id", "page", "order") if images.height else images
        for r in rows.iter_rows(named=True):
            if r["has_pixels"] and r["path"] and r["image_id"] in cap:
                figure = Figure(r["path"], _key(cap[r["image_id"]]))
                self.by_page.setdefault((r["doc_id"], int(r["page"])), []).append(figure)

    @classmethod
    def load(cls, images: Path = IMAGES_FILE, captions: Path = CAPTIONS_FILE) -> FigureIndex:
        from stages.core.common.artifacts import read_parquet

        return cls(read_parquet(images, "extract"), read_parquet(captions, "caption"))

    def find(self, doc_id: str, page: int | None, text: str) -> str | None:
        """The PNG of the image unit ``text`` on ``page`` of ``doc_id``: the figure whose caption holds
        the unit's text, or the page's only figure; None when that is ambiguous or there is none."""
        figures = self.by_page.get((doc_id, int(page))) if page is not None else None
        if not figures:
            return None
        k = _key(text)
        holding = [f for f in figures if k and k in f.key]
        if len(holding) == 1:
            return holding[0].path
        return figures[0].path if len(figures) == 1 else None


@dataclass
class FigureStats:
    image_units: int = 0  # image context units (all questions, all attempts)
    with_pixels: int = 0  # of them traced to a PNG

    def summary(self) -> str:
        return (f"figures: {self.with_pixels} of {self.image_units} image context units carry their pixels "
                f"(the others: the caption alone)")


def figure_contexts(contexts: pl.DataFrame,
                    index: FigureIndex) -> tuple[dict[str, list[list[ContextBlock]]], FigureStats]:
    """question_id -> [attempt 0 blocks, ...] as `record.context_blocks`, image units with their PNG."""
    stats = FigureStats()
    out: dict[str, list[list[ContextBlock]]] = {}
    for qid, levels in context_levels(contexts).items():
        out[qid] = []
        for rows in levels:
            blocks = []
            for r in rows:
                image = None
                if r["media"] == "image":
                    stats.image_units += 1
                    image = index.find(r["doc_id"], r.get("page"), r["text"] or "")
                    stats.with_pixels += image is not None
                blocks.append(ContextBlock(r["doc_id"], r["text"], r["media"], image))
            out[qid].append(blocks)
    return out, stats


def answer_contexts(contexts: pl.DataFrame, vision: VisionParams) -> dict[str, list[list[ContextBlock]]]:
    """The answer stage's context blocks: with figures' PNGs when the vision endpoint answers, else as always."""
    if not vision.answers_with_figures:
        return context_blocks(contexts)
    blocks, stats = figure_contexts(contexts, FigureIndex.load())
    log.info("answer: %s", stats.summary())
    return blocks


@functools.lru_cache(maxsize=256)
def data_url(path: str, max_px: int) -> str:
    """The PNG as a data URL: the file's own bytes when its longest side is at most ``max_px``,
    else scaled down (aspect kept) to that longest side."""
    import pymupdf

    try:
        raw = Path(path).read_bytes()
        pix = pymupdf.Pixmap(raw)
    except Exception as e:  # noqa: BLE001 - a missing or unreadable PNG: one clear line naming it
        raise InputError(f"{path}: the figure's PNG cannot be read ({type(e).__name__}: {e}); rerun "
                         "`dvc repro extract`, or set vision.max_images_per_call: 0 to answer from captions") from e
    if max(pix.width, pix.height) > max_px:
        scale = max_px / max(pix.width, pix.height)
        pix = pymupdf.Pixmap(pix, max(1, round(pix.width * scale)), max(1, round(pix.height * scale)), None)
        raw = pix.tobytes("png")
    return png_data_url(raw)


def image_part(path: str, vision: VisionParams) -> dict[str, Any]:
    """An OpenAI image content part for one figure."""
    url: dict[str, Any] = {"url": data_url(path, vision.max_image_px)}
    if vision.detail:
        url["detail"] = vision.detail
    return {"type": "image_url", "image_url": url}


def with_figures(messages: list[dict[str, Any]], units: Sequence[ContextBlock],
                 vision: VisionParams | None) -> list[dict[str, Any]]:
    """The messages with the first ``vision.max_images_per_call`` figures of ``units`` as image parts
    in the last (user) message, each right after its unit's text; ``messages`` itself, unchanged,
    when no unit carries an image (no vision endpoint) or the limit is 0."""
    figures = [u for u in units if u.image]
    if not figures or vision is None or vision.max_images_per_call <= 0 or not messages:
        return messages
    user = messages[-1]
    content = user.get("content")
    if not isinstance(content, str):
        return messages
    parts: list[dict[str, Any]] = []
    cursor = 0
    for u in figures[: vision.max_images_per_call]:
        m = re.compile(_TAG + re.escape(u.text)).search(content, cursor)
        if m is None:  # not shown in this message (the reader dropped it): nothing to attach it to
            continue
        parts += [{"type": "text", "text": content[cursor:m.end()]}, image_part(u.image or "", vision)]
        cursor = m.end()
    if not parts:
        return messages
    if cursor < len(content):
        parts.append({"type": "text", "text": content[cursor:]})
    return [*messages[:-1], {**user, "content": parts}]


def has_images(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether any message carries an image content part."""
    return any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
               for m in messages)


class FigureRouter:
    """An LLM that sends a call holding an image to the vision client, every other call to the text client.

    ``stats`` and ``max_concurrency`` are the text client's (the answer stage's progress bar and log);
    the vision client's own session logs its calls."""

    def __init__(self, text: Any, vision: LLM) -> None:
        self.text = text
        self.vision = vision
        self.stats = getattr(text, "stats", None)
        self.max_concurrency = getattr(text, "max_concurrency", 1)

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        return (self.vision if has_images(messages) else self.text).complete(messages, **kwargs)


@contextmanager
def figure_llm(llm: Any, vision: VisionParams, llm_params: LLMParams,
               contexts: dict[str, list[list[ContextBlock]]]) -> Iterator[Any]:
    """``llm`` itself, or (when some context unit carries a figure) a `FigureRouter` over ``llm`` and a
    client of the vision endpoint: `vision.base_url`/`vision.model` with the `llm:` section's key, timeout,
    retries, concurrency and backoff (never llama.cpp's cache_prompt field: a hosted API refuses it)."""
    if not any(b.image for levels in contexts.values() for blocks in levels for b in blocks):
        yield llm
        return
    from stages.core.llm.session import llm_session

    with llm_session(replace(llm_params, base_url=vision.base_url, model=vision.model, prompt_cache=True)) as client:
        yield FigureRouter(llm, client)
