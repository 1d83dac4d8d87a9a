"""The data behind the HTML run report: plain dicts built from a run's artifacts, no markup.

`build_report_data` takes what the score stage already has (the questions, the submission,
the verdict table when labelled, the plot tables) plus the retrieved contexts of every
attempt, each member's answer rows and the tree's section titles, and returns one dict per
question with everything the page shows:

- the verdict (gold vs predicted value, unit and refs, the credit per component, the error
  category, points lost) when the questions are labelled, nothing of it when not;
- the context **exactly as the reader saw it**: member i's view (``ensemble.MEMBER_VIEWS``) of the
  retrieve attempt its answer came from, numbered from 1 in that order, each unit's text as
  the typed reader shows it (tables as records, ``typed_answer.typed_units``), its document, section, page, retrieval
  source and rank, the units the member pointed at, and the units holding the gold value or
  the gold quote (``supporting_materials``) when the labels give one;
- every member's answer, pointers, raw replies and the prompt, rebuilt with the answer
  stage's own functions (`typed_answer.typed_user_message`) from the stored view and level,
  and the vote.

The page (report_html.py) renders these with Jinja2 templates; tests check this data.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.answer.ensemble import MEMBER_EXTRA_DEMO_KINDS, MEMBER_VIEWS, member_view, member_view_name
from stages.core.answer.grounding import grounded_number, numbers_in
from stages.core.answer.kinds import question_type
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import ContextBlock, context_levels
from stages.core.answer.typed_answer import DEMO_KINDS, TypedSetup, typed_prefixes, typed_units, typed_user_message
from stages.core.common.dataio import InputError, read_csv_tolerant
from stages.core.common.params import section
from stages.core.common.values import BLANK, Range, parse_value, ref_id_set
from stages.core.score.analysis import category_table, gold_in_context, type_table
from stages.core.score.bootstrap import score_interval

# what a run's report reads, relative to the project root (the score stage's deps)
SUBMISSION = "submissions/submission.csv"
CONTEXTS = "artifacts/retrieve/contexts.parquet"
RETRY_CONTEXTS = "artifacts/retrieve/retry_contexts.parquet"
ANSWERS = "artifacts/answers"
NODES = "artifacts/tree/nodes.parquet"
QUOTE_NGRAM = 6  # a unit "holds the gold quote" when it shares a run of this many words with it


@dataclass
class RunInputs:
    """One run's artifacts, as the score stage (or stages.compare at a revision) reads them."""

    questions: pl.DataFrame  # data.questions (labelled: with answer_value/ref_id/supporting_materials)
    submission: pl.DataFrame | None  # submissions/submission.csv
    contexts: pl.DataFrame | None  # contexts.parquet and retry_contexts.parquet together (every attempt)
    members: list[pl.DataFrame] = field(default_factory=list)  # artifacts/answers/run_<i>.parquet, in order
    sections: dict[str, str] = field(default_factory=dict)  # section node id -> title (tree nodes)
    answer: AnswerParams = field(default_factory=AnswerParams)
    ensemble: EnsembleParams = field(default_factory=EnsembleParams)
    title: str = "Run report"


def read_run_inputs(root: Path, params: dict[str, Any], questions: pl.DataFrame, title: str) -> RunInputs:
    """A run's artifacts under `root`: the submission, the contexts of every attempt, the ensemble.n
    member files the vote used (those that exist, in order), the tree's section titles and the params."""
    ens = section(EnsembleParams, "ensemble", params)
    ctx = [pl.read_parquet(root / p) for p in (CONTEXTS, RETRY_CONTEXTS) if (root / p).exists()]
    members = []
    for i in range(ens.n):
        p = root / ANSWERS / f"run_{i}.parquet"
        if not p.exists():
            break
        members.append(pl.read_parquet(p))
    nodes = pl.read_parquet(root / NODES, columns=["node_id", "level", "title"]) if (root / NODES).exists() else None
    sub = root / SUBMISSION
    ap = section(AnswerParams, "answer", params)
    if ap.demo_file and (root / ap.demo_file).exists():  # a run materialised elsewhere (stages.compare at a rev)
        ap = dataclasses.replace(ap, demo_file=str(root / ap.demo_file))
    return RunInputs(questions, read_csv_tolerant(sub) if sub.exists() else None,
                     pl.concat(ctx, how="diagonal_relaxed") if ctx else None, members, section_titles(nodes),
                     ap, ens, title)


