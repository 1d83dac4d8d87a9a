"""Evidence recall of several retrieve-param variants at the default budget, one index load.

    python bench/retrieval_sweep.py base fill=retrieve.fill=skip trim120=retrieve.trim_tokens=120
    python bench/retrieval_sweep.py base "both=retrieve.fill=skip,retrieve.trim_tokens=120" --sets dev

Each argument is NAME or NAME=section.key=value[,section.key=value...] (params.yaml plus those
overrides). For each variant and set: gold-doc and evidence recall at retrieve.max_context_tokens
with its 95% bootstrap interval, mean context tokens, misses by cause, and the evidence recall
change against the first variant (paired bootstrap). bench/retrieval_eval.py does one variant in
full (budgets, baselines); this compares variants cheaply (the index loads once, ~90 s).
Writes bench/results/retrieval_sweep.json (or --out) and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.answer_eval import apply_overrides  # noqa: E402
from bench.retrieval_eval import SETS, eval_set, load_retriever  # noqa: E402
from stages.core.common.dataio import read_questions  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.answer.record import ContextBlock  # noqa: E402
from stages.core.answer.typed_reader import format_units  # noqa: E402
from stages.core.common.values import is_blank  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.server import EmbeddedServer  # noqa: E402
from stages.core.retrieve.params import RetrieveParams  # noqa: E402
from stages.core.score.bootstrap import paired_bootstrap  # noqa: E402


def parse_variant(arg: str) -> tuple[str, list[str]]:
    """'name=a.b=1,c.d=x' -> ('name', ['a.b=1', 'c.d=x']); 'name' -> ('name', [])."""
    name, _, rest = arg.partition("=")
    return name, [s for s in rest.split(",") if s] if rest else []


def hit_vector(labels: pl.DataFrame, misses: list[dict]) -> np.ndarray:
    """1 per answerable question whose evidence is in the context, 0 per miss (in label order)."""
    missed = {m["id"] for m in misses}
    return np.array([0.0 if r["id"] in missed else 1.0 for r in labels.iter_rows(named=True)
                     if not is_blank(r.get("answer_value"))])


class RealTokens:
    """Token counts from the embedded model's own tokenizer (the llama.cpp server's /tokenize)."""

    def __init__(self, params: dict) -> None:
        llm = section(LLMParams, "llm", params)
        self.server = EmbeddedServer(llm.model, n_ctx=2048, threads=llm.threads)
        self.root = self.server.base_url.removesuffix("/v1")

    def count(self, text: str) -> int:
        req = urllib.request.Request(self.root + "/tokenize", data=json.dumps({"content": text}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            return len(json.load(r)["tokens"])

    def close(self) -> None:
        self.server.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+", help="NAME or NAME=section.key=value[,...]; the first is the base")
    ap.add_argument("--sets", nargs="+", default=["dev", "train"])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "retrieval_sweep.json"))
    ap.add_argument("--artifacts", default=str(ROOT / "artifacts"), help="where tree/ and index/ are")
    ap.add_argument("--real-tokens", action="store_true",
                    help="also count each context's tokens as the reader sees them (its numbered units), with the "
                         "embedded model's own tokenizer (llama.cpp /tokenize)")
    args = ap.parse_args()
    variants = [parse_variant(v) for v in args.variants]
    base_params = load_params(ROOT / "params.yaml")
    retriever, nodes, load_s = load_retriever(Path(args.artifacts), base_params)
    print(f"index loaded in {load_s:.0f} s", file=sys.stderr)
    none = {"flat": [], "flat_vecs": None, "wins": [], "bm25": None}
    report: dict[str, dict] = {}
    lines = []
    tokenizer = RealTokens(base_params) if args.real_tokens else None
    for set_name in args.sets:
        labels = read_questions(SETS.get(set_name, Path(set_name)))
        queries = {r["id"]: [r["question"]] for r in labels.iter_rows(named=True)}
        base_hits = None
        lines += [f"### {set_name}", "", "| variant | overrides | gold-doc | evidence [95% CI] | Δ vs first [95% CI] "
                  "| mean tokens | misses by cause |", "|---|---|---|---|---|---|---|"]
        for name, overrides in variants:
            rp = section(RetrieveParams, "retrieve", apply_overrides(base_params, overrides))
            res = eval_set(set_name, labels, queries, retriever, rp, nodes, none, (rp.max_context_tokens,),
                           keep_units=tokenizer is not None)
            m = res["results"]["treerag"][rp.max_context_tokens]
            hits = hit_vector(labels, res["misses"])
            rng = np.random.default_rng(0)
            boot = [rng.choice(hits, hits.size).mean() for _ in range(2000)]
            row = {"overrides": overrides, "gold_doc_recall": m["gold_doc_recall"],
                   "evidence_recall": m["evidence_recall"], "ci": [float(np.percentile(boot, 2.5)),
                                                                   float(np.percentile(boot, 97.5))],
                   "mean_context_tokens": m["mean_context_tokens"], "miss_causes": res["miss_causes"],
                   "misses": [x["id"] for x in res["misses"]]}
            if tokenizer is not None:
                real = [tokenizer.count(format_units([ContextBlock(u.doc_id, u.text, media=u.media)
                                                       for u in units]))
                        for units in res["units"].values()]
                row["real_context_tokens"] = {"mean": round(float(np.mean(real)), 1),
                                              "p90": round(float(np.percentile(real, 90)), 1), "max": max(real)}
            delta = "–"
            if base_hits is None:
                base_hits = hits
            else:
                bt = paired_bootstrap(base_hits, hits, n_boot=2000, seed=0)
                row["delta"] = [bt.delta, bt.low, bt.high]
                delta = f"{bt.delta:+.3f} [{bt.low:+.3f}, {bt.high:+.3f}]"
            report.setdefault(set_name, {})[name] = row
            lines.append(f"| {name} | {' '.join(overrides) or '(params.yaml)'} | {m['gold_doc_recall']:.3f} | "
                         f"{m['evidence_recall']:.3f} [{row['ci'][0]:.3f}, {row['ci'][1]:.3f}] | {delta} | "
                         f"{m['mean_context_tokens']:.0f}"
                         + (f" (real {row['real_context_tokens']['mean']:.0f}, p90 {row['real_context_tokens']['p90']:.0f})"
                            if tokenizer is not None else "") + f" | {res['miss_causes']} |")
        lines.append("")
    retriever.cache.close()
    if tokenizer is not None:
        tokenizer.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
