"""Two runs side by side in a browser: ``python -m stages.compare A B --html compare.html``.

Each side's artifacts (submission, contexts of every attempt, member answers, tree section
titles, params) are read from a project folder, ``workspace``, or a DVC experiment / git
revision (copied out with ``dvc.api`` into a temporary folder: git-tracked files and DVC outs
from the cache), turned into the run report's per-question data
(`score.report_data.build_report_data`), and every question that flipped is shown with both
contexts and both sets of member answers, using the run report's Jinja2 macros.
A side that is a bare submission CSV has answers but no contexts.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from stages.core.common.dataio import InputError, read_csv_tolerant
from stages.core.score.report_data import (
    ANSWERS,
    CONTEXTS,
    NODES,
    RETRY_CONTEXTS,
    SUBMISSION,
    RunInputs,
    build_report_data,
    read_run_inputs,
)
from stages.core.score.report_html import environment
from stages.core.score.verdicts import score_submission
from stages.core.tools.compare import Comparison, resolve_rev


def _materialise(spec: str, repo: Path, dest: Path) -> Path:
    """The files a report reads, at revision `spec`, copied under `dest` (missing ones left out)."""
    import dvc.api
    from dvc.exceptions import DvcException, PathMissingError

    rev = resolve_rev(spec, repo)

    def get(path: str) -> bool:
        try:
            with dvc.api.open(path, repo=str(repo), rev=rev, mode="rb") as f:
                data = f.read()
        except (PathMissingError, FileNotFoundError):
            return False
        except DvcException as e:
            raise InputError(f"{path} at {rev}: {e}") from e
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(data)
        return True

    if not get("params.yaml"):
        raise InputError(f"{spec}: no params.yaml at {rev}")
    params = yaml.safe_load((dest / "params.yaml").read_text()) or {}
    n = int((params.get("ensemble") or {}).get("n", 1))
    for path in (SUBMISSION, CONTEXTS, RETRY_CONTEXTS, NODES, *(f"{ANSWERS}/run_{i}.parquet" for i in range(n))):
        get(path)
    demo = (params.get("answer") or {}).get("demo_file")
    if demo:
        get(demo)
    return dest


def side_inputs(spec: str, repo: Path, questions: pl.DataFrame, tmp: Path) -> RunInputs:
    """One side's run: a project folder, `workspace`, a submission CSV or an experiment / revision."""
    p = Path(spec)
    if p.is_file():
        return RunInputs(questions, read_csv_tolerant(p), None, title=spec)
    root = repo if spec == "workspace" else p if p.is_dir() else _materialise(spec, repo, tmp / "side")
    params = yaml.safe_load((root / "params.yaml").read_text()) if (root / "params.yaml").exists() else {}
    return read_run_inputs(root, params or {}, questions, spec)


def compare_page(comparison: Comparison, labels: pl.DataFrame, a_spec: str, b_spec: str,
                 repo: Path = Path("."), n_boot: int = 2000) -> str:
    """The side-by-side page of the questions that flipped between A's and B's first runs."""
    with tempfile.TemporaryDirectory() as tmp:
        sides = []
        for k, spec in enumerate((a_spec.split(",")[0], b_spec.split(",")[0])):
            run = side_inputs(spec, repo, labels, Path(tmp) / str(k))
            summary, table = score_submission(labels, run.submission) if run.submission is not None else (None, None)
            sides.append(build_report_data(run, table, summary, n_boot=n_boot))
    by_id = [{q["id"]: q for q in s["questions"]} for s in sides]
    flipped: list[dict[str, Any]] = []
    for r in comparison.flipped.iter_rows(named=True):
        flipped.append({"id": r["id"], "change": r["change"], "delta": r["delta"], "a": by_id[0].get(r["id"]),
                        "b": by_id[1].get(r["id"])})
    bt = comparison.bootstrap
    return environment().get_template("compare.html").render(
        a=sides[0], b=sides[1], a_label=a_spec, b_label=b_spec, flipped=flipped,
        boot={"delta": bt.delta, "low": bt.low, "high": bt.high, "p": bt.p_not_better, "ci": bt.ci}, n=comparison.n)