def section_titles(nodes: pl.DataFrame | None) -> dict[str, str]:
    """Section node id -> title, from the tree's nodes.parquet."""
    if nodes is None or nodes.is_empty():
        return {}
    sec = nodes.filter(pl.col("level") == "section")
    titles = sec["title"].to_list() if "title" in sec.columns else [None] * sec.height
    texts = sec["text"].to_list() if "text" in sec.columns else [""] * sec.height
    return {n: (t or x or "").strip()[:120] for n, t, x in zip(sec["node_id"].to_list(), titles, texts, strict=True)}


def section_of(node_id: str, sections: dict[str, str]) -> str | None:
    """The deepest section node above `node_id` (node ids are hierarchical, ``doc:sec2:p3:s1``)."""
    parts = node_id.split(":")
    for k in range(len(parts), 0, -1):
        cand = ":".join(parts[:k])
        if cand in sections:
            return cand
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", (text or "").lower())


def holds_quote(text: str, quote: str, n: int = QUOTE_NGRAM) -> bool:
    """Whether a unit shares a run of `n` words with the gold quote (all of it when shorter)."""
    q = _words(quote)
    if not q:
        return False
    t = " " + " ".join(_words(text)) + " "
    size = min(n, len(q))
    return any(" " + " ".join(q[i:i + size]) + " " in t for i in range(len(q) - size + 1))


def _gold_numbers(value: str) -> list[float] | None:
    """The numbers of a numeric or range gold value; None for text, True/False or blank."""
    v = parse_value(value)
    if isinstance(v, Range):
        return [v.low, v.high]
    return [v] if isinstance(v, float) else None


def holds_value(text: str, value: str, unit: str, kind: str) -> bool:
    """Whether a unit states the gold value (numbers up to the unit's own conversions; text verbatim)."""
    if not value or value.strip().lower() == BLANK or kind == "true_false":
        return False
    nums = _gold_numbers(value) if kind in ("numeric", "range") else None
    if nums is not None:
        stated = numbers_in(text)
        return all(grounded_number(x, stated, unit, strict=True) for x in nums)
    return len(value.strip()) >= 3 and value.strip().lower() in (text or "").lower()


def shown_rows(levels: list[list[dict[str, Any]]], view: str, attempt: int) -> list[dict[str, Any]]:
    """The context rows of retrieve attempt `attempt` in the order member view `view` shows them."""
    if not levels or attempt < 0:
        return []
    seen = member_view(levels, view)
    return seen[attempt] if attempt < len(seen) else []


def _member_fields(row: dict[str, Any], i: int, ens: EnsembleParams) -> tuple[str, int, list[int], list[str]]:
    """(view, retrieve attempt, pointers, raw replies), with fallbacks for rows written before they were stored."""
    view = row.get("view") or member_view_name(i)
    level = row.get("level")
    if level is None:
        level = max(int(row.get("attempts") or 0) - 1, 0)
    return view, int(level), [int(p) for p in (row.get("pointers") or [])], [str(x) for x in (row.get("raw") or [])]


def _unit(n: int, r: dict[str, Any], text: str, sections: dict[str, str]) -> dict[str, Any]:
    sec = section_of(r["node_id"], sections)
    return {"n": n, "doc_id": r["doc_id"], "node_id": r["node_id"], "section": sec,
            "section_title": sections.get(sec or "", ""), "page": r.get("page"), "source": r.get("source") or "",
            "rank": int(r["rank"]), "score": r.get("score"), "media": r.get("media"), "text": text,
            "pointed_by": [], "gold_value": False, "gold_quote": False, "gold_doc": False}


