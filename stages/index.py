"""index: the LanceDB vector table and the BM25 keyword units."""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

from stages.core.common.artifacts import parquet_metadata, read_parquet
from stages.core.common.cli import run
from stages.core.common.dataio import read_metadata
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.index.store import IndexParams, build_index

VECTORS = Path("artifacts/embed/vectors.parquet")
OUT = Path("artifacts/index")


def main() -> None:
    params = load_params()
    p = section(IndexParams, "index", params)
    nodes = read_parquet("artifacts/tree/nodes.parquet", "build_tree")
    metadata = read_metadata(data_params(params).metadata)
    model = parquet_metadata(VECTORS, "embed").get("treerag.model", "unknown")
    tmp = OUT.with_name(OUT.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    info = build_index(nodes, VECTORS, metadata, tmp, p, model)
    shutil.rmtree(OUT, ignore_errors=True)
    tmp.rename(OUT)
    logging.info("index: %s", info)


if __name__ == "__main__":
    run(main, "index")
