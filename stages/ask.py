"""Debug one question: ``python -m stages.ask "question" [--unit MWh]``.

Runs plan → retrieve → answer → vote with the params in params.yaml on the current index
(artifacts/index, artifacts/tree), through the stages' own code (the typed reader, the
member views and demonstrations, the vote), and prints the planner's queries, the context
tree (doc → section → unit with node ids and scores), each member's answer and the row the
submission would hold. LLM calls go
through the same response cache as the stages, so asking a train question the
pipeline already answered costs nothing. ``--no-answer`` stops after retrieval.
"""
from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path

from stages.core.common.artifacts import read_parquet
from stages.core.common.cli import run
from stages.core.common.dataio import doc_urls, read_metadata
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.llm.params import LLMParams
from stages.core.llm.session import llm_session
from stages.core.retrieve.search import Retriever
from stages.core.tools.ask import AskParams, ask_question, context_tree


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m stages.ask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("question")
    parser.add_argument("--unit", default="", help="answer unit as in the questions file (default: inferred "
                        "from the question; is_blank = a name or True/False)")
    parser.add_argument("--no-answer", action="store_true", help="plan and retrieve only (no answer LLM call)")
    parser.add_argument("--all-attempts", action="store_true", help="also print every retry context")
    args = parser.parse_args()
    params = load_params()
    llm_params = section(LLMParams, "llm", params)
    ask = AskParams.from_params(params)
    meta = read_metadata(data_params(params).metadata)
    need_llm = ask.plan.n_queries > 1 or not args.no_answer
    cache = EmbeddingCache()
    try:
        retriever = Retriever(Path("artifacts/index"), read_parquet("artifacts/tree/nodes.parquet", "build_tree"),
                              make_embedder(section(EmbedParams, "embed", params)), cache)
        with llm_session(llm_params) if need_llm else nullcontext() as llm:
            res = ask_question(args.question, args.unit, ask, retriever, llm, set(meta["id"].to_list()),
                               doc_urls(meta), answer=not args.no_answer)
    finally:
        cache.close()
    print(f"== queries (plan.n_queries={ask.plan.n_queries}{', planner fell back' if res.planner_fell_back else ''})")
    for i, q in enumerate(res.queries):
        print(f"  {i}. {q}")
    shown = range(len(res.attempts)) if args.all_attempts else [res.attempt_used]
    for k in shown:
        units = res.attempts[k]
        print(f"\n== context, attempt {k} ({len(units)} units, {sum(u.n_tokens for u in units)} tokens"
              f"{'; + = added by this retry' if k else ''})")
        print(context_tree(units, retriever.tree, new_from=len(res.attempts[k - 1]) if k else None))
    if res.submission is None:
        return
    for i, m in enumerate(res.members):
        state = "skipped (vote already decided)" if m["skipped"] else (
            f"attempts {m['attempts']}, {m['prompt_tokens']}+{m['completion_tokens']} tokens, "
            f"{m['cache_hits']} cached, {m['latency_s']:.1f} s")
        print(f"\n== member {i} (seed {m['seed']}): {state}")
        print(json.dumps({k: m[k] for k in ("answer_value", "answer_unit", "ref_id", "grounded", "explanation")},
                         ensure_ascii=False))
    print("\n== submission row")
    print(json.dumps(res.submission, indent=2, ensure_ascii=False))
    if res.answer is not None and res.answer.is_blank:
        print("(abstained)", file=sys.stderr)


if __name__ == "__main__":
    run(main, "ask")
