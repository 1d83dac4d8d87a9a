"""Wall time of the answer step against a slow endpoint, by llm.max_concurrency.

    python bench/concurrency.py                           # 50 dev questions x n=3, 0.5 s/request, c = 1 2 4 8 16
    python bench/concurrency.py --levels 1 8 --questions 10

A fake OpenAI-compatible endpoint (tests/fake_openai.py) on a loopback port answers
every request after `--latency` seconds, deterministically from the request. The real
answer code (answer_members → vote → submission, through bench.lib.answer_eval.run_config
and the committed dev contexts) runs against it with a cold response cache per level. For
each level: wall time, the ideal N·latency/c, the speed-up over c=1 and the sha256 of the
submission (must be the same at every level). Then the same against a quota of `--quota-rps`
requests per second (HTTP 429 beyond it, no Retry-After: the client's own backoff) at the
`--throttled` levels, whose ideal is N/quota (or, with `--quota-rps 0`, with every
`--rate-limit-every`-th request refused with Retry-After `--retry-after`), and the embeddings path (`--texts` texts in
batches of `--batch`) at the same levels.
Results: bench/results/concurrency.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import polars as pl  # noqa: E402
from fake_openai import FakeConfig, FakeOpenAI  # noqa: E402

from bench.lib.answer_eval import run_config  # noqa: E402
from stages.core.common.logs import setup_logging  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.embed.embedder import (  # noqa: E402
    EmbeddingCache,
    EmbedParams,
    embed_texts,
    make_embedder,
)
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.retry import RetryPolicy  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402

CONTEXTS = sorted((ROOT / "bench" / "results" / "answer_eval" / "contexts").glob("dev-*.parquet"))
QUESTIONS = ROOT / "data" / "wattbot" / "dev_QA.csv"
METADATA = ROOT / "data" / "wattbot" / "metadata.csv"
OUT = ROOT / "bench" / "results" / "concurrency.json"


def answer_run(base_url: str, c: int, args: argparse.Namespace) -> dict[str, object]:
    """One cold run of the answer step at concurrency c: wall time, calls, submission sha256."""
    params = load_params(ROOT / "params.yaml")
    params["llm"].update(base_url=base_url, model="fake", max_concurrency=c)
    params["ensemble"]["n"] = args.n
    # the fake endpoint writes the free reader's replies; one task per (question, member) as measured
    params["answer"].update(reader="free", temperature=0.7, max_tokens=384, max_retries=2)
    contexts = pl.read_parquet(CONTEXTS[-1])
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TREERAG_CACHE_DIR"] = cache
        with llm_session(section(LLMParams, "llm", params)) as llm:
            t0 = time.perf_counter()
            run = run_config(llm, params, QUESTIONS, contexts, METADATA, desc=f"c={c}", limit=args.questions)
            wall = time.perf_counter() - t0
            rate_limited = llm.throttle.rate_limited
        sub = Path(cache) / "submission.csv"
        run.submission.write_csv(sub)
        sha = hashlib.sha256(sub.read_bytes()).hexdigest()
    calls = int(run.summary["cost"]["calls"])
    return {"concurrency": c, "calls": calls, "wall_s": round(wall, 2),
            "ideal_s": round(calls * args.latency / c, 2), "rate_limited": rate_limited, "submission_sha256": sha}


def embed_run(base_url: str, c: int, args: argparse.Namespace) -> dict[str, object]:
    texts = [f"Sentence {i}: the accelerator drew {i % 700} W over {i % 13} hours." for i in range(args.texts)]
    p = EmbedParams(base_url=base_url, model="fake-embed", batch_size=args.batch, max_concurrency=c)
    embedder = make_embedder(p, retry=RetryPolicy.from_params(LLMParams()))
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "e.sqlite")
        t0 = time.perf_counter()
        vecs, _ = embed_texts(texts, embedder, cache, batch_size=args.batch, progress=False)
        wall = time.perf_counter() - t0
        cache.close()
    requests = -(-args.texts // args.batch)
    return {"concurrency": c, "requests": requests, "wall_s": round(wall, 2),
            "ideal_s": round(requests * args.latency / c, 2),
            "vectors_sha256": hashlib.sha256(vecs.tobytes()).hexdigest()}


def table(title: str, rows: list[dict[str, object]], unit: str) -> str:
    base = float(rows[0]["wall_s"])  # type: ignore[arg-type]
    lines = [title, f"| concurrency | {unit} | wall s | ideal N·latency/c s | speed-up vs c={rows[0]['concurrency']} |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['concurrency']} | {r.get('calls', r.get('requests'))} | {r['wall_s']} | {r['ideal_s']} | "
                     f"{base / float(r['wall_s']):.1f}x |")  # type: ignore[arg-type]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    setup_logging()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds per request at the fake endpoint")
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--n", type=int, default=3, help="ensemble members")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--throttled", type=int, nargs="*", default=[8, 16], help="levels rerun against the quota")
    ap.add_argument("--quota-rps", type=float, default=8.0,
                    help="the endpoint's quota: requests per second (0: use --rate-limit-every instead)")
    ap.add_argument("--rate-limit-every", type=int, default=10, help="with --quota-rps 0: every k-th request is a 429")
    ap.add_argument("--retry-after", type=float, default=1.0, help="with --rate-limit-every: Retry-After seconds")
    ap.add_argument("--texts", type=int, default=2048, help="embeddings benchmark: texts")
    ap.add_argument("--batch", type=int, default=64, help="embeddings benchmark: texts per request")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not CONTEXTS:
        print("bench/results/answer_eval/contexts/dev-*.parquet missing", file=sys.stderr)
        return 1
    result: dict[str, object] = {"latency_s": args.latency, "questions": args.questions, "n": args.n}
    with FakeOpenAI(FakeConfig(latency_s=args.latency)) as fake:
        answer = [answer_run(fake.base_url, c, args) for c in args.levels]
    throttled = []
    for c in args.throttled:
        if args.quota_rps:
            cfg = FakeConfig(latency_s=args.latency, rate_limit_rps=args.quota_rps)
        else:
            cfg = FakeConfig(latency_s=args.latency, rate_limit_every=args.rate_limit_every,
                             retry_after_s=args.retry_after)
        with FakeOpenAI(cfg) as fake:
            row = answer_run(fake.base_url, c, args)
            if args.quota_rps:
                row["ideal_s"] = round(max(float(row["ideal_s"]), int(row["calls"]) / args.quota_rps), 2)
            throttled.append(row)
    embed = []
    if args.texts:
        with FakeOpenAI(FakeConfig(latency_s=args.latency, dim=384)) as fake:
            embed = [embed_run(fake.base_url, c, args) for c in args.levels]
    scenario = (f"quota {args.quota_rps:g} requests/s" if args.quota_rps else
                f"every {args.rate_limit_every}th request HTTP 429, Retry-After {args.retry_after:g} s")
    result.update(answer=answer, answer_with_429=throttled, scenario_429=scenario, embed=embed)
    shas = {r["submission_sha256"] for r in answer + throttled}
    vshas = {r["vectors_sha256"] for r in embed}
    result["identical_submissions"] = len(shas) == 1
    result["identical_vectors"] = len(vshas) <= 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(f"answer: {args.questions} questions x n={args.n}, {args.latency} s/request", answer, "calls"))
    if throttled:
        print(table(f"answer with 429s: {scenario}", throttled, "calls"))
        for r in throttled:
            print(f"  c={r['concurrency']}: {r['rate_limited']} requests rate-limited")
    if embed:
        print(table(f"embeddings: {args.texts} texts, {args.batch} per request, {args.latency} s/request", embed,
                    "requests"))
    print(f"submission sha256 identical at every level: {result['identical_submissions']} ({sorted(shas)[0][:16]}...)")
    print(f"vectors identical at every level: {result['identical_vectors']}")
    print(f"written {args.out}")
    return 0 if result["identical_submissions"] and result["identical_vectors"] else 1


if __name__ == "__main__":
    sys.exit(main())
