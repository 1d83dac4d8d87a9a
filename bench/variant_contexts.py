"""Contexts of labelled questions for a tree/retrieve variant, without touching artifacts/.

    python bench/variant_contexts.py --out /tmp/ctx/flat-base -S tree.table_columns=flat
    python bench/variant_contexts.py --out /tmp/ctx/seg-t150 -S retrieve.trim_tokens=150 -S retrieve.max_context_tokens=650

With a `tree.*` override the tree, its vectors (from the embedding cache: only changed texts
are embedded) and the index are rebuilt under OUT/artifacts; else artifacts/ is used as it is.
Writes OUT/<set>.parquet for dev and train (the retrieve stage's contexts, every attempt), to pass
to `bench/answer_eval.py run --contexts dev=OUT/dev.parquet train=OUT/train.parquet` so that an
ablation compares readers on the exact contexts of each variant (bench/ablation_v13.sh).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.answer_eval import apply_overrides, retrieve_contexts  # noqa: E402
from stages.core.common.artifacts import read_parquet  # noqa: E402
from stages.core.common.dataio import read_metadata  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder  # noqa: E402
from stages.core.embed.tree_vectors import embed_tree  # noqa: E402
from stages.core.index.store import IndexParams, build_index  # noqa: E402
from stages.core.tree.build import TreeParams, build_tree, doc_inputs, nodes_frame  # noqa: E402

SETS = {"dev": ROOT / "data" / "wattbot" / "dev_QA.csv", "train": ROOT / "data" / "wattbot" / "train_QA.csv"}


def build_artifacts(params: dict, out: Path) -> Path:
    """Tree, vectors and index of these params under out/artifacts (extract and caption reused)."""
    art = ROOT / "artifacts"
    docs = doc_inputs(read_parquet(art / "extract" / "documents.parquet", "extract"),
                      read_parquet(art / "extract" / "blocks.parquet", "extract"),
                      read_parquet(art / "extract" / "images.parquet", "extract"),
                      read_parquet(art / "caption" / "captions.parquet", "caption"))
    nodes = nodes_frame(build_tree(docs, section(TreeParams, "tree", params)))
    target = out / "artifacts"
    (target / "tree").mkdir(parents=True, exist_ok=True)
    nodes.write_parquet(target / "tree" / "nodes.parquet")
    cache = EmbeddingCache()
    ep = section(EmbedParams, "embed", params)
    embedder = make_embedder(ep)
    try:
        res = embed_tree(nodes, embedder, cache, ep)
    finally:
        cache.close()
    build_index(nodes, res.vectors, read_metadata(ROOT / params["data"]["metadata"]), target / "index",
                section(IndexParams, "index", params), res.model)
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for <set>.parquet (and artifacts/ with a tree override)")
    ap.add_argument("-S", "--set", action="append", default=[], help="section.key=value override of params.yaml")
    ap.add_argument("--sets", nargs="+", default=["dev", "train"])
    args = ap.parse_args()
    params = apply_overrides(load_params(ROOT / "params.yaml"), args.set)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    art = build_artifacts(params, out) if any(s.startswith("tree.") for s in args.set) else ROOT / "artifacts"
    for name in args.sets:
        ctx = retrieve_contexts(pl.read_csv(SETS.get(name, Path(name)), infer_schema=False), params,
                                art / "index", art / "tree" / "nodes.parquet")
        ctx.write_parquet(out / f"{name}.parquet")
        print(f"{out / name}.parquet: {ctx['question_id'].n_unique()} questions, {ctx.height} units")


if __name__ == "__main__":
    main()
