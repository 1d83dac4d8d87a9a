"""Where a submission loses points: counts, a readable report, plot tables, ensemble curve.

Everything here starts from the per-question verdict table of
``scoring.score_submission`` (one row per question with credits, question type and
error category), so the analysis never re-implements the metric. The ensemble-size
curve re-votes the stored member answers with ``voting.vote_all``: pure CPU, no LLM.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import polars as pl
from tqdm import tqdm

from stages.core.answer.record import Answer
from stages.core.answer.submission import build_submission
from stages.core.answer.voting import vote_all
from stages.core.common.values import ref_id_set
from stages.core.score.evidence import kind_table
from stages.core.score.metric import QuestionType
from stages.core.score.verdicts import score_submission

# The decision tree's leaves (scoring.error_category), in the order the report lists them.
CATEGORIES: tuple[str, ...] = (
    "correct",
    "unnecessary_abstention",
    "false_answer_on_na",
    "reference_mismatch",
    "value_selection",
    "rounding",
    "unit_conversion",
    "type_mismatch",
    "categorical_mismatch",
)
ERROR_CATEGORIES: tuple[str, ...] = CATEGORIES[1:]
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)

CATEGORY_SCHEMA: dict[str, Any] = {"category": pl.String, "count": pl.Int64, "share": pl.Float64,
                                   "points_lost": pl.Float64}
TYPE_SCHEMA: dict[str, Any] = {"question_type": pl.String, "n": pl.Int64, "correct": pl.Int64,
                               "score": pl.Float64, "value": pl.Float64, "ref": pl.Float64, "na": pl.Float64}
CURVE_SCHEMA: dict[str, Any] = {"members": pl.Int64, "score": pl.Float64, "value": pl.Float64, "ref": pl.Float64,
                                "na": pl.Float64, "strict_score": pl.Float64}
MEMBER_SCHEMA: dict[str, Any] = {"member": pl.Int64, "seed": pl.Int64, "score": pl.Float64, "value": pl.Float64,
                                 "ref": pl.Float64, "na": pl.Float64, "strict_score": pl.Float64}


def category_table(verdicts: pl.DataFrame) -> pl.DataFrame:
    """One row per category (all of them, zeros included, so columns are stable across runs).

    ``points_lost`` is the category's share of the gap to a perfect score: the sum of
    ``1 - score`` over its questions divided by all questions; the rows add up to
    ``1 - score``, so it ranks what to fix first.
    """
    unknown = set(verdicts["error_category"].to_list()) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown error categories {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
    n = max(verdicts.height, 1)
    rows = []
    for c in CATEGORIES:
        sub = verdicts.filter(pl.col("error_category") == c)
        lost = float((1.0 - sub["score"]).sum()) if sub.height else 0.0
        rows.append({"category": c, "count": sub.height, "share": round(sub.height / n, 6),
                     "points_lost": round(lost / n, 6)})
    return pl.DataFrame(rows, schema=CATEGORY_SCHEMA)


def type_table(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Score and credits per question type (numeric, range, list, text, true_false, na); empty types omitted."""
    rows = []
    for t in QUESTION_TYPES:
        sub = verdicts.filter(pl.col("question_type") == t)
        if not sub.height:
            continue
        means = {c: round(float(sub[c].mean()), 6) for c in ("score", "value", "ref", "na")}  # type: ignore[arg-type]
        rows.append({"question_type": t, "n": sub.height,
                     "correct": int((sub["error_category"] == "correct").sum()), **means})
    return pl.DataFrame(rows, schema=TYPE_SCHEMA)


def categories_metrics(verdicts: pl.DataFrame, labels: pl.DataFrame | None = None) -> dict[str, Any]:
    """The DVC metrics file: counts per category and per question type, score per type and, with
    ``labels``, per evidence kind (quote, table, figure, arithmetic, unanswerable: evidence.py)."""
    cats = category_table(verdicts)
    types = type_table(verdicts)
    by_type: dict[str, dict[str, Any]] = {t: {"n": 0} for t in QUESTION_TYPES}
    for r in types.iter_rows(named=True):
        by_type[r["question_type"]] = {"n": r["n"], "correct": r["correct"], "score": r["score"]}
    return {
        "labelled": True,
        "n": verdicts.height,
        "categories": dict(zip(cats["category"].to_list(), cats["count"].to_list())),
        "types": by_type,
        **({"evidence": {k: {"n": n, "score": sc} for k, n, sc in kind_table(verdicts, labels).iter_rows()}}
           if labels is not None and "answer_value" in labels.columns else {}),
    }


