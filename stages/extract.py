"""DVC stage extract: corpus files (PDF, WattBot JSON, md, txt) -> documents, blocks, images."""
from __future__ import annotations

import shutil
from pathlib import Path

from stages.core.common.artifacts import write_parquet
from stages.core.common.cli import run
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.engine.local import open_engine
from stages.core.extract.loaders import ExtractParams, extract_corpus, to_frames

OUT = Path("artifacts/extract")


def main() -> None:
    params = load_params()
    data = data_params(params)
    cfg = section(ExtractParams, "extract", params)
    images_dir = OUT / "images"
    shutil.rmtree(images_dir, ignore_errors=True)  # no stale PNGs from an earlier run
    images_dir.mkdir(parents=True, exist_ok=True)
    with open_engine(params) as engine:
        result = extract_corpus(data.corpus(), cfg, images_dir, data.metadata, engine=engine)
    documents, blocks, images = to_frames(result)
    write_parquet(blocks, OUT / "blocks.parquet")
    write_parquet(images, OUT / "images.parquet")
    write_parquet(documents, OUT / "documents.parquet")
    ok = documents.filter(documents["status"] == "ok").height
    print(f"extract: {ok}/{documents.height} documents, {blocks.height} blocks, {images.height} images")


if __name__ == "__main__":
    run(main, "extract")
