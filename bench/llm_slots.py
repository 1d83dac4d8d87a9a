"""Answer-stage throughput of the embedded llama.cpp server by parallel slots.

    python bench/llm_slots.py --questions 12                     # 1.5B, n=3, slots 1 2 4, train_QA
    python bench/llm_slots.py --questions 2 --slots 1 2 --n 1 --model qwen2.5-coder-0.5b   # smoke

For each slot count s the embedded server starts with s slots (llm.max_concurrency = s,
so the answer step also sends s requests at once) and answers the first `--questions`
questions of train_QA (the fixed sample order of bench/answer_eval.py) from the committed
retrieval contexts, through the real answer → vote → score code, with a cold response cache
of its own (the shared cache is not touched). Reported per s: seconds per question (wall
of the answer step, server start excluded), tokens, the official score, and how many
(question, member) answers equal the 1-slot run's (with several slots llama.cpp decodes
concurrent requests in one batch, which can change the last bits of the logits and so a
sampled token). Needs the machine to itself: any other busy process skews the numbers.
Results: bench/results/llm_slots.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from bench.lib.answer_eval import contexts_key, run_config  # noqa: E402
from stages.core.common.logs import setup_logging  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.common.paths import cache_dir  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402

QUESTIONS = ROOT / "data" / "wattbot" / "train_QA.csv"
METADATA = ROOT / "data" / "wattbot" / "metadata.csv"
CONTEXTS = ROOT / "bench" / "results" / "answer_eval" / "contexts"
OUT = ROOT / "bench" / "results" / "llm_slots.json"


def contexts_for(params: dict) -> pl.DataFrame:
    exact = CONTEXTS / f"train-{contexts_key(QUESTIONS, params)}.parquet"
    found = [exact] if exact.exists() else sorted(CONTEXTS.glob("train-*.parquet"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no train contexts in {CONTEXTS}: run `python bench/answer_eval.py run --sets train` once")
    return pl.read_parquet(found[-1])


def run_slots(slots: int, args: argparse.Namespace, params: dict, contexts: pl.DataFrame) -> dict:
    p = {**params, "llm": {**params["llm"], "base_url": "", "model": args.model, "max_concurrency": slots}}
    p["ensemble"] = {**params["ensemble"], "n": args.n}
    llm_params = section(LLMParams, "llm", p)
    cache_name = f"bench-slots-{uuid.uuid4().hex}.sqlite"  # cold, and the shared cache stays untouched
    try:
        with llm_session(llm_params, cache_name=cache_name) as llm:
            t0 = time.perf_counter()
            llm._openai()  # start the server now, outside the timed part
            start_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            run = run_config(llm, p, QUESTIONS, contexts, METADATA, desc=f"slots={slots}", limit=args.questions)
            wall = time.perf_counter() - t0
    finally:
        for suffix in ("", "-wal", "-shm"):
            (cache_dir("llm") / f"{cache_name}{suffix}").unlink(missing_ok=True)
    rows = pl.concat(run.members)
    answers = [(r["question_id"], r["seed"], r["answer_value"], tuple(r["ref_id"]))
               for r in rows.sort("question_id", "seed").iter_rows(named=True)]
    q = max(run.summary["cost"]["questions"], 1)
    return {
        "slots": slots, "questions": q, "n": args.n, "server_start_s": round(start_s, 1),
        "wall_s": round(wall, 1), "s_per_question": round(wall / q, 1),
        "calls": run.summary["cost"]["calls"],
        "prompt_tokens_per_question": run.summary["cost"]["prompt_tokens_per_question"],
        "completion_tokens_per_question": run.summary["cost"]["completion_tokens_per_question"],
        "official_score": round(float(run.summary["score"]), 4),
        "submission_sha256": hashlib.sha256(run.submission.write_csv().encode()).hexdigest(),
        "_answers": answers,
    }


def main(argv: list[str] | None = None) -> int:
    setup_logging()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, required=True, help="first K questions of the fixed sample order")
    ap.add_argument("--slots", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--n", type=int, default=3, help="ensemble members")
    ap.add_argument("--model", default=None, help="embedded model (default: params.yaml llm.model)")
    ap.add_argument("--out", type=Path, default=OUT, help="results JSON")
    args = ap.parse_args(argv)
    params = load_params(ROOT / "params.yaml")
    args.model = args.model or params["llm"]["model"]
    contexts = contexts_for(params)
    rows = [run_slots(s, args, params, contexts) for s in args.slots]
    ref = rows[0]["_answers"]
    for r in rows:
        same = sum(a == b for a, b in zip(r["_answers"], ref, strict=True))
        r["answers_equal_to_first"] = f"{same}/{len(ref)}"
        r["submission_equal_to_first"] = r["submission_sha256"] == rows[0]["submission_sha256"]
        del r["_answers"]
    result = {"model": args.model, "cpu_cores": os.cpu_count(), "threads": params["llm"]["threads"] or os.cpu_count(),
              "load_avg_1min_at_end": round(os.getloadavg()[0], 2), "runs": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{args.model}, {args.questions} train questions x n={args.n}, {result['threads']} threads "
          f"on {os.cpu_count()} cores")
    print(f"| slots | s/question | wall s | calls | official | answers = slots {rows[0]['slots']} | same submission |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['slots']} | {r['s_per_question']} | {r['wall_s']} | {r['calls']} | {r['official_score']} | "
              f"{r['answers_equal_to_first']} | {r['submission_equal_to_first']} |")
    best = min(rows, key=lambda r: r["s_per_question"])
    print(f"fastest: {best['slots']} slot(s), {rows[0]['s_per_question'] / best['s_per_question']:.2f}x "
          f"the {rows[0]['slots']}-slot throughput (1-min load average at the end: {result['load_avg_1min_at_end']})")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
