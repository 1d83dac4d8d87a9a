"""llama.cpp settings of the embedded server, measured: seconds per answer request and whether the reply changes.

    python bench/llm_settings.py                          # 12 train requests, every setting below
    python bench/llm_settings.py --requests 20 --settings base fa_on q8_kv

Issue 25 asks for the answer stage to get cheaper per question with numbers, not folklore.
This records the answer stage's real first-attempt requests (the answer driver over the
benchmark's fixed train contexts, with bench/equivalence.py's deterministic fake model
standing in for the replies), then replays the first `--requests` of them, each with
llama.cpp's prompt cache off (`cache_prompt: false`: every prompt is evaluated in full, as a
new question's is), against one embedded server per setting (1.5B, the pipeline's n_ctx and
threads unless the setting changes them). For each request it keeps llama.cpp's own timings
(prompt tokens and ms, generated tokens and ms) and the reply, and compares each reply with
the `base` setting's: a setting that changes replies changes answers, and then needs the
answer benchmark, not this one. Writes bench/results/llm_settings.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import polars as pl  # noqa: E402

from bench.equivalence import CONTEXTS, SETS, FakeLLM  # noqa: E402
from stages.core.answer.ensemble import MemberRun, answer_members  # noqa: E402
from stages.core.answer.params import AnswerParams, EnsembleParams  # noqa: E402
from stages.core.answer.record import context_blocks  # noqa: E402
from stages.core.common.dataio import read_metadata, read_questions  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.weights import ensure_model  # noqa: E402

# name -> CommonParams attributes set on top of the pipeline's own server settings
SETTINGS: dict[str, dict[str, Any]] = {
    "base": {},
    "threads_1": {"threads": 1},
    "fa_on": {"flash_attn_type": "ENABLED"},
    "fa_off": {"flash_attn_type": "DISABLED"},
    "q8_kv": {"flash_attn_type": "ENABLED", "cache_type_k": "Q8_0", "cache_type_v": "Q8_0"},
    "ubatch_128": {"n_ubatch": 128, "n_batch": 128},
    "ubatch_256": {"n_ubatch": 256, "n_batch": 256},
    "ubatch_1024": {"n_ubatch": 1024, "n_batch": 1024},
    "base_again": {},  # the same as base, last: how much the machine's noise moves a number
}


def add_gguf_settings(paths: list[str]) -> list[str]:
    """`--gguf NAME=PATH`: time another weights file of the same model (say, re-quantized) as a setting."""
    names = []
    for item in paths:
        name, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            raise SystemExit(f"--gguf {item!r}: expected NAME=PATH to an existing .gguf file")
        SETTINGS[name] = {"model_path": str(Path(path).resolve())}
        names.append(name)
    return names


class Recorder(FakeLLM):
    """The fake model's replies, keeping each request whole."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        body: dict[str, Any] = {"messages": messages, "temperature": temperature, "seed": seed,
                                "max_tokens": max_tokens}
        if response_format:
            body["response_format"] = response_format
        if top_logprobs:
            body["logprobs"], body["top_logprobs"] = True, top_logprobs
        self.bodies.append(body)
        return super().complete(messages, temperature=temperature, seed=seed, max_tokens=max_tokens,
                                response_format=response_format, top_logprobs=top_logprobs)


def record_requests(set_name: str) -> list[dict[str, Any]]:
    """The answer stage's requests over the benchmark's fixed contexts (first attempts come first)."""
    params = load_params(ROOT / "params.yaml")
    questions = read_questions(SETS[set_name])
    ctx = pl.read_parquet(ROOT / "bench" / "results" / "answer_eval" / "contexts" / CONTEXTS[set_name])
    meta = read_metadata(params["data"]["metadata"])
    rec = Recorder()
    answer_members(rec, questions, context_blocks(ctx), section(AnswerParams, "answer", params),
                   section(EnsembleParams, "ensemble", params),
                   MemberRun("fake", set(meta["id"].to_list()), desc="record"))
    return rec.bodies


