"""The answer stage on an engine. `engine: local`: `answer_members` in this process, as before.
`engine: ray`: questions split into runs, answered by one actor per node. With the embedded model each
node's actor starts its own llama.cpp server (threads = the node's CPUs, `llm.max_concurrency` slots); with
an endpoint the actors share it and split `llm.max_concurrency` between them (never more in flight). Every
actor's LLM client reads and writes the driver's response cache (an actor on the driver's node holds the
file): a call is paid once, whichever node made it, and a killed run or a lost node's questions are answered
again from that cache. Rows come back in question order, as `answer_members` returns them.

A figure sent to `vision.base_url` goes through each node's own cache file (the shared cache folder).
"""
from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from typing import Any

import polars as pl
from tqdm import tqdm

from stages.core.answer.ensemble import MemberRun, answer_members
from stages.core.answer.images import figure_llm
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import ContextBlock
from stages.core.common.paths import cache_dir
from stages.core.engine.local import chunks
from stages.core.llm.client import CallStats
from stages.core.llm.params import LLMParams
from stages.core.llm.response_cache import ResponseCache
from stages.core.llm.session import llm_session
from stages.core.llm.weights import ensure_model

log = logging.getLogger("treerag.answer")
Contexts = dict[str, list[list[ContextBlock]]]
Rows = list[list[dict[str, Any]]]


class DriverCache:
    """The response cache held on the driver's node, as a cache the LLM client can use anywhere."""

    def __init__(self, remote: Any) -> None:
        self.remote = remote

    def get(self, key: str) -> dict[str, Any] | None:
        return self.remote.call("get", key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.remote.call("put", key, value)


class AnswerShard:
    """One node's answerer: its LLM client (and embedded server, started on the first cache miss)."""

    def __init__(self, params: LLMParams, cache: DriverCache, share: int) -> None:
        from stages.core.engine.ray_engine import assigned_cpus

        if params.base_url:
            self.params = replace(params, max_concurrency=share)
        else:
            self.params = replace(params, threads=params.threads or assigned_cpus())
        self._session = llm_session(self.params, cache=cache)
        self.llm = self._session.__enter__()

    def run(self, work: tuple[pl.DataFrame, Contexts, AnswerParams, EnsembleParams, MemberRun]) -> Rows:
        questions, contexts, ap, ens, run = work
        with figure_llm(self.llm, ap.vision, self.params, contexts) as llm:
            return answer_members(llm, questions, contexts, ap, ens, replace(run, desc=""))

    def stats(self) -> tuple[int, int, int, int]:
        s = self.llm.stats
        return s.hits, s.misses, s.prompt_tokens, s.completion_tokens

    def close(self) -> None:
        self._session.__exit__(None, None, None)


def answer_on(engine: Any, llm_params: LLMParams, questions: pl.DataFrame, contexts: Contexts,
              ap: AnswerParams, ens: EnsembleParams, run: MemberRun) -> tuple[Rows, str]:
    """Every member's rows (as `answer_members`) and the LLM calls' summary line, on the engine."""
    if engine.kind == "local":
        with llm_session(llm_params) as text_llm, figure_llm(text_llm, ap.vision, llm_params, contexts) as llm:
            return answer_members(llm, questions, contexts, ap, ens, run), llm.stats.summary()
    if not llm_params.base_url:  # assembled once here, not by every node at once on a shared cache folder
        ensure_model(llm_params.model)
    store = engine.on_driver_node(partial(ResponseCache, cache_dir("llm") / "responses.sqlite"))
    nodes = len(engine.nodes())
    limit = min(nodes, llm_params.max_concurrency) if llm_params.base_url else None
    share = llm_params.max_concurrency // (limit or nodes)
    pool = engine.pool(partial(AnswerShard, llm_params, DriverCache(store), share), per_node=True, limit=limit)
    ids = questions["id"].to_list()
    work = [(questions.filter(pl.col("id").is_in(run_ids)), {q: contexts[q] for q in run_ids if q in contexts},
             ap, ens, run) for run_ids in chunks(ids, 4 * pool.size)]
    with tqdm(total=len(ids) * ens.n, desc=run.desc, unit="answer", disable=not run.desc) as bar:
        done = pool.map("run", work, on_done=lambda r: bar.update(sum(len(m) for m in r)))
    rows: Rows = [[r for d in done for r in d[i]] for i in range(ens.n)]
    stats = CallStats()
    for hits, misses, prompt, completion in pool.each("stats"):
        stats.hits, stats.misses = stats.hits + hits, stats.misses + misses
        stats.prompt_tokens, stats.completion_tokens = stats.prompt_tokens + prompt, stats.completion_tokens + completion
    pool.each("close")
    if pool.lost:
        log.warning("answer: %d node(s) lost; their questions were answered again from the response cache", pool.lost)
    return rows, stats.summary()
