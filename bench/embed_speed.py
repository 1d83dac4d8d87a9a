"""Embedding throughput of the local backends, and what each costs in retrieval quality.

  python bench/embed_speed.py                 # speed grid on a 2,000-text sample of the tree's leaves
  python bench/embed_speed.py --full          # + each backend over the whole tree, then recall on dev/train
  python bench/embed_speed.py --n 500 --configs torch:64:0 onnx_int8:64:1
  python bench/embed_speed.py --nodes <fb work>/project/artifacts/tree/nodes.parquet --out /tmp/grid.json

Texts are the ones the embed stage embeds (artifacts/tree/nodes.parquet: sentences and
childless nodes, unique), a seeded sample of them for the grid. Each config is
backend:batch_size:threads (threads 0 = the runtime's default). For each it reports texts/s
(wall), CPU-seconds per 1,000 texts (time.process_time: all threads of this process) and the
cosine of its vectors to the torch reference (mean, min). `windows` embeds whole paragraphs
(one text per paragraph instead of one per sentence) with the first config, to show whether
fewer, longer texts save compute (cost follows tokens, not texts).

--full embeds the whole tree with each backend through the embedding cache (texts/s over
the real run where the backend's vectors were not cached yet; `--fresh` uses an empty cache
so every backend is timed), builds an index from those vectors in a temp folder and measures the retrieve stage's
gold-doc and evidence recall (treerag only, question alone, params.yaml's retrieve section)
on dev and train at 1x and 2x the default budget. Writes bench/results/embed_speed.json.
Run it alone: `flock /tmp/treerag-heavy.lock python bench/embed_speed.py --full`.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stages.core.common.dataio import read_metadata, read_questions  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder  # noqa: E402
from stages.core.embed.tree_vectors import embed_tree  # noqa: E402
from stages.core.index.store import IndexParams, build_index  # noqa: E402
from stages.core.retrieve.metrics import retrieval_metrics  # noqa: E402
from stages.core.retrieve.params import RetrieveParams  # noqa: E402
from stages.core.retrieve.search import Retriever  # noqa: E402

SETS = {"dev": ROOT / "data" / "wattbot" / "dev_QA.csv", "train": ROOT / "data" / "wattbot" / "train_QA.csv"}
DEFAULT_CONFIGS = ["torch:64:0", "torch:64:1", "torch:128:0", "torch:32:0",
                   "onnx:64:0", "onnx:64:1", "onnx_int8:64:0", "onnx_int8:64:1", "onnx_int8:128:0"]
CTX_SCHEMA = {"question_id": pl.String, "doc_id": pl.String, "text": pl.String, "n_tokens": pl.Int64}


def leaf_texts(nodes: pl.DataFrame) -> list[str]:
    """The unique texts the embed stage sends to the embedder (see tree_vectors.embed_tree)."""
    has_kids = set(nodes["parent_id"].drop_nulls().to_list())
    leaves = nodes.filter((pl.col("level") == "sentence")
                          | ((pl.col("level") != "document") & ~pl.col("node_id").is_in(list(has_kids))))
    return list(dict.fromkeys(leaves["text"].fill_null("").to_list()))


def timed_embed(embedder, texts: list[str], batch_size: int) -> tuple[np.ndarray, float, float]:
    """Embed as embed_texts does (sorted by length, batch_size x 8 texts per call): vectors, wall s, CPU s."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    per_call = batch_size * 8
    embedder.embed(texts[:16])  # warm-up: first-call allocations are not throughput
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(order), per_call):
        idx = order[i : i + per_call]
        out[idx] = embedder.embed([texts[j] for j in idx])
    return out, time.perf_counter() - w0, time.process_time() - c0


def parse_config(c: str) -> tuple[str, int, int]:
    backend, batch, threads = c.split(":")
    return backend, int(batch), int(threads)


def speed_grid(texts: list[str], configs: list[str], paragraphs: list[str]) -> dict[str, object]:
    rows, ref = [], None
    chars = sum(len(t) for t in texts)
    for c in configs:
        backend, batch, threads = parse_config(c)
        t0 = time.perf_counter()
        emb = make_embedder(EmbedParams(backend=backend, batch_size=batch, threads=threads))  # type: ignore[arg-type]
        load_s = time.perf_counter() - t0
        vecs, wall, cpu = timed_embed(emb, texts, batch)
        if ref is None:
            if backend != "torch":
                raise SystemExit("the first config must be a torch one: it is the cosine reference")
            ref = vecs
        cos = (vecs * ref).sum(axis=1)
        row = {"config": c, "backend": backend, "batch_size": batch, "threads": threads, "name": emb.name,
               "load_s": round(load_s, 2), "texts": len(texts), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
               "texts_per_s": round(len(texts) / wall, 1), "cpu_s_per_1k": round(1000 * cpu / len(texts), 2),
               "chars_per_s": round(chars / wall), "cos_mean": round(float(cos.mean()), 5),
               "cos_min": round(float(cos.min()), 5)}
        rows.append(row)
        print(f"{c:18s} {row['texts_per_s']:7.1f} texts/s  {row['cpu_s_per_1k']:6.2f} CPU-s/1k  "
              f"cos {row['cos_mean']:.4f} (min {row['cos_min']:.4f})  load {row['load_s']} s", flush=True)
        del emb
    backend, batch, threads = parse_config(configs[0])
    emb = make_embedder(EmbedParams(backend=backend, batch_size=batch, threads=threads))  # type: ignore[arg-type]
    _, wall, cpu = timed_embed(emb, paragraphs, batch)
    pchars = sum(len(t) for t in paragraphs)
    win = {"config": configs[0], "texts": len(paragraphs), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
           "texts_per_s": round(len(paragraphs) / wall, 1), "chars_per_s": round(pchars / wall),
           "mean_chars": round(pchars / max(1, len(paragraphs)), 1)}
    print(f"windows (paragraphs) {win['texts_per_s']} texts/s, {win['chars_per_s']} chars/s "
          f"vs sentences {rows[0]['chars_per_s']} chars/s", flush=True)
    return {"texts": len(texts), "mean_chars": round(chars / len(texts), 1), "configs": rows, "windows": win}