def _context(rows: list[dict[str, Any]], ap: AnswerParams, typed: bool, sections: dict[str, str]
             ) -> tuple[list[dict[str, Any]], list[ContextBlock]]:
    """Numbered units as the reader saw them, and the blocks its prompt was built from."""
    blocks = [ContextBlock(r["doc_id"], r["text"] or "", r.get("media")) for r in rows]
    shown = typed_units(blocks) if typed else blocks
    return [_unit(n, r, b.text, sections) for n, (r, b) in enumerate(zip(rows, shown, strict=True), start=1)], shown


def _fmt_refs(refs: Any) -> list[str]:
    if refs is None:
        return []
    if isinstance(refs, str):
        return sorted(ref_id_set(refs)) if refs.strip() and refs.strip().lower() != BLANK else []
    return [str(r) for r in refs]


def _prefixes(ap: AnswerParams) -> TypedSetup:
    """The typed reader's prefixes; without the worked examples when their file is not here."""
    try:
        return typed_prefixes(ap)
    except (InputError, OSError):
        return typed_prefixes(dataclasses.replace(ap, demos=[]))


def _missed(gold: dict[str, Any], contexts: dict[str, list[dict[str, Any]]], first_rank: int | None) -> bool:
    """A retrieval miss: the question has gold documents and no context a member read holds one (without
    member contexts, the first retrieve attempt's)."""
    if not gold["refs"]:
        return False
    if contexts:
        return not any(u["gold_doc"] for units in contexts.values() for u in units)
    return first_rank is None


