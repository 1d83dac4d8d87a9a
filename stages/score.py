"""Score a submission with the WattBot metric: a CLI and the DVC ``score`` stage.

``python -m stages.score --labels L.csv --submission S.csv`` prints the summary JSON
(``--report R.md`` also writes the Markdown diagnosis).
With no arguments (the DVC stage) it scores ``submissions/submission.csv`` against
``data.questions`` and writes ``metrics/score.json`` + ``metrics/verdicts.parquet``,
and the analysis: ``metrics/categories.json`` (counts per error category and per
question type, score per type), ``metrics/report.md`` (every wrong answer with its
retrieved context) and ``metrics/plots/*.csv|png`` (error categories, score by type,
score versus ensemble size re-voted from ``artifacts/answers/run_<i>.parquet``, and
each member's own score). Unlabelled questions (test_Q) get ``{"n": N, "labelled": false}``
and empty tables, so the stage's outs always exist.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.common.artifacts import (
    write_csv,
    write_json,
    write_parquet,
    write_text,
)
from stages.core.common.dataio import has_answers, read_csv_tolerant
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.score import analysis
from stages.core.score.report_data import build_report_data, read_run_inputs
from stages.core.score.report_html import render_report
from stages.core.score.verdicts import VERDICT_SCHEMA, score_submission

SUBMISSION = Path("submissions/submission.csv")
SCORE_JSON = Path("metrics/score.json")
VERDICTS = Path("metrics/verdicts.parquet")
CATEGORIES_JSON = Path("metrics/categories.json")
REPORT = Path("metrics/report.md")
PLOTS = Path("metrics/plots")
ANSWERS = Path("artifacts/answers")
CONTEXTS = Path("artifacts/retrieve/contexts.parquet")
REPORT_HTML = Path("metrics/report.html")


def _read_labels(path: Path) -> pl.DataFrame:
    labels = read_csv_tolerant(path, strict=True)
    if not has_answers(labels):
        raise ValueError(f"{path}: no gold answers (answer_value/ref_id columns empty or absent)")
    return labels


def _score(
    labels_path: Path, labels: pl.DataFrame, submission_path: Path
) -> tuple[dict[str, Any], pl.DataFrame]:
    submission = read_csv_tolerant(submission_path)
    return score_submission(labels, submission, str(labels_path), str(submission_path))


def _read_contexts(path: Path) -> pl.DataFrame | None:
    """Attempt-0 contexts (what every member saw first), or None when retrieve has not run."""
    if not path.exists():
        print(f"score: {path} not found; the report shows no contexts", file=sys.stderr)
        return None
    ctx = pl.read_parquet(path)
    return ctx.filter(pl.col("attempt") == 0) if "attempt" in ctx.columns else ctx


def _members(params: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """Exactly the ensemble.n member files the vote stage voted (empty when any is missing)."""
    from stages.core.answer.params import EnsembleParams
    from stages.core.answer.voting import (
        read_member,  # the vote stage's reader, so the curve votes what vote voted
    )

    ens = section(EnsembleParams, "ensemble", params)
    paths = [ANSWERS / f"run_{i}.parquet" for i in range(ens.n)]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"score: member file(s) {', '.join(missing)} not found; no ensemble-size curve", file=sys.stderr)
        return [], []
    seeds = []
    for i, p in enumerate(paths):  # the seed the answer stage recorded; else the params' rule
        col = pl.read_parquet(p, columns=["seed"])["seed"] if "seed" in pl.read_parquet_schema(p) else None
        seeds.append(int(col[0]) if col is not None and len(col) and col[0] is not None else ens.seed + i)
    return [read_member(p) for p in paths], seeds


def _write_analysis(params: dict[str, Any], questions: str, labels: pl.DataFrame, summary: dict[str, Any],
                    table: pl.DataFrame) -> None:
    """categories.json, report.md and the plot tables/PNGs (empty ones for unlabelled questions)."""
    labelled = summary.get("labelled") is not False
    members, seeds = _members(params) if labelled else ([], [])
    tables = analysis.all_plot_tables(table if labelled else None, labels, members, seeds)
    if labelled:
        write_json(analysis.categories_metrics(table, labels), CATEGORIES_JSON)
        write_text(analysis.build_report(summary, table, _read_contexts(CONTEXTS), tables["ensemble_size"],
                                         title=f"Score report: {SUBMISSION} vs {questions}"), REPORT)
    else:
        write_json(analysis.empty_metrics(labels.height), CATEGORIES_JSON)
        write_text(analysis.empty_report(labels.height, questions), REPORT)
    for name, df in tables.items():
        write_csv(df, PLOTS / f"{name}.csv")
    pngs = analysis.plot_pngs(tables)
    analysis.render_pngs(tables, PLOTS, pngs)
    t0 = time.perf_counter()
    run = read_run_inputs(Path("."), params, labels, title=f"Run report: {SUBMISSION} vs {questions}")
    data = build_report_data(run, table if labelled else None, summary if labelled else None, tables)
    html = render_report(data, pngs)
    write_text(html, REPORT_HTML)
    print(f"score: {REPORT_HTML}: {data['n']} questions, {len(html.encode()) / 1024:.0f} KB, built in "
          f"{time.perf_counter() - t0:.2f} s", file=sys.stderr)


def _html_report(labels_path: Path, submission_path: Path, summary: dict[str, Any], table: pl.DataFrame) -> str:
    """The run report of any submission against any labels, with this folder's run artifacts."""
    params = load_params()
    run = read_run_inputs(Path("."), params, read_csv_tolerant(labels_path),
                          title=f"Run report: {submission_path} vs {labels_path}")
    run.submission = read_csv_tolerant(submission_path)
    members, seeds = _members(params)
    tables = analysis.all_plot_tables(table, run.questions, members, seeds)
    return render_report(build_report_data(run, table, summary, tables), analysis.plot_pngs(tables))


