"""Score an answering configuration on labelled questions from fixed retrieval contexts.

Reader designs are compared on the same contexts, so a score difference is the
reader's and not retrieval's. Contexts are retrieved once per (questions file,
retrieval params) and reused; every LLM call goes through the response cache, so a
rerun, a killed run or a wider ensemble pays only for calls not made before.
Results: official / strict / symmetric scores overall and per question type, tokens
and seconds per question, and a paired bootstrap between two configurations.
"""
from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml
from tqdm import tqdm

from stages.core.answer.citing import answer_cards
from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES, MemberRun, answer_members
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import context_blocks
from stages.core.answer.submission import build_submission
from stages.core.answer.voting import member_answers, vote_all
from stages.core.common.dataio import doc_urls, read_metadata, read_questions
from stages.core.common.params import ParamError, section
from stages.core.common.retry import RETRY_K_FACTOR
from stages.core.llm.params import LLMParams
from stages.core.llm.protocol import LLM, Completion
from stages.core.retrieve.params import RetrieveParams
from stages.core.score.bootstrap import paired_bootstrap, score_interval
from stages.core.score.evidence import KINDS, kind_table
from stages.core.score.verdicts import score_submission

# the index (its document cards: which documents a question names), from the repository root whatever the working directory
INDEX_DIR = Path(__file__).resolve().parents[2] / "artifacts" / "index"

SCORE_VIEWS = ("score", "strict_score", "symmetric_score")