def empty_metrics(n: int) -> dict[str, Any]:
    """categories.json for questions without gold answers (test_Q): nothing to diagnose."""
    return {"labelled": False, "n": n}


# --- ensemble size ----------------------------------------------------------

def _score_answers(labels: pl.DataFrame, answers: list[Answer]) -> dict[str, Any]:
    """Score voted answers exactly as the vote stage would write them (same submission builder)."""
    summary, _ = score_submission(labels, build_submission(labels, answers, {}))
    return summary


def _curve_row(summary: dict[str, Any]) -> dict[str, float]:
    return {"score": summary["score"], "value": summary["value"], "ref": summary["ref"], "na": summary["na"],
            "strict_score": summary["strict"]["score"]}


def ensemble_curve(members: Sequence[dict[str, Answer]], labels: pl.DataFrame) -> pl.DataFrame:
    """Score of the vote over members 0..k-1 for k = 1..n (the stored answers, no new LLM calls):
    what more members of this run buy. At k = n it equals the submission's score.
    """
    ids = labels["id"].to_list()
    rows = []
    for k in tqdm(range(1, len(members) + 1), desc="score: ensemble curve", unit="k", disable=len(members) < 5):
        rows.append({"members": k, **_curve_row(_score_answers(labels, vote_all(list(members[:k]), ids)))})
    return pl.DataFrame(rows, schema=CURVE_SCHEMA)


def member_table(members: Sequence[dict[str, Answer | None]], seeds: Sequence[int],
                 labels: pl.DataFrame) -> pl.DataFrame:
    """Each member scored alone: the per-seed spread that `stages.compare` feeds to Welch's t-test.
    A member that was not asked some questions (the vote was decided without it) has no score alone (nulls)."""
    ids = labels["id"].to_list()
    empty = {k: None for k in MEMBER_SCHEMA if k not in ("member", "seed")}
    rows = [{"member": i, "seed": seed,
             **(empty if any(m.get(q, True) is None for q in ids)
                else _curve_row(_score_answers(labels, vote_all([m], ids))))}
            for i, (m, seed) in enumerate(zip(members, seeds, strict=True))]
    return pl.DataFrame(rows, schema=MEMBER_SCHEMA)


# --- Markdown report --------------------------------------------------------

def _cell(s: object, limit: int = 80) -> str:
    """A value made safe for one Markdown table cell."""
    t = " ".join(str("" if s is None else s).split()).replace("|", "\\|")
    return t if len(t) <= limit else t[: limit - 1] + "…"


