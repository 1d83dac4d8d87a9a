"""Page weight and render time of the HTML run report (metrics/report.html).

    python bench/report_size.py [--project DIR] [--members N]

Two pages from one project's artifacts (default: this folder; it needs artifacts/retrieve of
a run over data/wattbot/train_QA.csv):

- **train**: the labelled questions of `data.questions` with the run's real contexts (every
  attempt) and its member answers (artifacts/answers) when they exist, else synthetic member
  rows (unit 1 pointed, its first number as the value, a typed-reader reply as the raw text);
- **282**: the 282 questions of data/wattbot/test_Q.csv, unlabelled as the Kaggle submission is,
  each given the contexts and member rows of train question ``i mod n_train`` (only their ids and
  text are used, to size the page; nothing is answered or labelled).

Without artifacts/retrieve (no index built), ``--synthetic-contexts`` sizes contexts from
artifacts/tree/nodes.parquet instead: per question, paragraphs of its gold documents (of the
corpus' first documents when it has none) in document order up to the retrieve budget
(retrieve.max_context_tokens × chars_per_token, at most top_k_final units; the retry level
twice that), so the page carries as much context text as a real run.

Prints KB, the seconds to build the data, draw the plots and render the HTML, for each.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES  # noqa: E402
from stages.core.common.dataio import read_csv_tolerant  # noqa: E402
from stages.core.common.params import load_params  # noqa: E402
from stages.core.score import analysis  # noqa: E402
from stages.core.score.report_data import build_report_data, read_run_inputs  # noqa: E402
from stages.core.score.report_html import render_report  # noqa: E402
from stages.core.score.verdicts import score_submission  # noqa: E402


def synthetic_members(questions: pl.DataFrame, contexts: pl.DataFrame, n: int) -> list[pl.DataFrame]:
    """Member rows shaped like the answer stage's: unit 1 pointed, its first number as the value."""
    first = {r["question_id"]: r["text"] for r in contexts.filter((pl.col("attempt") == 0) & (pl.col("rank") == 0))
             .iter_rows(named=True)}
    rows = []
    for q in questions.iter_rows(named=True):
        m = re.search(r"\d+(?:\.\d+)?", first.get(q["id"], "") or "")
        value = m.group(0) if m else "is_blank"
        rows.append({"question_id": q["id"], "answer": value, "answer_value": value,
                     "answer_unit": q.get("answer_unit") or "is_blank", "ref_id": [], "explanation": "is_blank",
                     "supporting_materials": "is_blank", "is_blank": value == "is_blank", "attempts": 1,
                     "prompt_tokens": 900, "completion_tokens": 20, "latency_s": 11.0, "cache_hits": 0,
                     "model": "synthetic", "seed": 0, "grounded": True, "prompt_evaluated": 900, "skipped": False,
                     "shared": 0, "raw": [json.dumps({"units": [1], "value": value})], "pointers": [1],
                     "view": "reversed", "level": 0})
    return [pl.DataFrame([{**r, "seed": i} for r in rows], schema_overrides=MEMBER_SCHEMA_OVERRIDES)
            for i in range(n)]