def apply_overrides(params: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """params with ``section.key=value`` overrides (values parsed as YAML, like ``dvc exp run -S``)."""
    out = copy.deepcopy(params)
    for item in overrides:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2 or not all(parts):
            raise ParamError(f"override {item!r}: expected section.key=value")
        sec, name = parts
        if not isinstance(out.get(sec), dict):
            raise ParamError(f"override {item!r}: params.yaml has no section {sec!r}")
        out[sec][name] = yaml.safe_load(raw)
    return out


def contexts_key(questions_path: Path, params: dict[str, Any]) -> str:
    """A short hash of what decides the contexts: the questions file and the retrieval params, and
    the tree's (its tables are what gets retrieved)."""
    blob = json.dumps({"questions": questions_path.read_text(encoding="utf-8-sig"), "tree": params.get("tree"),
                       "retrieve": params.get("retrieve"), "plan": params.get("plan"),
                       "index": params.get("index"), "embed": params.get("embed"),
                       "answer_retries": [params["answer"].get("max_retries"), params["answer"].get("retry_k_factor", RETRY_K_FACTOR)]},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def retrieve_contexts(questions: pl.DataFrame, params: dict[str, Any], index_dir: Path,
                      nodes_path: Path) -> pl.DataFrame:
    """Context rows (every attempt) for each question, the question alone as the query.

    Same code path as the retrieve stage with ``plan.n_queries: 1`` (the default).
    """
    from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder
    from stages.core.retrieve.search import CONTEXT_SCHEMA, Retriever, retrieve_all

    if int((params.get("plan") or {}).get("n_queries", 1)) != 1:
        raise ParamError("answer_eval retrieves with the question alone: set plan.n_queries=1")
    p = section(RetrieveParams, "retrieve", params)
    ap = section(AnswerParams, "answer", params)
    cache = EmbeddingCache()
    try:
        retriever = Retriever(index_dir, pl.read_parquet(nodes_path), make_embedder(section(EmbedParams, "embed", params)),
                              cache)
        queries_of = {qid: [q] for qid, q in zip(questions["id"].to_list(), questions["question"].to_list(),
                                                  strict=True)}
        units_of = (dict(zip(questions["id"], questions["answer_unit"])) if "answer_unit" in questions.columns
                    else {})
        rows, retry_rows = retrieve_all(retriever, queries_of, p, ap.max_retries, units_of=units_of)
    finally:
        cache.close()
    return pl.DataFrame(rows + retry_rows, schema=CONTEXT_SCHEMA).sort("question_id", "attempt", "rank")


@dataclass
class EvalRun:
    """One configuration answered on one question set."""

    members: list[pl.DataFrame]
    submission: pl.DataFrame
    verdicts: pl.DataFrame
    summary: dict[str, Any]


def score_members(labels: pl.DataFrame, members: list[pl.DataFrame],
                  urls: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    """Vote the members as the vote stage does, build the submission, score it."""
    voted = vote_all([member_answers(m) for m in members], labels["id"].to_list())
    submission = build_submission(labels, voted, urls)
    summary, verdicts = score_submission(labels, submission, "labels", "submission")
    return submission, verdicts, summary


def type_table(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per question type (and 'all'): n, official / strict / symmetric score, value, ref, na."""
    aggs = [pl.len().alias("n"), *(pl.col(c).mean().round(4).alias(c) for c in (*SCORE_VIEWS, "value", "ref", "na"))]
    by_type = verdicts.group_by("question_type").agg(aggs).sort("question_type")
    overall = verdicts.select(aggs).with_columns(pl.lit("all").alias("question_type"))
    return pl.concat([by_type, overall.select(by_type.columns)])


def sample_order(ids: list[str]) -> list[str]:
    """A fixed pseudo-random order of question ids (by hash), so that the first k of them
    are a random sample of the set that stays the same across runs and machines."""
    return sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())


def shown_demos(ap: AnswerParams, questions_path: Path, ids: list[str]) -> list[str]:
    """The ids of this questions file that the prompt shows as worked examples (none when the
    demonstrations come from another file)."""
    if not ap.demos or Path(ap.demo_file).resolve() != Path(questions_path).resolve():
        return []
    demos = set(ap.demos)
    return [q for q in ids if q in demos]


def _answer(llm: LLM, params: dict[str, Any], labels: pl.DataFrame, blocks: dict[str, Any], meta: pl.DataFrame,
            desc: str) -> list[list[dict[str, Any]]]:
    """Every member's answer rows, exactly as the answer stage asks (`ensemble.answer_members`)."""
    ap = section(AnswerParams, "answer", params)
    names, years = answer_cards(INDEX_DIR)
    run = MemberRun(section(LLMParams, "llm", params).model, set(meta["id"].to_list()), names=names,
                    annual_years=years, desc=desc)
    return answer_members(llm, labels, blocks, ap, section(EnsembleParams, "ensemble", params), run)


@dataclass
class RequestRecorder:
    """An LLM that keeps each request and replies nothing usable, so a question asks every retry level:
    all that a configuration could send for it, without a model."""

    requests: list[str] = field(default_factory=list)
    max_concurrency: int = 1

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, seed: int, max_tokens: int,
                 response_format: dict[str, Any] | None = None, top_logprobs: int = 0) -> Completion:
        self.requests.append(json.dumps([messages, temperature, seed, max_tokens, response_format, top_logprobs],
                                        sort_keys=True))
        return Completion("", finish_reason="length")


def changed_questions(params_a: dict[str, Any], params_b: dict[str, Any], labels: pl.DataFrame,
                      contexts: pl.DataFrame, metadata_path: Path,
                      contexts_b: pl.DataFrame | None = None) -> list[str]:
    """Ids of the questions whose requests (at any retry level) differ between two configurations,
    the second answering from ``contexts_b`` (a retrieval change), default the same ``contexts``.
    Greedy replies to equal requests are equal, so only these can score differently: a change that
    touches 25 of 186 questions is measured by answering those 25 under both."""
    meta = read_metadata(metadata_path)
    blocks_a = context_blocks(contexts)
    blocks_b = blocks_a if contexts_b is None else context_blocks(contexts_b)

    def requests(params: dict[str, Any], blocks: dict[str, Any], qid: str) -> list[str]:
        rec = RequestRecorder()
        _answer(rec, params, labels.filter(pl.col("id") == qid), blocks, meta, desc="")  # no progress bar
        return rec.requests

    quiet = logging.getLogger("treerag")  # the recorder's empty replies are all "unusable": not worth a warning
    level = quiet.level
    quiet.setLevel(logging.ERROR)

    try:
        return [q for q in tqdm(labels["id"].to_list(), desc="questions whose requests differ", leave=False)
                if requests(params_a, blocks_a, q) != requests(params_b, blocks_b, q)]
    finally:
        quiet.setLevel(level)


def run_config(llm: LLM, params: dict[str, Any], questions_path: Path, contexts: pl.DataFrame,
               metadata_path: Path, desc: str = "answer", limit: int | None = None,
               only_ids: list[str] | None = None) -> EvalRun:
    """Answer the file's questions with the params' answer/ensemble/vote sections and score them.

    ``limit``: only the first ``limit`` questions of ``sample_order`` (a random sample
    that grows by prefix, so a longer run reuses every reply of a shorter one). The
    questions shown as worked examples (``answer.demos``, when they come from this file)
    are never scored: the prompt would hold their answers. ``only_ids``: only these questions (those
    whose requests a change touches, `changed_questions`; the others get the same greedy replies under
    both configurations, so a change is measured on the few it touches).
    """
    ap = section(AnswerParams, "answer", params)
    labels = read_questions(questions_path)
    shown = shown_demos(ap, questions_path, labels["id"].to_list())
    labels = labels.filter(~pl.col("id").is_in(shown))
    if only_ids is not None:
        labels = labels.filter(pl.col("id").is_in(only_ids))
    if limit is not None and limit < labels.height:
        keep = sample_order(labels["id"].to_list())[:limit]
        labels = labels.filter(pl.col("id").is_in(keep)).sort(
            pl.col("id").replace_strict({q: i for i, q in enumerate(keep)}, return_dtype=pl.Int64))
    meta = read_metadata(metadata_path)
    urls = doc_urls(meta)
    ens = section(EnsembleParams, "ensemble", params)
    t0 = time.perf_counter()
    rows = _answer(llm, params, labels, context_blocks(contexts), meta, desc)
    wall = time.perf_counter() - t0
    members = [pl.DataFrame(r, schema_overrides=MEMBER_SCHEMA_OVERRIDES) for r in rows]
    submission, verdicts, summary = score_members(labels, members, urls)
    all_rows = pl.concat(members)
    asked = all_rows.filter(~pl.col("skipped")) if "skipped" in all_rows.columns else all_rows
    n_q = max(labels.height, 1)
    summary["cost"] = {
        "questions": labels.height, "members": ens.n,
        "wall_s_this_run": round(wall, 1),  # cache hits cost ~0: llm_s_per_question is the real cost
        "llm_s_per_question": round(float(all_rows["latency_s"].sum()) / n_q, 2),
        "prompt_tokens_per_question": round(float(all_rows["prompt_tokens"].sum()) / n_q, 1),
        "completion_tokens_per_question": round(float(all_rows["completion_tokens"].sum()) / n_q, 1),
        # prompt tokens the server really evaluated (the rest reused from its prompt cache)
        "prompt_evaluated_per_question": round(float(all_rows["prompt_evaluated"].sum()) / n_q, 1)
        if "prompt_evaluated" in all_rows.columns else None,
        "grounded_share": round(float(asked["grounded"].mean()), 3) if "grounded" in asked.columns else None,
        "calls": int(all_rows["attempts"].sum()), "cache_hits": int(all_rows["cache_hits"].sum()),
        # attempts answered by an earlier member's identical greedy request (no request sent)
        "shared_replies": int(all_rows["shared"].sum()) if "shared" in all_rows.columns else None,
        "skipped_answers": all_rows.height - asked.height,  # members not asked: the vote was decided
    }
    summary["held_out_demos"] = shown
    # a member that skipped questions (the vote was decided without it) has no score of its own
    summary["member_scores"] = [None if "skipped" in m.columns and m["skipped"].any()
                                else score_members(labels, [m], urls)[2]["score"] for m in members]
    summary["true_false_confusion"] = true_false_confusion(verdicts)
    return EvalRun(members, submission, verdicts, summary)


def true_false_confusion(verdicts: pl.DataFrame) -> dict[str, int]:
    """Counts of gold x predicted on the True/False questions (1/0; 'blank' for no answer),
    to see a lean towards True."""
    tf = verdicts.filter(pl.col("question_type") == "true_false")
    out: dict[str, int] = {}
    for gold, pred in zip(tf["gold_answer_value"].cast(pl.String).to_list(),
                          tf["pred_answer_value"].cast(pl.String).to_list(), strict=True):
        g = {"1": "true", "0": "false"}.get(str(gold).strip(), str(gold))
        p = {"1": "true", "0": "false"}.get(str(pred).strip(), "blank")
        key = f"gold_{g}_pred_{p}"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def plot_by_type(table: pl.DataFrame, title: str, path: Path) -> Path:
    """Bar chart of the official and strict score per question type (n in the labels)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{t} (n={n})" for t, n in zip(table["question_type"], table["n"], strict=True)]
    y = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(labels) + 1.2), dpi=100)
    ax.barh(y + 0.2, table["score"].to_list(), height=0.4, label="official", color="#4c72b0")
    ax.barh(y - 0.2, table["strict_score"].to_list(), height=0.4, label="strict", color="#dd8452")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("mean score")
    return _save(fig, ax, title, path)


def _save(fig: Any, ax: Any, title: str, path: Path) -> Path:
    """Title, legend and a reproducible PNG (no software tag), then free the figure."""
    import matplotlib.pyplot as plt

    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


@dataclass(frozen=True)
class ConfigDelta:
    """B - A on one question set: paired bootstrap overall and the mean delta per question type."""

    n: int
    delta: float
    low: float
    high: float
    p_not_better: float
    per_type: dict[str, tuple[int, float]]


def with_unchanged(subset: pl.DataFrame, full: pl.DataFrame) -> pl.DataFrame:
    """A `--changed-by` run's verdicts over the whole set: its own rows, and the full run's rows for the
    questions it did not answer (their requests, hence their greedy replies, are the full run's), so
    a subset run is scored and compared as the whole set it stands for."""
    rest = full.filter(~pl.col("id").is_in(subset["id"].implode()))
    return pl.concat([subset, rest.select(subset.columns)], how="vertical_relaxed").sort("id")


def compare_verdicts(a: pl.DataFrame, b: pl.DataFrame, column: str = "score", n_boot: int = 10000,
                     seed: int = 0) -> ConfigDelta:
    """Paired bootstrap of B - A over the questions both verdict tables share.

    One set must contain the other (a shorter ``--limit`` run is a prefix of the same
    sample); the comparison is then on the smaller one. Unrelated sets are refused."""
    ids_a, ids_b = set(a["id"].to_list()), set(b["id"].to_list())
    if not (ids_a <= ids_b or ids_b <= ids_a):
        raise ValueError(f"verdicts cover different questions ({len(ids_a ^ ids_b)} ids differ, "
                         "neither set contains the other)")
    j = a.select("id", "question_type", pl.col(column).alias("a")).join(
        b.select("id", pl.col(column).alias("b")), on="id").sort("id")
    bt = paired_bootstrap(j["a"].to_numpy(), j["b"].to_numpy(), n_boot=n_boot, seed=seed)
    per_type = {str(t): (g.height, float(np.mean(g["b"].to_numpy() - g["a"].to_numpy())))
                for (t,), g in j.group_by("question_type", maintain_order=True)}
    return ConfigDelta(j.height, bt.delta, bt.low, bt.high, bt.p_not_better, dict(sorted(per_type.items())))


TABLE_TYPES = ("numeric", "true_false", "text", "range", "na")


def runs_table(runs: dict[str, tuple[pl.DataFrame, dict[str, Any]]],
               labels: pl.DataFrame | None = None) -> list[dict[str, Any]]:
    """One row per run (verdicts, summary.json), in the given order: official score, per type,
    per evidence kind (with ``labels``), LLM s/question and evaluated prompt tokens per question
    and, from the second on, B - A against the first with a 95% paired bootstrap (on the
    questions both share: a shorter run is a prefix of the same sample)."""
    rows, base = [], None
    for name, (v, s) in runs.items():
        by_type = dict(type_table(v).select("question_type", "score").iter_rows())
        row: dict[str, Any] = {"name": name, "n": s.get("config", {}).get("n"), "questions": v.height,
                               "official": by_type["all"],
                               "types": {t: round(by_type[t], 3) for t in TABLE_TYPES if t in by_type},
                               "kinds": {} if labels is None else
                               {k: round(x, 3) for k, _, x in kind_table(v, labels).iter_rows()},
                               "llm_s_per_question": s.get("cost", {}).get("llm_s_per_question"),
                               "prompt_evaluated_per_question":
                                   s.get("cost", {}).get("prompt_evaluated_per_question")}
        if base is None:
            base = v
        else:
            d = compare_verdicts(base, v)
            row["delta"] = [round(d.delta, 4), round(d.low, 4), round(d.high, 4)]
        rows.append(row)
    return rows


def table_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """`runs_table` rows as markdown lines (evidence-kind columns where a row has them)."""
    kinds = [k for k in KINDS if any(k in r.get("kinds", {}) for r in rows)]
    lines = ["| configuration | n | questions | official | Δ vs first [95% CI] | " + " | ".join(TABLE_TYPES)
             + "".join(f" | {k}" for k in kinds) + " | LLM s/q | eval. prompt tok/q |",
             "|---" * (7 + len(TABLE_TYPES) + len(kinds)) + "|"]
    for r in rows:
        delta = f"{r['delta'][0]:+.3f} [{r['delta'][1]:+.3f}, {r['delta'][2]:+.3f}]" if "delta" in r else "–"
        types = " | ".join(f"{r['types'][t]:.3f}" if t in r["types"] else "" for t in TABLE_TYPES)
        by_kind = "".join(f" | {r['kinds'][k]:.3f}" if k in r.get("kinds", {}) else " | " for k in kinds)
        lines.append(f"| {r['name']} | {r['n']} | {r['questions']} | {r['official']:.3f} | {delta} | {types}"
                     f"{by_kind} | {r['llm_s_per_question'] or ''} | {r.get('prompt_evaluated_per_question') or ''} |")
    return lines


def ensemble_curve(labels: pl.DataFrame, members: list[pl.DataFrame], urls: dict[str, str],
                   n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Official score of the vote over the first k members, k = 1..len(members), with a 95%
    bootstrap interval over questions; members are answered in index order, so the first k of
    an n-member run are exactly a k-member run (same seeds, same calls)."""
    out = []
    for k in range(1, len(members) + 1):
        _, verdicts, summary = score_members(labels, members[:k], urls)
        s = verdicts["score"].to_numpy()
        ci = score_interval(s, n_boot=n_boot, seed=seed)
        out.append({"n": k, "score": round(float(summary["score"]), 4), "low": round(ci.low, 4),
                    "high": round(ci.high, 4), "questions": int(s.size)})
    return out


def plot_curve(points: dict[str, list[dict[str, Any]]], title: str, path: Path) -> Path:
    """Score vs ensemble size, one line (with its 95% band) per question set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
    for name, pts in points.items():
        x = [p["n"] for p in pts]
        ax.plot(x, [p["score"] for p in pts], marker="o", label=f"{name} (n={pts[0]['questions']})")
        ax.fill_between(x, [p["low"] for p in pts], [p["high"] for p in pts], alpha=0.15)
    ax.set_xlabel("ensemble members voted")
    ax.set_ylabel("official score")
    ax.set_xticks(sorted({p["n"] for pts in points.values() for p in pts}))
    ax.set_ylim(0, 1)
    return _save(fig, ax, title, path)


def run_cost(members: list[pl.DataFrame], ids: list[str]) -> dict[str, float]:
    """What a run's members cost on the questions ``ids``: recorded LLM seconds, prompt tokens
    evaluated and completion tokens per question (cached replies keep their first latency)."""
    rows = pl.concat([m.select("question_id", "latency_s", "prompt_tokens", "completion_tokens",
                               *(["prompt_evaluated"] if "prompt_evaluated" in m.columns else []))
                      for m in members], how="diagonal").filter(pl.col("question_id").is_in(ids))
    n = max(len(set(ids)), 1)
    evaluated = rows["prompt_evaluated"] if "prompt_evaluated" in rows.columns else rows["prompt_tokens"]
    return {"questions": len(set(ids)), "llm_s_per_question": round(float(rows["latency_s"].sum()) / n, 2),
            "prompt_evaluated_per_question": round(float(evaluated.fill_null(0).sum()) / n, 1),
            "completion_tokens_per_question": round(float(rows["completion_tokens"].sum()) / n, 1)}


def same_work_speed(a: pl.DataFrame, b: pl.DataFrame) -> dict[str, float]:
    """The machine-speed ratio of two runs from the calls they both made with the same work: rows of
    the same question whose prompt, evaluated and completion token counts are equal and that cost
    time in both (not shared, not skipped). Latencies of runs made on different days compare only through it."""
    keys = ["question_id", "prompt_tokens", "completion_tokens"]
    keys += ["prompt_evaluated"] if "prompt_evaluated" in a.columns and "prompt_evaluated" in b.columns else []
    j = (a.filter(pl.col("latency_s") > 0).select(*keys, pl.col("latency_s").alias("a"))
         .join(b.filter(pl.col("latency_s") > 0).select(*keys, pl.col("latency_s").alias("b")), on=keys))
    sa, sb = float(j["a"].sum()), float(j["b"].sum())
    return {"calls": j.height, "a_s": round(sa, 1), "b_s": round(sb, 1), "b_over_a": round(sb / sa, 3) if sa else float("nan")}
