"""Is configuration B really better than A? Paired bootstrap, Welch's t-test, flipped questions.

Both sides are scored against the same labels with ``scoring.score_submission``, so
their per-question scores are paired. The paired bootstrap resamples questions (the
source of noise on a 41-question set) with a fixed seed, so a rerun prints the same
interval. Welch's t-test needs several runs per side: several submissions per side
(e.g. one experiment per seed), or else each ensemble member scored alone
(``metrics/plots/member_scores.csv`` of the score stage).

A side is a submission CSV path, ``workspace``, a DVC experiment name or any git
revision; several, comma-separated, make a multi-seed side. Files at a revision are
read with ``dvc.api`` (git-tracked files, or DVC outs from the local cache or the
remote), so no experiment is applied to the workspace.
"""
from __future__ import annotations

import io
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from stages.core.common.dataio import InputError, read_csv_tolerant
from stages.core.score.bootstrap import Bootstrap, paired_bootstrap
from stages.core.score.verdicts import score_submission

SUBMISSION_PATH = "submissions/submission.csv"
MEMBERS_PATH = "metrics/plots/member_scores.csv"


@dataclass
class Run:
    """One submission of a side, where it came from, and its members' own scores if known."""

    label: str
    submission: pl.DataFrame
    member_scores: list[float] = field(default_factory=list)


@dataclass
class Scored:
    """A side after scoring: its runs' verdict tables (aligned on the labels' order)."""

    label: str
    runs: list[Run]
    tables: list[pl.DataFrame]
    summaries: list[dict[str, Any]]

    @property
    def per_question(self) -> np.ndarray:
        """Mean score per question over the side's runs."""
        return np.mean([t["score"].to_numpy() for t in self.tables], axis=0)

    @property
    def run_scores(self) -> list[float]:
        return [float(s["score"]) for s in self.summaries]


# --- resolving a side ---------------------------------------------------------

def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def resolve_rev(spec: str, repo: Path) -> str:
    """A DVC experiment name (refs/exps/.../<name>) or git revision -> a revision git understands."""
    refs = _git(repo, "for-each-ref", "--format=%(refname)", "refs/exps").stdout.split()
    hits = [r for r in refs if r.rsplit("/", 1)[-1] == spec and not r.startswith("refs/exps/exec/")]
    if len(hits) > 1:
        raise InputError(f"{spec}: ambiguous experiment name, matches {', '.join(hits)}; pass one of these refs")
    if hits:
        return hits[0]
    if _git(repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}").returncode == 0:
        return spec
    raise InputError(f"{spec}: not a file, an experiment (see `dvc exp show`) or a git revision in {repo}")


def read_at_rev(repo: Path, path: str, rev: str) -> str | None:
    """A file's text at a revision (git-tracked or a DVC out), None if the revision lacks it."""
    import dvc.api
    from dvc.exceptions import DvcException, PathMissingError

    try:
        return dvc.api.read(path, repo=str(repo), rev=rev)
    except PathMissingError:
        return None
    except DvcException as e:
        raise InputError(f"{path} at {rev}: {e}") from e


def _member_scores(text: str | None) -> list[float]:
    if not text:
        return []
    df = pl.read_csv(io.StringIO(text))
    # a member skipped by ensemble.early_stop has no score of its own (an empty cell)
    return [float(x) for x in df["score"].to_list() if x is not None] if "score" in df.columns else []


def load_run(spec: str, repo: Path = Path("."), submission_path: str = SUBMISSION_PATH,
             members_path: str = MEMBERS_PATH) -> Run:
    """One side element: a CSV path, `workspace`, an experiment name or a git revision."""
    p = Path(spec)
    if p.is_file():
        return Run(spec, read_csv_tolerant(p))
    if spec == "workspace":
        sub = repo / submission_path
        if not sub.is_file():
            raise InputError(f"{sub}: file not found (run the pipeline first)")
        members = repo / members_path
        return Run(spec, read_csv_tolerant(sub), _member_scores(members.read_text(encoding="utf-8") if members.is_file() else None))
    rev = resolve_rev(spec, repo)
    text = read_at_rev(repo, submission_path, rev)
    if text is None:
        raise InputError(f"{spec}: {submission_path} does not exist at {rev}")
    sub_df = pl.read_csv(io.StringIO(text), infer_schema=False).with_columns(pl.all().fill_null(""))
    return Run(spec, sub_df, _member_scores(read_at_rev(repo, members_path, rev)))