def synthetic_contexts(questions: pl.DataFrame, nodes: pl.DataFrame, params: dict) -> pl.DataFrame:
    """Context rows sized like the retrieve stage's (see the module docstring); not a retrieval."""
    from stages.core.common.values import ref_id_set
    from stages.core.retrieve.search import CONTEXT_SCHEMA

    rp = params["retrieve"]
    budget = int(rp["max_context_tokens"] * rp.get("chars_per_token", 4.0))
    top = int(rp.get("top_k_final", 16))
    paras = nodes.filter(pl.col("level") == "paragraph").select("node_id", "doc_id", "text", "page")
    by_doc = {d: g for (d,), g in paras.group_by("doc_id", maintain_order=True)}
    docs = list(by_doc)
    rows = []
    for k, q in enumerate(questions.iter_rows(named=True)):
        gold = [d for d in docs if d.lower() in ref_id_set(q.get("ref_id"))] or [docs[k % len(docs)]]
        cand = pl.concat([by_doc[d] for d in gold]).iter_rows(named=True)
        picked, chars = [], 0
        for r in cand:
            if len(picked) >= top or chars >= 2 * budget:
                break
            picked.append(r)
            chars += len(r["text"] or "")
        first = [r for i, r in enumerate(picked) if sum(len(x["text"] or "") for x in picked[:i]) < budget]
        for attempt, units in enumerate((first, picked)):
            for rank, r in enumerate(units):
                rows.append({"question_id": q["id"], "attempt": attempt, "rank": rank, "node_id": r["node_id"],
                             "doc_id": r["doc_id"], "score": 1.0 / (rank + 1), "frequency": 1,
                             "source": ("dense", "bm25", "both")[rank % 3], "page": r["page"],
                             "n_tokens": len(r["text"] or "") // 4, "media": None, "text": r["text"]})
    return pl.DataFrame(rows, schema=CONTEXT_SCHEMA)


def page(run, labelled: bool, labels: pl.DataFrame | None) -> tuple[str, float, float, float]:
    """The page, and the seconds to build its data, draw its plots and render the HTML."""
    t0 = time.perf_counter()
    if labelled:
        summary, table = score_submission(labels, run.submission)
        tables = analysis.plot_tables(table)
        data = build_report_data(run, table, summary, tables)
    else:
        tables, data = {}, build_report_data(run)
    t1 = time.perf_counter()
    pngs = analysis.plot_pngs(tables) if labelled else {}
    t2 = time.perf_counter()
    html = render_report(data, pngs)
    return html, t1 - t0, t2 - t1, time.perf_counter() - t2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, default=Path("."), help="project folder with artifacts/retrieve")
    ap.add_argument("--members", type=int, default=0, help="synthetic members when the run has none (0: ensemble.n)")
    ap.add_argument("--test", type=Path, default=ROOT / "data/wattbot/test_Q.csv")
    ap.add_argument("--out", type=Path, default=None, help="write the two pages into this folder")
    ap.add_argument("--synthetic-contexts", action="store_true",
                    help="no artifacts/retrieve: size contexts from artifacts/tree/nodes.parquet")
    args = ap.parse_args()
    params = load_params(args.project / "params.yaml")
    labels = read_csv_tolerant(args.project / params["data"]["questions"])
    run = read_run_inputs(args.project, params, labels, "Run report (train)")
    if run.contexts is None and args.synthetic_contexts:
        nodes = pl.read_parquet(args.project / "artifacts/tree/nodes.parquet",
                                columns=["node_id", "doc_id", "level", "text", "page"])
        run.contexts = synthetic_contexts(labels, nodes, params)
    if run.contexts is None:
        raise SystemExit(f"{args.project}/artifacts/retrieve: no contexts; run `dvc repro retrieve` there first")
    real = bool(run.members)
    if not real:
        run.members = synthetic_members(labels, run.contexts, args.members or run.ensemble.n)
    if run.submission is None:
        m = run.members[0]
        run.submission = pl.DataFrame({"id": m["question_id"], "answer_value": m["answer_value"],
                                       "answer_unit": m["answer_unit"], "ref_id": ["is_blank"] * m.height})
    results = {}
    analysis.plot_pngs({})  # matplotlib's first-use cost, not the report's
    results["train"] = (labels.height, *page(run, True, labels))
    # 282: test_Q ids and text over the train run's contexts and members, unlabelled
    test = read_csv_tolerant(args.test).select("id", "question", "answer_unit")
    train_ids = labels["id"].to_list()
    src = {t: train_ids[i % len(train_ids)] for i, t in enumerate(test["id"].to_list())}
    ctx = pl.concat([run.contexts.filter(pl.col("question_id") == s).with_columns(pl.lit(t).alias("question_id"))
                     for t, s in src.items()])
    members = [pl.concat([m.filter(pl.col("question_id") == s).with_columns(pl.lit(t).alias("question_id"))
                          for t, s in src.items()]) for m in run.members]
    big = read_run_inputs(args.project, params, test, "Run report (282 questions, unlabelled)")
    big.contexts, big.members = ctx, members
    big.submission = pl.DataFrame({"id": members[0]["question_id"], "answer_value": members[0]["answer_value"],
                                   "answer_unit": members[0]["answer_unit"], "ref_id": ["is_blank"] * members[0].height})
    results["282"] = (test.height, *page(big, False, None))
    print(f"project {args.project.resolve()}: {'real' if real else 'synthetic'} members ({len(run.members)}), "
          f"{'synthetic' if args.synthetic_contexts else 'real'} contexts ({run.contexts.height} rows)")
    for name, (n, h, td, tp, tr) in results.items():
        print(f"{name:>6}: {n:4d} questions  {len(h.encode()) / 1024:8.0f} KB  data {td:6.2f} s  plots {tp:5.2f} s  "
              f"html {tr:5.2f} s  total {td + tp + tr:6.2f} s")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"report_{name}.html").write_text(h, encoding="utf-8")


if __name__ == "__main__":
    main()
