"""Resident memory of the embedded llama.cpp server vs. prompts answered, by `llm.cache_ram_mib`.

    python bench/llm_memory.py            # 1.5B, 16 prompts, caps 8192 (llama.cpp's default) and 1024
    python bench/llm_memory.py --model qwen2.5-coder-0.5b --prompts 40 --caps 8192 1024 256 0

llama.cpp's server keeps, in host RAM, the KV state of a slot's prompt whenever the slot
moves on to a prompt that does not extend it (up to `cache_ram_mib`, 8192 MiB by default), so
a later prompt with that prefix can be restored instead of evaluated. The answer stage sends
one new context per question, so with the default every question leaves one saved state
behind (prompt tokens x the model's KV bytes per token) and the stage's RSS grows with the
number of questions until 8 GiB. This script starts the embedded server in a fresh process per
cap (`EmbeddedServer`, as `llm_session` does), sends `--prompts` prompts shaped like the
answer stage's (a fixed system prompt, then a context of WattBot paragraphs different for each
prompt, then a question; max_tokens 1, temperature 0), and records the process's VmRSS after
each. It then re-sends prompt 0's system + context with another question, the one case the
saved states help: the wall of that request, restored (cap > 0, state still saved) or
evaluated afresh, is the cost of capping.
Results: bench/results/llm_memory.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "results" / "llm_memory.json"
NODES = ROOT / "artifacts" / "tree" / "nodes.parquet"
SYSTEM = ("You answer questions about the documents below. Reply with the answer only, citing the document "
          "ids you used. If the context does not contain the answer, reply 'is_blank'.")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def contexts(n: int, chars: int) -> list[str]:
    """`n` contexts of about `chars` characters each, from consecutive WattBot paragraphs."""
    import polars as pl

    paras = pl.read_parquet(NODES, columns=["level", "text"]).filter(pl.col("level") == "paragraph")["text"]
    out, cur = [], []
    for t in paras.to_list():
        cur.append(t)
        if sum(len(x) for x in cur) >= chars:
            out.append("\n\n".join(cur)[:chars])
            cur = []
            if len(out) == n:
                return out
    raise SystemExit(f"{NODES}: not enough paragraph text for {n} contexts of {chars} characters")


def one(model: str, cap: int, prompts: int, chars: int) -> dict:
    """Runs in its own process: the server with `cap`, the prompts, RSS after each."""
    import openai

    from stages.core.llm.server import EmbeddedServer

    ctxs = contexts(prompts, chars)
    base = rss_mb()
    server = EmbeddedServer(model, n_ctx=8192, threads=0, slots=1, cache_ram_mib=cap)
    client = openai.OpenAI(base_url=server.base_url, api_key="none", timeout=900, max_retries=0)

    def ask(ctx: str, q: str) -> tuple[float, int]:
        t0 = time.perf_counter()
        r = client.chat.completions.create(
            model=model, temperature=0.0, max_tokens=1, seed=0, extra_body={"cache_prompt": True},
            messages=[{"role": "system", "content": SYSTEM},
                      {"role": "user", "content": f"Context:\n{ctx}\n\nQuestion: {q}"}])
        return time.perf_counter() - t0, r.usage.prompt_tokens

    started = rss_mb()
    steps = []
    for i, ctx in enumerate(ctxs):
        wall, toks = ask(ctx, f"What does document {i} report about energy use?")
        steps.append({"prompt": i, "prompt_tokens": toks, "wall_s": round(wall, 2), "rss_mb": round(rss_mb(), 1)})
        print(f"cap {cap}: prompt {i}: {toks} tokens, {wall:.1f} s, RSS {steps[-1]['rss_mb']} MB", flush=True)
    revisit_wall, revisit_toks = ask(ctxs[0], "Which hardware does the first document name?")
    res = {"model": model, "cache_ram_mib": cap, "prompts": prompts, "rss_before_server_mb": round(base, 1),
           "rss_server_started_mb": round(started, 1), "steps": steps,
           "rss_end_mb": round(rss_mb(), 1), "growth_mb": round(steps[-1]["rss_mb"] - steps[0]["rss_mb"], 1),
           "prompt_tokens_total": sum(s["prompt_tokens"] for s in steps),
           "revisit_prompt0": {"wall_s": round(revisit_wall, 2), "prompt_tokens": revisit_toks},
           "mean_wall_s_new_prompt": round(sum(s["wall_s"] for s in steps[1:]) / max(1, len(steps) - 1), 2)}
    server.close()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--chars", type=int, default=3000, help="context characters per prompt (~4 per token)")
    ap.add_argument("--caps", type=int, nargs="+", default=[8192, 1024])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one is not None:
        print("RESULT " + json.dumps(one(args.model, args.one, args.prompts, args.chars)), flush=True)
        return 0
    runs = []
    for cap in args.caps:
        cmd = [sys.executable, __file__, "--one", str(cap), "--model", args.model, "--prompts", str(args.prompts),
               "--chars", str(args.chars)]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ})
        sys.stdout.write("".join(ln + "\n" for ln in proc.stdout.splitlines() if not ln.startswith("RESULT ")))
        if proc.returncode != 0:
            raise SystemExit(f"cap {cap} failed:\n{proc.stderr[-3000:]}")
        runs.append(json.loads(next(ln[7:] for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))))
        r = runs[-1]
        print(f"cap {cap} MiB: RSS {r['steps'][0]['rss_mb']} -> {r['steps'][-1]['rss_mb']} MB over {args.prompts} "
              f"prompts ({r['prompt_tokens_total']} prompt tokens); revisit of prompt 0: "
              f"{r['revisit_prompt0']['wall_s']} s (a new prompt: {r['mean_wall_s_new_prompt']} s)", flush=True)
    result = {"cpu_cores": os.cpu_count(), "chars_per_context": args.chars, "runs": runs,
              "load_avg_1min_at_end": round(os.getloadavg()[0], 2)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