def build_report_data(run: RunInputs, verdicts: pl.DataFrame | None = None, summary: dict[str, Any] | None = None,
                      tables: dict[str, pl.DataFrame] | None = None, *, n_boot: int = 10000) -> dict[str, Any]:
    """Everything the run report shows, as plain data (see the module docstring)."""
    ap, ens = run.answer, run.ensemble
    labelled = verdicts is not None and verdicts.height > 0
    levels = context_levels(run.contexts)
    members = [{r["question_id"]: r for r in m.iter_rows(named=True)} for m in run.members]
    sub = {r["id"]: r for r in run.submission.iter_rows(named=True)} if run.submission is not None else {}
    verdict = {r["id"]: r for r in verdicts.iter_rows(named=True)} if labelled else {}
    attempt0 = run.contexts.filter(pl.col("attempt") == 0) if run.contexts is not None else None
    gold_rank = gold_in_context(verdicts, attempt0) if labelled else {}
    setup = _prefixes(ap) if ap.reader == "typed" else None
    questions = []
    for q in run.questions.iter_rows(named=True):
        qid, text = q["id"], q["question"]
        unit = (q.get("answer_unit") or "").strip() or BLANK
        qtype = question_type(text, q.get("answer_unit"), ap.infer_unit, ap.unit_words)  # as the answer stage asked
        kind = qtype.kind
        typed = setup is not None
        v = verdict.get(qid)
        gold = None
        if v is not None:
            gold = {"value": q.get("answer_value") or BLANK, "unit": unit, "refs": _fmt_refs(q.get("ref_id")),
                    "quote": (q.get("supporting_materials") or "").strip()}
            if gold["quote"].lower() == BLANK:
                gold["quote"] = ""
        contexts: dict[str, list[dict[str, Any]]] = {}
        member_rows = []
        for i, m in enumerate(members):
            row = m.get(qid)
            if row is None:
                continue
            view, attempt, pointers, raw = _member_fields(row, i, ens)
            key = f"{view}/{attempt}"
            rows = shown_rows(levels.get(qid, []), view, attempt)
            units, blocks = _context(rows, ap, typed, run.sections)
            if key not in contexts:
                contexts[key] = units
            for p in pointers:
                if 1 <= p <= len(contexts[key]):
                    contexts[key][p - 1]["pointed_by"].append(i)
            prompt = ""
            if typed and blocks and not row.get("skipped"):
                prompt = typed_user_message(text, qtype.unit, blocks, kind)
            extra = MEMBER_EXTRA_DEMO_KINDS[i % len(MEMBER_EXTRA_DEMO_KINDS)]
            shown_demos = setup is not None and (kind in DEMO_KINDS or kind in extra)
            member_rows.append({
                "i": i, "seed": row.get("seed"), "view": view, "attempt": attempt, "context": key,
                "value": row.get("answer_value") or BLANK, "unit": row.get("answer_unit") or BLANK,
                "refs": _fmt_refs(row.get("ref_id")), "grounded": bool(row.get("grounded", True)),
                "skipped": bool(row.get("skipped")), "pointers": pointers, "raw": raw, "prompt": prompt,
                "demos": shown_demos, "attempts": int(row.get("attempts") or 0),
                "latency_s": float(row.get("latency_s") or 0.0), "explanation": row.get("explanation") or "",
            })
        if gold is not None:
            gold_docs = set(gold["refs"])
            for units in contexts.values():
                for u in units:
                    u["gold_doc"] = u["doc_id"].lower() in gold_docs
                    in_doc = u["gold_doc"] or not gold_docs
                    u["gold_value"] = in_doc and holds_value(u["text"], gold["value"], unit, kind)
                    u["gold_quote"] = in_doc and bool(gold["quote"]) and holds_quote(u["text"], gold["quote"])
        asked = [m for m in member_rows if not m["skipped"]]
        tally = Counter(m["value"] for m in asked)
        s = sub.get(qid, {})
        pred = {"value": s.get("answer_value") or BLANK, "unit": s.get("answer_unit") or BLANK,
                "refs": _fmt_refs(s.get("ref_id")), "urls": s.get("ref_url") or "",
                "supporting": s.get("supporting_materials") or "", "explanation": s.get("explanation") or ""}
        entry: dict[str, Any] = {
            "id": qid, "question": text, "kind": kind, "unit": unit, "pred": pred, "gold": gold,
            "members": member_rows, "contexts": contexts, "primary": member_rows[0]["context"] if member_rows else "",
            "tally": tally.most_common(), "n_asked": len(asked),
            "type": kind, "category": None, "correct": None, "score": None, "lost": None, "credits": None,
            "miss": None, "gold_rank": None,
        }
        if v is not None:
            entry.update(type=v["question_type"], category=v["error_category"],
                         correct=v["error_category"] == "correct", score=v["score"], lost=round(1.0 - v["score"], 6),
                         credits={"value": v["value"], "ref": v["ref"], "na": v["na"]},
                         miss=_missed(gold, contexts, gold_rank.get(qid, 0)),
                         gold_rank=gold_rank.get(qid))
        questions.append(entry)
    head = None
    if labelled and summary is not None:
        ci = score_interval(verdicts["score"].to_numpy(), n_boot=n_boot)
        head = {"score": summary["score"], "low": ci.low, "high": ci.high, "ci": ci.ci, "value": summary["value"],
                "ref": summary["ref"], "na": summary["na"], "strict": summary["strict"]["score"],
                "symmetric": summary["symmetric"]["score"], "n": summary["n"],
                "wrong": sum(1 for q in questions if q["correct"] is False),
                "misses": sum(1 for q in questions if q["miss"])}
    tables = tables or {}
    return {
        "title": run.title, "labelled": labelled, "n": len(questions), "head": head,
        "categories": category_table(verdicts).to_dicts() if labelled else [],
        "types": type_table(verdicts).to_dicts() if labelled else [],
        "curve": tables["ensemble_size"].to_dicts() if "ensemble_size" in tables else [],
        "members_alone": tables["member_scores"].to_dicts() if "member_scores" in tables else [],
        "questions": questions,
        "kinds": sorted({q["type"] for q in questions}),
        "category_names": sorted({q["category"] for q in questions if q["category"]}),
        "prefix": setup.prefix if setup is not None else [],
        "params": {"reader": ap.reader, "n": ens.n, "views": list(MEMBER_VIEWS), "strategy": "answer_priority",
                   "table_records": True, "demo_kinds": list(DEMO_KINDS)},
    }
