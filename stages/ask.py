"""Debug one question: ``python -m stages.ask "question" [--unit MWh]``.

Runs plan → retrieve → answer with the params in params.yaml on the current index
(artifacts/index, artifacts/tree) and prints the planner's queries, the context tree
(doc → section → unit with node ids and scores) and the answer JSON. LLM calls go
through the same response cache as the stages, so asking a train question the
pipeline already answered costs nothing. ``--no-answer`` stops after retrieval.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from contextlib import nullcontext
from pathlib import Path

from stages.core.answering import AnswerParams, EnsembleParams, answer_question
from stages.core.artifacts import read_parquet
from stages.core.ask import context_tree, to_blocks
from stages.core.retriever import retrieve_attempts
from stages.core.cli import run
from stages.core.dataio import read_metadata
from stages.core.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.llm import LLMParams, llm_session
from stages.core.params import load_params, section
from stages.core.planner import PlanParams, plan_queries
from stages.core.retrieval import RetrieveParams
from stages.core.retriever import Retriever
from stages.core.types import BLANK


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m stages.ask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("question")
    parser.add_argument("--unit", default=BLANK, help="answer unit as in the questions file (default: none)")
    parser.add_argument("--seed", type=int, default=None, help="answer seed (default: ensemble.seed, member 0)")
    parser.add_argument("--no-answer", action="store_true", help="plan and retrieve only (no answer LLM call)")
    parser.add_argument("--all-attempts", action="store_true", help="also print every retry context")
    args = parser.parse_args()
    params = load_params()
    pp, rp = section(PlanParams, "plan", params), section(RetrieveParams, "retrieve", params)
    ap, ens = section(AnswerParams, "answer", params), section(EnsembleParams, "ensemble", params)
    llm_params = section(LLMParams, "llm", params)
    need_llm = pp.n_queries > 1 or not args.no_answer
    with llm_session(llm_params) if need_llm else nullcontext() as llm:
        queries, fell_back = plan_queries(args.question, llm, pp)
        print(f"== queries (plan.n_queries={pp.n_queries}{', planner fell back' if fell_back else ''})")
        for i, q in enumerate(queries):
            print(f"  {i}. {q}")
        cache = EmbeddingCache()
        try:
            retriever = Retriever(Path("artifacts/index"), read_parquet("artifacts/tree/nodes.parquet", "build_tree"),
                                  make_embedder(section(EmbedParams, "embed", params)), cache)
            attempts = retrieve_attempts(retriever, queries, rp, ap.max_retries, ap.retry_k_factor)
        finally:
            cache.close()
        used = 0
        if not args.no_answer:
            corpus_ids = set(read_metadata(params["data"]["metadata"])["id"].to_list())
            seed = ens.seed if args.seed is None else args.seed
            res = answer_question(llm, "ask", args.question, args.unit,  # type: ignore[arg-type]
                                  [to_blocks(u) for u in attempts], ap, seed, corpus_ids)
            used = max(res.attempts - 1, 0)
        shown = range(len(attempts)) if args.all_attempts else [used]
        for k in shown:
            units = attempts[k]
            print(f"\n== context, attempt {k} ({len(units)} units, {sum(u.n_tokens for u in units)} tokens"
                  f"{'; + = added by this retry' if k else ''})")
            print(context_tree(units, retriever.tree, new_from=len(attempts[k - 1]) if k else None))
        if not args.no_answer:
            print(f"\n== answer (seed {seed}, attempts {res.attempts}, {res.prompt_tokens}+{res.completion_tokens} "
                  f"tokens, {res.cache_hits} cached, {res.latency_s:.1f} s)")
            print(json.dumps(dataclasses.asdict(res.answer), indent=2, ensure_ascii=False))
            if res.answer.is_blank and res.raw:
                print(f"(abstained; last raw reply: {res.raw[-1][:300]!r})", file=sys.stderr)


if __name__ == "__main__":
    run(main, "ask")