def _fmt(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _truncate(text: str, max_chars: int) -> str:
    t = " ".join((text or "").split())
    if len(t) <= max_chars:
        return t
    cut = t[:max_chars].rsplit(" ", 1)[0]
    return cut + " …"


def gold_in_context(verdicts: pl.DataFrame, contexts: pl.DataFrame | None) -> dict[str, int | None]:
    """Per question: rank of the first context block from a gold document, None if none (a retrieval miss).

    Questions without gold refs (NA) and questions without context rows are left out.
    """
    if contexts is None or contexts.is_empty():
        return {}
    out: dict[str, int | None] = {}
    by_q = {qid: g.sort("rank") for (qid,), g in contexts.group_by("question_id")}
    for r in verdicts.iter_rows(named=True):
        gold = ref_id_set(r["gold_ref_id"])
        g = by_q.get(r["id"])
        if not gold or g is None:
            continue
        hits = [rank for rank, doc in zip(g["rank"].to_list(), g["doc_id"].to_list()) if str(doc).lower() in gold]
        out[r["id"]] = hits[0] if hits else None
    return out


def _context_lines(blocks: pl.DataFrame, gold: set[str], max_blocks: int, max_chars: int) -> list[str]:
    """The first `max_blocks` context blocks in rank order (gold-document blocks always shown, marked ★)."""
    blocks = blocks.sort("rank")
    is_gold = [str(d).lower() in gold for d in blocks["doc_id"].to_list()]
    keep = [i for i in range(blocks.height) if i < max_blocks or is_gold[i]]
    lines = []
    for i in keep:
        b = blocks.row(i, named=True)
        star = " ★ gold doc" if is_gold[i] else ""
        media = f", {b['media']}" if b.get("media") else ""
        score = f"{b['score']:.4f}" if b.get("score") is not None else "–"
        lines.append(f"- **#{b['rank']}** `{b['node_id']}` score {score}, "
                     f"{b.get('source') or '?'}, freq {b.get('frequency')}{media}{star}")
        lines.append(f"  > {_truncate(b['text'], max_chars)}")
    if blocks.height > len(keep):
        lines.append(f"- … {blocks.height - len(keep)} more block(s) not shown")
    return lines


def build_report(
    summary: dict[str, Any],
    verdicts: pl.DataFrame,
    contexts: pl.DataFrame | None = None,
    curve: pl.DataFrame | None = None,
    *,
    title: str = "Score report",
    max_blocks: int = 6,
    max_chars: int = 400,
) -> str:
    """Markdown: summary, categories, types, ensemble curve, all verdicts, then each wrong
    answer with its retrieved context (first `max_blocks` blocks of `max_chars` characters,
    plus every block from a gold document) so a reader can tell a retrieval miss from a
    reading error."""
    cats = category_table(verdicts)
    types = type_table(verdicts)
    gold_rank = gold_in_context(verdicts, contexts)
    wrong = verdicts.filter(pl.col("error_category") != "correct")
    misses = [q for q in wrong["id"].to_list() if q in gold_rank and gold_rank[q] is None]
    strict = summary.get("strict", {})
    parts = [
        f"# {title}",
        "",
        f"**Score {_fmt(summary['score'])}** (official WattBot metric: value {_fmt(summary['value'])}, "
        f"ref {_fmt(summary['ref'])}, NA {_fmt(summary['na'])}) over {summary['n']} questions; "
        f"strict {_fmt(strict.get('score'))}, symmetric {_fmt(summary.get('symmetric', {}).get('score'))}. "
        f"{wrong.height} question(s) lost points"
        + (f"; {len(misses)} of them had no gold document in the context (retrieval misses)." if contexts is not None
           else "."),
        "",
        "## Error categories",
        "",
        "`points lost` = the category's share of `1 - score`; the column adds up to the gap to a perfect score.",
        "",
        _table(["category", "count", "share", "points lost"],
               [[c, n, _fmt(s), _fmt(p)] for c, n, s, p in cats.iter_rows()]),
        "",
        "## Score by question type",
        "",
        _table(["type", "n", "correct", "score", "value", "ref", "NA"],
               [[t, n, k, _fmt(s), _fmt(v), _fmt(r), _fmt(a)] for t, n, k, s, v, r, a in types.iter_rows()]),
    ]
    if curve is not None and curve.height:
        parts += ["", "## Score versus ensemble size", "",
                  "Members 0..k-1 of this run voted as the vote stage votes.", "",
                  _table(["members", "score", "value", "ref", "NA", "strict"],
                         [[k, *(_fmt(x) for x in rest)] for k, *rest in curve.iter_rows()])]
    verdict_rows = []
    for r in verdicts.iter_rows(named=True):
        g = gold_rank[r["id"]] if r["id"] in gold_rank else "–"
        verdict_rows.append([r["id"], r["question_type"], _cell(r["gold_answer_value"], 30),
                             _cell(r["pred_answer_value"], 30), _fmt(r["value"]), _fmt(r["ref"]), _fmt(r["na"]),
                             _fmt(r["score"]), r["error_category"], "miss" if g is None else g])
    parts += ["", "## All questions", "",
              "`gold@` = rank of the first context block from a gold document (`miss`: none retrieved).", "",
              _table(["id", "type", "gold", "predicted", "value", "ref", "NA", "score", "category", "gold@"],
                     verdict_rows)]
    parts += ["", "## Wrong answers", ""]
    if not wrong.height:
        parts.append("None: every question is correct.")
    for r in wrong.iter_rows(named=True):
        gold = ref_id_set(r["gold_ref_id"])
        parts += [
            f"### {r['id']} — {r['error_category']} ({r['question_type']}, score {_fmt(r['score'])})",
            "",
            f"**Q:** {' '.join(str(r['question'] or '').split())}",
            "",
            f"- gold: `{_cell(r['gold_answer_value'], 200)}` refs `{_cell(r['gold_ref_id'], 200)}`",
            f"- predicted: `{_cell(r['pred_answer_value'], 200)}` refs `{_cell(r['pred_ref_id'], 200)}`",
            f"- credits: value {_fmt(r['value'])}, ref {_fmt(r['ref'])}, NA {_fmt(r['na'])}",
            "",
        ]
        if contexts is None:
            continue
        blocks = contexts.filter(pl.col("question_id") == r["id"])
        if blocks.is_empty():
            parts += ["_No retrieved context for this question._", ""]
            continue
        tokens = f", {int(blocks['n_tokens'].sum())} tokens" if "n_tokens" in blocks.columns else ""
        parts += [f"Context, first attempt ({blocks.height} blocks{tokens}):", "",
                  *_context_lines(blocks, gold, max_blocks, max_chars), ""]
    return "\n".join(parts).rstrip() + "\n"


def empty_report(n: int, questions: str) -> str:
    """report.md for unlabelled questions, so the stage's outputs always exist."""
    return f"# Score report\n\n{questions} has no gold answers ({n} questions): nothing to diagnose.\n"


# --- plots ------------------------------------------------------------------

def plot_tables(verdicts: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The CSVs that `dvc plots` draws: error categories (without `correct`) and score by type."""
    cats = category_table(verdicts).filter(pl.col("category") != "correct")
    return {"error_categories": cats, "score_by_type": type_table(verdicts)}


PLOT_SCHEMAS: dict[str, dict[str, Any]] = {"error_categories": CATEGORY_SCHEMA, "score_by_type": TYPE_SCHEMA,
                                           "ensemble_size": CURVE_SCHEMA, "member_scores": MEMBER_SCHEMA}


def all_plot_tables(verdicts: pl.DataFrame | None, labels: pl.DataFrame, members: Sequence[dict[str, Answer]],
                    seeds: Sequence[int]) -> dict[str, pl.DataFrame]:
    """Every plot table the score stage writes; header-only where there is nothing to compute
    (no labels, or no member files), so the stage's outputs always exist."""
    tables = {name: pl.DataFrame(schema=schema) for name, schema in PLOT_SCHEMAS.items()}
    if verdicts is None:
        return tables
    tables.update(plot_tables(verdicts))
    if members:
        tables["ensemble_size"] = ensemble_curve(members, labels)
        tables["member_scores"] = member_table(members, seeds, labels)
    return tables


def plot_pngs(tables: dict[str, pl.DataFrame]) -> dict[str, bytes]:
    """The PNG bytes of each plot (error categories, score by type, score versus ensemble size)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    specs = {
        "error_categories": ("category", "count", "questions", "Error categories", "barh"),
        "score_by_type": ("question_type", "score", "mean score", "Score by question type", "barh"),
        "ensemble_size": ("members", "score", "score", "Score versus ensemble size", "line"),
    }
    out = {}
    for name, (x, y, ylabel, title, kind) in specs.items():
        df = tables.get(name)
        fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
        if df is None or df.is_empty():
            ax.text(0.5, 0.5, "no data (unlabelled questions or no members)", ha="center", va="center")
            ax.set_axis_off()
        elif kind == "barh":
            ax.barh(df[x].to_list()[::-1], df[y].to_list()[::-1], color="#4c72b0")
            ax.set_xlabel(ylabel)
            if y == "score":
                ax.set_xlim(0, 1)
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            ax.plot(df[x].to_list(), df[y].to_list(), marker="o", label="score")
            if "strict_score" in df.columns:
                ax.plot(df[x].to_list(), df["strict_score"].to_list(), marker=".", linestyle="--", label="strict")
            ax.set_xlabel("ensemble members")
            ax.set_ylabel(ylabel)
            ax.set_xticks(df[x].to_list())
            ax.legend()
        ax.set_title(title)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        plt.close(fig)
        out[name] = buf.getvalue()
    return out


def render_pngs(tables: dict[str, pl.DataFrame], out_dir: Path,
                pngs: dict[str, bytes] | None = None) -> list[Path]:
    """Static PNGs of the plot tables (for readers without `dvc plots show`); always one file per plot."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in (pngs if pngs is not None else plot_pngs(tables)).items():
        path = out_dir / f"{name}.png"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        written.append(path)
    return written