def _run_stage() -> dict[str, Any]:
    params = load_params()
    questions = data_params(params).questions
    labels = read_csv_tolerant(questions, strict=True)
    if has_answers(labels):
        summary, table = _score(Path(questions), labels, SUBMISSION)
    else:
        summary = {"n": labels.height, "labelled": False}
        table = pl.DataFrame(schema=VERDICT_SCHEMA)
        print(f"score: {questions} has no gold answers; {SCORE_JSON} holds no score", file=sys.stderr)
    write_json(summary, SCORE_JSON)
    write_parquet(table, VERDICTS)
    _write_analysis(params, questions, labels, summary, table)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Entry point: with --labels/--submission score those files, else run the DVC stage."""
    parser = argparse.ArgumentParser(prog="python -m stages.score", description=__doc__)
    parser.add_argument("--labels", type=Path, help="questions CSV with gold answers")
    parser.add_argument("--submission", type=Path, help="submission CSV in the WattBot format")
    parser.add_argument("--report", type=Path, help="with --labels/--submission: also write this Markdown report")
    parser.add_argument("--html", type=Path, help="with --labels/--submission: also write the HTML run report, "
                        "with the contexts and member answers of the run in the current folder (artifacts/)")
    parser.add_argument("--contexts", type=Path, default=None,
                        help=f"with --report: retrieved contexts to show (e.g. {CONTEXTS})")
    args = parser.parse_args(argv)
    if (args.labels is None) != (args.submission is None):
        parser.error("give both --labels and --submission, or neither (DVC stage)")
    if args.labels is None and (args.report or args.contexts or args.html):
        parser.error("--report/--contexts/--html need --labels and --submission")
    try:
        if args.labels is None:
            summary = _run_stage()
        else:
            summary, table = _score(args.labels, _read_labels(args.labels), args.submission)
            if args.report:
                ctx = _read_contexts(args.contexts) if args.contexts else None
                write_text(analysis.build_report(summary, table, ctx, title=f"Score report: {args.submission}"),
                           args.report)
            if args.html:
                write_text(_html_report(args.labels, args.submission, summary, table), args.html)
    except ValueError as e:  # InputError and ParamError included
        print(f"score: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