def start_server(llm: LLMParams, extra: dict[str, Any]):  # -> (xllamacpp.Server, base_url)
    import xllamacpp

    threads = extra.get("threads") or llm.threads or (os.cpu_count() or 2)
    p = xllamacpp.CommonParams()
    p.model.path = str(extra.get("model_path") or ensure_model(llm.model))
    p.n_ctx = llm.n_ctx
    p.n_parallel = 1
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
    p.hostnames = ["127.0.0.1"]
    p.port = 0
    p.cache_ram_mib = llm.cache_ram_mib
    p.verbosity = -1
    for key, value in extra.items():
        if key in ("threads", "model_path"):
            continue
        if key == "flash_attn_type":  # base keeps llama.cpp's default (auto)
            value = xllamacpp.llama_flash_attn_type[f"LLAMA_FLASH_ATTN_TYPE_{value}"]
        if key.startswith("cache_type_"):  # base: f16
            value = xllamacpp.ggml_type[f"GGML_TYPE_{value}"]
        setattr(p, key, value)
    server = xllamacpp.Server(p)
    return server, server.listening_address.rstrip("/") + "/v1"


def replay(base_url: str, bodies: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    out = []
    for body in bodies:
        t0 = time.perf_counter()
        req = urllib.request.Request(f"{base_url}/chat/completions", method="POST",
                                     data=json.dumps({**body, "model": model, "cache_prompt": False}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:  # loopback only
            data = json.loads(r.read())
        timings = data.get("timings") or {}
        out.append({"wall_s": time.perf_counter() - t0, "reply": data["choices"][0]["message"]["content"],
                    "prompt_n": timings.get("prompt_n"), "prompt_ms": timings.get("prompt_ms"),
                    "predicted_n": timings.get("predicted_n"), "predicted_ms": timings.get("predicted_ms")})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--set", default="train", choices=sorted(SETS))
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--gguf", nargs="*", default=[], metavar="NAME=PATH",
                    help="also time these weights files (same model, another quantization), after --settings")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "llm_settings.json")
    args = ap.parse_args()
    llm = section(LLMParams, "llm", load_params(ROOT / "params.yaml"))
    args.settings += add_gguf_settings(args.gguf)
    bodies = record_requests(args.set)[: args.requests]
    results: dict[str, Any] = {}
    base_replies = None
    for name in (["base"] if "base" not in args.settings else []) + args.settings:
        server, url = start_server(llm, SETTINGS[name])
        try:
            rows = replay(url, bodies, llm.model)
        finally:
            del server
        replies = [r["reply"] for r in rows]
        base_replies = replies if name == "base" else base_replies
        prompt_tok = sum(r["prompt_n"] or 0 for r in rows)
        gen_tok = sum(r["predicted_n"] or 0 for r in rows)
        results[name] = {
            "settings": SETTINGS[name], "requests": len(rows),
            "wall_s_per_request": round(statistics.mean(r["wall_s"] for r in rows), 3),
            "prompt_tokens_per_s": round(prompt_tok / (sum(r["prompt_ms"] or 0 for r in rows) / 1000), 1),
            "generated_tokens_per_s": round(gen_tok / max(sum(r["predicted_ms"] or 0 for r in rows) / 1000, 1e-9), 1),
            "prompt_tokens_per_request": round(prompt_tok / len(rows), 1),
            "generated_tokens_per_request": round(gen_tok / len(rows), 1),
            "same_replies_as_base": sum(a == b for a, b in zip(replies, base_replies or replies)),
        }
        print(name, json.dumps(results[name]), flush=True)
    args.out.write_text(json.dumps({"command": " ".join(sys.argv), "model": llm.model, "set": args.set,
                                    "cpu_count": os.cpu_count(), "load_avg_1min_at_end": os.getloadavg()[0],
                                    "results": results}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
