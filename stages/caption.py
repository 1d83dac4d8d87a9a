"""DVC stage caption: image nodes get text (vision endpoint, else the document's own caption);
up to `llm.max_concurrency` vision requests at once, through the cached LLM client."""
from __future__ import annotations

from pathlib import Path

from stages.core.caption.describe import (
    CaptionParams,
    VisionParams,
    caption_images,
    vision_describer,
    vision_llm_params,
)
from stages.core.common.artifacts import read_parquet, write_json, write_parquet
from stages.core.common.cli import run
from stages.core.common.params import load_params, section
from stages.core.llm.params import LLMParams
from stages.core.llm.session import llm_session


def main() -> None:
    params = load_params()
    vision = section(VisionParams, "vision", params)
    cfg = section(CaptionParams, "caption", params)
    images = read_parquet("artifacts/extract/images.parquet", "extract")
    llm = section(LLMParams, "llm", params)
    if vision.enabled:
        with llm_session(vision_llm_params(vision, llm)) as client:
            captions, stats = caption_images(images, vision_describer(client, cfg), max_workers=llm.max_concurrency)
    else:
        captions, stats = caption_images(images, None)
    write_parquet(captions, Path("artifacts/caption/captions.parquet"))
    write_json(stats, Path("metrics/caption.json"))
    print("caption: " + ", ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    run(main, "caption")