def recall(nodes: pl.DataFrame, backend: str, params: dict, work: Path, fresh: bool,
           threads: int | None = None, batch_size: int | None = None) -> dict[str, object]:
    """Whole tree with `backend` (timed), a temp index, treerag recall on dev/train."""
    ep = section(EmbedParams, "embed", params)
    ep.backend = backend  # type: ignore[assignment]
    if threads is not None:
        ep.threads = threads
    if batch_size is not None:
        ep.batch_size = batch_size
    embedder = make_embedder(ep)
    cache = EmbeddingCache(work / f"{backend}.sqlite" if fresh else None)
    w0, c0 = time.perf_counter(), time.process_time()
    res = embed_tree(nodes, embedder, cache, ep)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    out: dict[str, object] = {"backend": backend, "name": embedder.name, "batch_size": ep.batch_size,
                              "threads": ep.threads, "texts": res.n_texts, "embedded_new": res.n_embedded,
                              "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                              "new_texts_per_s": round(res.n_embedded / wall, 1) if res.n_embedded else None}
    print(f"{backend}: whole tree {res.n_texts} texts, {res.n_embedded} new, in {wall:.0f} s wall, {cpu:.0f} CPU-s "
          f"({out['new_texts_per_s']} new texts/s)", flush=True)
    idx = work / f"index-{backend}"
    build_index(nodes, res.vectors, read_metadata(ROOT / params["data"]["metadata"]), idx,
                section(IndexParams, "index", params), res.model)
    retriever = Retriever(idx, nodes, embedder, cache)
    rp = section(RetrieveParams, "retrieve", params)
    for name, path in SETS.items():
        labels = read_questions(path)
        rows = list(labels.iter_rows(named=True))
        retriever.prepare([r["question"] for r in rows])
        for factor in (1, 2):
            ctx = [{"question_id": r["id"], "doc_id": u.doc_id, "text": u.text, "n_tokens": u.n_tokens}
                   for r in rows for u in retriever.retrieve([r["question"]], rp, r.get("answer_unit"), factor)]
            m = retrieval_metrics(labels, pl.DataFrame(ctx, schema=CTX_SCHEMA))
            out[f"{name}_{factor}x"] = m
            print(f"  {name} {factor}x: gold-doc {m['gold_doc_recall']:.4f} evidence {m['evidence_recall']:.4f} "
                  f"({m['mean_context_tokens']:.0f} tok)", flush=True)
    cache.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="sample size of the speed grid")
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, help="backend:batch_size:threads")
    ap.add_argument("--full", action="store_true", help="whole tree per backend, then recall on dev/train")
    ap.add_argument("--backends", nargs="+", default=["torch", "onnx", "onnx_int8"], help="--full backends")
    ap.add_argument("--fresh", action="store_true", help="--full: an empty embedding cache (times every backend)")
    ap.add_argument("--skip-grid", action="store_true", help="only --full")
    ap.add_argument("--threads", type=int, default=None, help="--full: embed.threads (default: params.yaml's)")
    ap.add_argument("--batch-size", type=int, default=None, help="--full: embed.batch_size (default: params.yaml's)")
    ap.add_argument("--nodes", default=str(ROOT / "artifacts" / "tree" / "nodes.parquet"),
                    help="the tree whose leaves are sampled (e.g. a FinanceBench project's artifacts/tree/nodes.parquet)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "embed_speed.json"))
    args = ap.parse_args()
    params = load_params(ROOT / "params.yaml")
    nodes = pl.read_parquet(args.nodes)
    texts = leaf_texts(nodes)
    sample = random.Random(0).sample(texts, min(args.n, len(texts)))
    paras = nodes.filter(pl.col("level") == "paragraph")["text"].fill_null("").to_list()
    psample = random.Random(0).sample(paras, min(len(paras), max(1, args.n * len(paras) // max(1, len(texts)))))
    report: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, shared with other jobs (timings are indicative)",
        "command": " ".join(sys.argv), "tree_texts": len(texts), "tree_paragraphs": len(paras),
        "sample": None if args.skip_grid else speed_grid(sample, args.configs, psample)}
    if args.full:
        with tempfile.TemporaryDirectory(prefix="embed_speed-") as tmp:
            report["full"] = [recall(nodes, b, params, Path(tmp), args.fresh, args.threads, args.batch_size) for b in args.backends]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
