"""Bottom-up tree embeddings: leaves are embedded, parents aggregate their children.

A sentence (and an image/table row sentence) is embedded directly; a paragraph's
vector is the length-weighted mean of its sentences, a section's of its paragraphs,
a document's of its sections (the KohakuRAG paper, §4.1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.core.embed.embedder import (
    Embedder,
    EmbeddingCache,
    EmbedParams,
    aggregate,
    embed_texts,
)

LEVELS = ("document", "section", "paragraph", "sentence")


@dataclass
class EmbedResult:
    """Vectors for every node plus what it cost."""

    vectors: pl.DataFrame  # node_id, level, doc_id, vector (Array[f32, dim])
    model: str
    dim: int
    n_embedded: int  # texts sent to the embedder (cache misses)
    n_texts: int  # texts needed in all


def embed_tree(nodes: pl.DataFrame, embedder: Embedder, cache: EmbeddingCache, params: EmbedParams) -> EmbedResult:
    """Embed the leaves of `nodes` and aggregate bottom-up to every parent."""
    ids = nodes["node_id"].to_list()
    levels = nodes["level"].to_list()
    parents = nodes["parent_id"].to_list()
    texts = nodes["text"].fill_null("").to_list()
    index = {nid: i for i, nid in enumerate(ids)}
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parents):
        if p is not None and p in index:
            children.setdefault(index[p], []).append(i)

    vec = np.zeros((len(ids), embedder.dim), dtype=np.float32)
    have = np.zeros(len(ids), dtype=bool)
    lens = np.array([len(t) for t in texts], dtype=np.float32)

    # leaves: sentences, plus any childless node below the document level
    direct = [i for i, lv in enumerate(levels) if lv == "sentence" or (lv != "document" and i not in children)]
    dvecs, n_new = embed_texts([texts[i] for i in direct], embedder, cache, params.batch_size,
                                 desc="embed: sentences, rows, media")
    direct_vec = dict(zip(direct, dvecs))

    for level in reversed(LEVELS):
        for i in (j for j, lv in enumerate(levels) if lv == level):
            kids = [k for k in children.get(i, []) if have[k]]
            agg = aggregate(vec[kids], lens[kids]) if kids else None
            v = agg if agg is not None else direct_vec.get(i)
            if v is not None:
                vec[i] = v
                have[i] = True

    keep = np.flatnonzero(have)
    df = pl.DataFrame(
        {
            "node_id": [ids[i] for i in keep],
            "level": [levels[i] for i in keep],
            "doc_id": nodes["doc_id"].gather(keep).to_list(),
            "vector": vec[keep],
        },
        schema={"node_id": pl.String, "level": pl.String, "doc_id": pl.String, "vector": pl.Array(pl.Float32, embedder.dim)},
    )
    return EmbedResult(df, embedder.name, embedder.dim, n_new, len(direct))
