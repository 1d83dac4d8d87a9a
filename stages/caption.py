"""DVC stage caption: image nodes get text (vision endpoint, else the document's own caption);
up to `llm.max_concurrency` vision requests at once."""
from __future__ import annotations

from pathlib import Path

from stages.core.cli import run
from stages.core.artifacts import read_parquet, write_json, write_parquet
from stages.core.captioning import CaptionParams, VisionParams, api_key_from_env, caption_images, openai_describer
from stages.core.llm import LLMParams
from stages.core.params import load_params, section


def main() -> None:
    params = load_params()
    vision = section(VisionParams, "vision", params)
    cfg = section(CaptionParams, "caption", params)
    images = read_parquet("artifacts/extract/images.parquet", "extract")
    llm = section(LLMParams, "llm", params)
    describe = None
    if vision.enabled:
        describe = openai_describer(vision, cfg, api_key_from_env(llm.api_key_env))
    captions, stats = caption_images(images, describe, max_workers=llm.max_concurrency)
    write_parquet(captions, Path("artifacts/caption/captions.parquet"))
    write_json(stats, Path("metrics/caption.json"))
    print("caption: " + ", ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    run(main, "caption")