def load_side(spec: str, repo: Path = Path("."), submission_path: str = SUBMISSION_PATH,
              members_path: str = MEMBERS_PATH) -> list[Run]:
    """`a,b,c` -> three runs of one configuration (e.g. three seeds)."""
    parts = [s.strip() for s in spec.split(",") if s.strip()]
    if not parts:
        raise InputError(f"{spec!r}: empty side")
    return [load_run(s, repo, submission_path, members_path) for s in parts]


# --- statistics ---------------------------------------------------------------

@dataclass(frozen=True)
class Welch:
    """Welch's unequal-variance t-test of B's run scores against A's."""

    source: str  # "runs" (several submissions per side) or "members" (members scored alone)
    a: tuple[float, ...]
    b: tuple[float, ...]
    t: float
    p: float


def welch_test(a: list[float], b: list[float], source: str) -> Welch | None:
    """scipy's Welch t-test; None with fewer than two values on a side."""
    if len(a) < 2 or len(b) < 2:
        return None
    from scipy import stats

    with np.errstate(all="ignore"):
        res = stats.ttest_ind(b, a, equal_var=False)
    return Welch(source, tuple(a), tuple(b), float(res.statistic), float(res.pvalue))


# --- flips and the whole comparison ---------------------------------------------

def flips(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """Questions whose score changed from A to B; `change` is fixed (wrong -> correct),
    broken (correct -> wrong) or changed (partial credit moved), biggest moves first."""
    cols = ["id", "question_type", "gold_answer_value", "pred_answer_value", "error_category", "score"]
    j = a.select(cols).join(b.select("id", "pred_answer_value", "error_category", "score"), on="id",
                            suffix="_b", how="inner", maintain_order="left")
    j = j.rename({"pred_answer_value": "pred_a", "error_category": "category_a", "score": "score_a",
                  "pred_answer_value_b": "pred_b", "error_category_b": "category_b", "score_b": "score_b",
                  "gold_answer_value": "gold"})
    j = j.with_columns((pl.col("score_b") - pl.col("score_a")).round(6).alias("delta")).filter(pl.col("delta") != 0)
    ok_a, ok_b = pl.col("category_a") == "correct", pl.col("category_b") == "correct"
    change = (pl.when(~ok_a & ok_b).then(pl.lit("fixed")).when(ok_a & ~ok_b).then(pl.lit("broken"))
              .otherwise(pl.lit("changed")))
    return j.with_columns(change.alias("change")).sort(pl.col("delta").abs(), "id", descending=[True, False])


@dataclass
class Comparison:
    """Everything `stages.compare` prints."""

    a: Scored
    b: Scored
    bootstrap: Bootstrap
    welch: Welch | None
    flipped: pl.DataFrame
    n: int
    notes: list[str] = field(default_factory=list)


def score_side(label: str, runs: list[Run], labels: pl.DataFrame) -> Scored:
    tables, summaries = [], []
    for r in runs:
        summary, table = score_submission(labels, r.submission, "labels", r.label)
        tables.append(table)
        summaries.append(summary)
    return Scored(label, runs, tables, summaries)


def compare(labels: pl.DataFrame, a_runs: list[Run], b_runs: list[Run], *, label_a: str = "A", label_b: str = "B",
            n_boot: int = 10000, seed: int = 0, ci: float = 0.95) -> Comparison:
    """Score both sides on `labels`, bootstrap the paired difference, Welch-test the runs, list flips.

    Welch uses several runs per side when both have them, else the members' own scores
    when both sides recorded them; flips compare each side's first run.
    """
    a, b = score_side(label_a, a_runs, labels), score_side(label_b, b_runs, labels)
    boot = paired_bootstrap(a.per_question, b.per_question, n_boot=n_boot, seed=seed, ci=ci)
    notes = []
    if len(a_runs) > 1 and len(b_runs) > 1:
        welch = welch_test(a.run_scores, b.run_scores, "runs")
    else:
        ma, mb = a_runs[0].member_scores, b_runs[0].member_scores
        same = bool(ma) and sorted(ma) == sorted(mb)
        welch = welch_test(ma, mb, "members") if len(a_runs) == 1 and len(b_runs) == 1 and not same else None
        if same:
            notes.append("no Welch t-test: both sides' members score the same (likely the same answers, "
                         "differing only after answering, e.g. in voting); only the paired bootstrap applies")
        elif welch is None:
            notes.append("no Welch t-test: give several runs per side (A1,A2,... B1,B2,...) or experiments whose "
                         "score stage recorded member scores")
    if len(a_runs) > 1 or len(b_runs) > 1:
        notes.append("bootstrap on the per-question mean over each side's runs; flips compare the first runs")
    return Comparison(a, b, boot, welch, flips(a.tables[0], b.tables[0]), labels.height, notes)


def _short(s: object, n: int = 24) -> str:
    t = " ".join(str("" if s is None else s).split())
    return t if len(t) <= n else t[: n - 1] + "…"


def format_comparison(c: Comparison, max_flips: int | None = None) -> str:
    """The human-readable comparison."""
    lines = []
    for name, side in (("A", c.a), ("B", c.b)):
        scores = ", ".join(f"{s:.4f}" for s in side.run_scores)
        strict = ", ".join(f"{s['strict']['score']:.4f}" for s in side.summaries)
        members = side.runs[0].member_scores
        extra = f"; members alone {', '.join(f'{m:.3f}' for m in members)}" if members else ""
        lines.append(f"{name}: {side.label}: score {scores} (strict {strict}){extra}")
    bt = c.bootstrap
    lines.append(f"Δ (B − A) = {bt.delta:+.4f}, {bt.ci:.0%} paired bootstrap CI [{bt.low:+.4f}, {bt.high:+.4f}] "
                 f"over {c.n} questions ({bt.n_boot} resamples, seed {bt.seed}); P(Δ ≤ 0) = {bt.p_not_better:.3f}")
    if c.welch is not None:
        w = c.welch
        what = "runs" if w.source == "runs" else "ensemble members scored alone"
        lines.append(f"Welch's t-test ({what}, {len(w.a)} vs {len(w.b)}): mean {np.mean(w.a):.4f} vs "
                     f"{np.mean(w.b):.4f}, t = {w.t:.3f}, p = {w.p:.4f}" if np.isfinite(w.p) else
                     f"Welch's t-test ({what}): undefined (no spread in the scores)")
    lines += [f"note: {n}" for n in c.notes]
    f = c.flipped
    fixed, broken = int((f["change"] == "fixed").sum()), int((f["change"] == "broken").sum())
    lines.append(f"Flipped: B fixes {fixed}, breaks {broken}; {f.height - fixed - broken} more changed score "
                 f"(of {c.n} questions)")
    shown = f if max_flips is None else f.head(max_flips)
    if shown.height:
        rows = [[r["id"], r["change"], f"{r['delta']:+.3f}", r["question_type"], _short(r["gold"]),
                 f"{_short(r['pred_a'])} [{r['category_a']}]", f"{_short(r['pred_b'])} [{r['category_b']}]"]
                for r in shown.iter_rows(named=True)]
        head = ["id", "change", "Δ", "type", "gold", "A", "B"]
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines += [fmt.format(*head).rstrip(), "  ".join("-" * w for w in widths)]
        lines += [fmt.format(*r).rstrip() for r in rows]
        if shown.height < f.height:
            lines.append(f"… {f.height - shown.height} more")
    return "\n".join(lines)


def comparison_json(c: Comparison) -> dict[str, Any]:
    """The comparison as plain data (for --json)."""
    def side(s: Scored) -> dict[str, Any]:
        return {"label": s.label, "runs": [r.label for r in s.runs], "scores": s.run_scores,
                "strict_scores": [x["strict"]["score"] for x in s.summaries],
                "member_scores": s.runs[0].member_scores}

    bt = c.bootstrap
    out: dict[str, Any] = {
        "a": side(c.a), "b": side(c.b), "n": c.n,
        "bootstrap": {"delta": bt.delta, "low": bt.low, "high": bt.high, "p_not_better": bt.p_not_better,
                      "n_boot": bt.n_boot, "seed": bt.seed, "ci": bt.ci},
        "welch": None if c.welch is None else {"source": c.welch.source, "a": list(c.welch.a), "b": list(c.welch.b),
                                               "t": c.welch.t, "p": c.welch.p},
        "flipped": c.flipped.to_dicts(),
        "notes": c.notes,
    }
    return out
