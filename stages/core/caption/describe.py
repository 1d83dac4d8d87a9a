"""Give image nodes searchable text.

With a vision endpoint (OpenAI-compatible, image sent as a data URL) a model describes
the data values, axes and units. Offline (the default) the document's own caption next
to the image ("Figure 3: ...") is used, so images are still found by keyword search.
Placeholders without pixel data (the WattBot JSON) are skipped and counted.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import polars as pl
from tqdm import tqdm

from stages.core.common.concurrency import ordered_map
from stages.core.common.vision import VisionParams, png_data_url
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLM

DEFAULT_PROMPT = (
    "Describe this image from a technical document. Focus on: 1. Data values and numerical "
    "information 2. Axis labels and units for charts 3. Key visual elements and their relationships "
    "Keep the description concise (2-3 sentences)."
)

TIMEOUT_S = 120.0  # per vision request: a description of one image, longer than that is a stuck endpoint
# client retries on 5xx/timeouts (429s wait as the llm section's rate limit says); then the document's caption is used
MAX_RETRIES = 2
TEMPERATURE = 0.0  # greedy descriptions: the same image gets the same caption on every run

CAPTION_SCHEMA = {"image_id": pl.Utf8, "doc_id": pl.Utf8, "page": pl.Int64, "caption": pl.Utf8,
                  "caption_source": pl.Utf8}


@dataclass
class CaptionParams:
    """params.yaml `caption` section."""

    max_tokens: int = 200
    prompt: str = DEFAULT_PROMPT

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.max_tokens < 1:
            raise ParamError("params.yaml: caption.max_tokens must be >= 1")
        if not self.prompt.strip():
            raise ParamError("params.yaml: caption.prompt must not be empty")


Describer = Callable[[bytes], str]


def vision_llm_params(vision: VisionParams, llm: LLMParams) -> LLMParams:
    """The vision endpoint as an LLM client's params: its URL and model, the captions' timeout and
    retries (TIMEOUT_S, MAX_RETRIES), and the key, concurrency and backoff of the `llm:` section (dvc.yaml lists those keys)."""
    return LLMParams(base_url=vision.base_url, model=vision.model, api_key_env=llm.api_key_env,
                     max_concurrency=llm.max_concurrency, timeout_s=TIMEOUT_S,
                     max_attempts=MAX_RETRIES + 1, backoff_s=llm.backoff_s,
                     backoff_max_s=llm.backoff_max_s, rate_limit_max_wait_s=llm.rate_limit_max_wait_s)


def vision_describer(llm: LLM, params: CaptionParams) -> Describer:
    """A function PNG bytes -> description, asking the vision model through the project's LLM
    client, so every description is cached, retried and throttled like any other call."""

    def describe(png: bytes) -> str:
        url = png_data_url(png)
        messages = [{"role": "user", "content": [{"type": "text", "text": params.prompt},
                                                 {"type": "image_url", "image_url": {"url": url}}]}]
        reply = llm.complete(messages, temperature=TEMPERATURE, seed=0, max_tokens=params.max_tokens)
        return reply.text.strip()

    return describe


def caption_images(images: pl.DataFrame, describe: Describer | None, progress: bool = True,
                   max_workers: int = 1) -> tuple[pl.DataFrame, dict[str, Any]]:
    """One caption row per image, plus counts by source.

    Vision first when configured (the document caption, if any, is kept in front of the
    description); if the call fails for one image, the document caption is used and a
    warning names the image. Up to `max_workers` vision calls run at once (the stage
    passes `llm.max_concurrency`); rows and warnings keep the images' order.
    """
    todo = list(images.iter_rows(named=True))

    def vision(r: dict[str, Any]) -> tuple[str | None, str | None]:
        """(description, error) for one image; (None, None) when there is nothing to ask."""
        if describe is None or not r["has_pixels"] or not r["path"]:
            return None, None
        try:
            return describe(Path(r["path"]).read_bytes()), None
        except Exception as e:  # noqa: BLE001 - one failed image falls back, others go on
            return None, f"{type(e).__name__}: {e}"

    with tqdm(total=len(todo), desc="caption: images (vision)", unit="img", disable=not progress,
              file=sys.stderr) as bar:
        described = ordered_map(vision, todo, max_workers if describe is not None else 1, lambda _: bar.update(1))
    rows = []
    stats = {"images_total": images.height, "vision": 0, "document_caption": 0, "none": 0,
             "placeholder_skipped": 0, "vision_errors": 0}
    for r, (text, error) in zip(todo, described, strict=True):
        caption, source = None, "none"
        if not r["has_pixels"] or not r["path"]:
            stats["placeholder_skipped"] += 1
        else:
            if error is not None:
                stats["vision_errors"] += 1
                sys.stderr.write(f"WARNING caption: vision failed for {r['image_id']} ({r['path']}): "
                                 f"{error}; using the document caption\n")
            elif text:  # keep the document's own caption in front: both are searchable
                doc_cap = (r["nearby_caption"] or "").strip()
                caption, source = (f"{doc_cap}\n{text}" if doc_cap else text), "vision"
            if source == "none" and (r["nearby_caption"] or "").strip():
                caption, source = r["nearby_caption"].strip(), "document_caption"
        stats[source] += 1
        rows.append({"image_id": r["image_id"], "doc_id": r["doc_id"], "page": r["page"],
                     "caption": caption, "caption_source": source})
    return pl.DataFrame(rows, schema=CAPTION_SCHEMA), stats
