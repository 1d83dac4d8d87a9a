"""FinanceBench filings through the real pipeline, scored without an LLM.

    nice -n 19 python bench/financebench.py --subset 20            # quick loop: 20 filings, their questions
    nice -n 19 python bench/financebench.py                        # all 62 filings, 81 questions
    python bench/financebench.py --subset 20 -S retrieve.named_docs=none   # any params override
    flock /work/notes/llm.lock python bench/financebench.py --until vote   # with the answers (LLM)

The corpus (`--data`, default ../shared/financebench next to the repository: corpus/*.pdf,
metadata.csv, questions.csv, labels.jsonl) is never copied into git: a DVC project is built in
`--work` (default /tmp/treerag-financebench-<subset>), outside the repository, from this
repository's dvc.yaml, stages/ and params.yaml, with bench/financebench.yaml (the params a user
changes for filings: data.*, corpus.*, retrieve.named_docs, answer.demos) and every `-S` on top.
The PDFs are hard-linked (or copied) into it. `--subset N` keeps the N filings with the smallest
SHA-1 of their id and the questions on them. Each run re-syncs stages/ and params.yaml into the
work project, then runs `dvc repro --single-item <stage>` for each stage up to `--until`
(default retrieve: plan.n_queries 1 makes no LLM call), so an unchanged stage is skipped and a
params or code change reruns only what depends on it; per stage it records wall, CPU s (user+sys
of the stage and its children) and peak RSS. The embedding cache lives in the work dir
(`--fresh` starts from an empty work dir: no cached stage, no cached embedding).

Scores (bench/lib/financebench.py says how): gold-filing and gold-page recall of the first
context (retrieve.max_context_tokens) and of the retry context (twice the budget), overall and
per question_type; with answers, numeric answers by value, refusals, and the text answers listed
for judging by hand. Writes the summary to `--out` (default
bench/results/financebench/<subset|all>.json; the per-question rows go next to the work project).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.corpus2 import parse_overrides, run_stage
from bench.lib.financebench import judge_answers, line_item_recall, read_labels, recall, subset_docs

DATA = ROOT.parent / "shared" / "financebench"
PARAMS = ROOT / "bench" / "financebench.yaml"


def link_or_copy(src: Path, dst: Path) -> None:
    if dst.exists():
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def make_project(data: Path, work: Path, docs: list[str], overrides: dict[str, dict[str, object]],
                 code: Path = ROOT / "stages") -> Path:
    """The DVC project in `work`: this repository's code and params, the chosen filings, their questions."""
    proj = work / "project"
    (proj / "data" / "corpus").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dvc.yaml", proj / "dvc.yaml")
    if (proj / "stages").exists():
        shutil.rmtree(proj / "stages")
    shutil.copytree(code, proj / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    keep = set(docs)
    for f in sorted((proj / "data" / "corpus").iterdir()):
        if f.stem not in keep:
            f.unlink()
    for d in docs:
        link_or_copy(data / "corpus" / f"{d}.pdf", proj / "data" / "corpus" / f"{d}.pdf")
    meta = pl.read_csv(data / "metadata.csv", infer_schema_length=0).filter(pl.col("id").is_in(docs))
    meta.write_csv(proj / "data" / "metadata.csv")
    gold_doc = {q["id"]: q["doc"] for q in read_labels(data)}
    with (data / "questions.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if gold_doc.get(r["id"]) in keep]
    with (proj / "data" / "questions.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for source in (yaml.safe_load(PARAMS.read_text()), overrides):
        for sec, values in source.items():
            params.setdefault(sec, {}).update(values)
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    return proj


def pdf_pages(proj: Path) -> int:
    import pymupdf

    n = 0
    for f in sorted((proj / "data" / "corpus").glob("*.pdf")):
        with pymupdf.open(f) as doc:
            n += doc.page_count
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--subset", type=int, default=0, help="N filings (smallest SHA-1 of the id); 0 = all")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("-S", dest="overrides", action="append", default=[], help="section.key=value (YAML value)")
    ap.add_argument("--until", default="retrieve", help="last stage to run (vote: with the answers)")
    ap.add_argument("--fresh", action="store_true", help="empty the work dir first (no cached stage or embedding)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--label", default="", help="a name for this variant in the summary")
    ap.add_argument("--code", type=Path, default=ROOT / "stages",
                    help="the stages/ package to run (default this repository's; e.g. an older commit's, exported)")
    args = ap.parse_args()

    tag = f"subset{args.subset}" if args.subset else "all"
    work = (args.work or Path(f"/tmp/treerag-financebench-{tag}")).resolve()
    if ROOT in work.parents or work == ROOT:
        raise SystemExit(f"--work {work}: must be outside the repository (the PDFs are never committed)")
    if args.fresh and work.exists():
        shutil.rmtree(work)
    labels_all = read_labels(args.data)
    docs = subset_docs(pl.read_csv(args.data / "metadata.csv", infer_schema_length=0)["id"].to_list(), args.subset)
    labels = [q for q in labels_all if q["doc"] in set(docs)]
    overrides = parse_overrides(args.overrides)
    proj = make_project(args.data, work, docs, overrides, args.code.resolve())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
           "TREERAG_CACHE_DIR": str(work / "cache")}
    if not (proj / ".dvc").exists():
        subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=proj, env=env, check=True)
    stages = list(yaml.safe_load((proj / "dvc.yaml").read_text())["stages"])
    if args.until not in stages:
        raise SystemExit(f"--until {args.until}: not a stage of dvc.yaml ({', '.join(stages)})")
    costs: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for stage in stages[:stages.index(args.until) + 1]:
        costs[stage] = run_stage(proj, stage, env)
        print(f"{stage:<11} {costs[stage]}", flush=True)
    total = round(time.perf_counter() - t0, 1)

    nodes = pl.read_parquet(proj / "artifacts" / "tree" / "nodes.parquet", columns=["node_id", "page", "page_end"])
    first = pl.read_parquet(proj / "artifacts" / "retrieve" / "contexts.parquet").filter(pl.col("attempt") == 0)
    wide = pl.read_parquet(proj / "artifacts" / "retrieve" / "retry_contexts.parquet").filter(pl.col("attempt") == 1)
    r1, r2 = recall(labels, first, nodes), recall(labels, wide, nodes)
    params = yaml.safe_load((proj / "params.yaml").read_text())
    pages = pdf_pages(proj)
    result: dict[str, object] = {
        "command": "python bench/financebench.py " + " ".join(sys.argv[1:]),
        "label": args.label, "filings": len(docs), "pages": pages, "questions": len(labels),
        "params": {"file": "bench/financebench.yaml", "overrides": overrides,
                   "retrieve": params["retrieve"], "answer.max_retries": params["answer"]["max_retries"]},
        "budget_tokens": {"1x": params["retrieve"]["max_context_tokens"],
                          "2x": 2 * params["retrieve"]["max_context_tokens"]},
        "mean_context_tokens": {"1x": round(first.group_by("question_id").agg(pl.col("n_tokens").sum())
                                            ["n_tokens"].mean() or 0, 1),
                                "2x": round(wide.group_by("question_id").agg(pl.col("n_tokens").sum())
                                            ["n_tokens"].mean() or 0, 1)},
        "recall_1x": {"all": r1["all"], "per_type": r1["per_type"]},
        "recall_2x": {"all": r2["all"], "per_type": r2["per_type"]},
        "line_items": {"1x": line_item_recall(labels, first), "2x": line_item_recall(labels, wide)},
        "stages": costs, "total_wall_s": total,
        # only a --fresh run extracts here (otherwise DVC may skip the stage and its cost is DVC's own)
        "extract_cpu_s_per_page": round(costs["extract"]["cpu_s"] / pages, 4) if args.fresh and pages else None,
    }
    detail: dict[str, object] = {"recall_1x": r1["per_question"], "recall_2x": r2["per_question"]}
    sub_path = proj / "submissions" / "submission.csv"
    if "vote" in costs and sub_path.exists():
        judged = judge_answers(labels, pl.read_csv(sub_path, infer_schema_length=0))
        result["answers"] = judged["counts"]
        detail.update(numeric=judged["numeric"], to_judge_by_hand=judged["to_judge_by_hand"])
    out = args.out or ROOT / "bench" / "results" / "financebench" / f"{tag}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    (work / "per_question.json").write_text(json.dumps(detail, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("filings", "pages", "questions", "recall_1x", "recall_2x")}, indent=1))
    print(f"wrote {out}; per question: {work / 'per_question.json'}; project in {proj}")


if __name__ == "__main__":
    main()
