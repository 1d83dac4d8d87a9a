"""DVC stage build_tree: extracted lines + captions -> document/section/paragraph/sentence nodes."""
from __future__ import annotations

from pathlib import Path

from stages.core.common.artifacts import read_parquet, write_json, write_parquet
from stages.core.common.cli import run
from stages.core.common.params import load_params, section
from stages.core.engine.local import open_engine
from stages.core.tree.build import (
    TreeParams,
    build_tree_on,
    doc_inputs,
    nodes_frame,
    tree_stats,
)


def main() -> None:
    params = load_params()
    cfg = section(TreeParams, "tree", params)
    documents = read_parquet("artifacts/extract/documents.parquet", "extract")
    blocks = read_parquet("artifacts/extract/blocks.parquet", "extract")
    images = read_parquet("artifacts/extract/images.parquet", "extract")
    captions = read_parquet("artifacts/caption/captions.parquet", "caption")
    with open_engine(params) as engine:
        nodes = nodes_frame(build_tree_on(engine, doc_inputs(documents, blocks, images, captions), cfg))
    write_parquet(nodes, Path("artifacts/tree/nodes.parquet"))
    stats = tree_stats(nodes, images, captions)
    write_json(stats, Path("metrics/tree.json"))
    print("build_tree: " + ", ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    run(main, "build_tree")
