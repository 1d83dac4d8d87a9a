"""The regressions file: what treerag scores, as rows a checker can run and hold.

Each row of ``bench/regressions.yaml`` (and of the read-only ``bench/regressions_archive.yaml``) says:
a condition in words, the command that measures it, the JSON file the command writes, a dotted path to
the metric in that file, the value expected and an absolute tolerance. Rows come in three tiers:

- ``fast``: no LLM (retrieval recall, the fake-model request fingerprint); CI runs them;
- ``llm``: the embedded 1.5B answers; run on demand (minutes to an hour on 2 cores);
- ``archive``: a variant that was measured and then removed from the product; its command ran at ``rev``
  (a git tag or commit) and its output is read from there (`git show rev:output`).

A fast or llm row with a ``rev`` is an older version's number kept beside the default's (v12 on the blind
set): its command runs in a checkout of ``rev``, by hand, and its output is committed here.

This module is the typed core (load, validate, read a metric, judge a value, render a table);
``bench/regressions.py`` is the command line.
"""
from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TIERS = ("fast", "llm", "archive")
_KEYS = {"id", "condition", "command", "output", "metric", "expected", "tolerance", "tier"}
_OPTIONAL = {"rev", "effect", "note", "table"}


class RegressionFileError(ValueError):
    """A row of a regressions file is malformed (the message names the file, the row and the key)."""


@dataclass(frozen=True)
class Row:
    id: str
    condition: str
    command: str
    output: str | None
    metric: str | None
    expected: float | str | None
    tolerance: float
    tier: str
    rev: str | None = None
    effect: str = ""
    note: str = ""
    table: dict[str, str] = field(default_factory=dict)  # README results table: {"row": ..., "column": ...}


@dataclass(frozen=True)
class Verdict:
    row: Row
    status: str  # OK | FAIL | MISSING (no output to read) | SKIPPED (tier not asked for)
    value: float | str | None
    detail: str = ""


def load_rows(path: Path) -> list[Row]:
    """The rows of one regressions file, validated: unknown or missing keys, a bad tier, a tolerance that is
    not a non-negative number, duplicate ids, or a non-archive row without output/metric/expected raise
    RegressionFileError naming the file and row."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise RegressionFileError(f"{path}: not valid YAML: {e}") from e
    raw = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise RegressionFileError(f"{path}: expected a list of rows (or a mapping with `rows:`)")
    rows, seen = [], set()
    for i, r in enumerate(raw):
        where = f"{path}: row {i + 1}" + (f" ({r.get('id')})" if isinstance(r, dict) and r.get("id") else "")
        if not isinstance(r, dict):
            raise RegressionFileError(f"{where}: expected a mapping, got {r!r}")
        missing, unknown = _KEYS - set(r), set(r) - _KEYS - _OPTIONAL
        if missing or unknown:
            raise RegressionFileError(f"{where}: " + "; ".join(
                p for p in (f"missing {', '.join(sorted(missing))}" if missing else "",
                            f"unknown {', '.join(sorted(unknown))}" if unknown else "") if p))
        if r["tier"] not in TIERS:
            raise RegressionFileError(f"{where}: tier {r['tier']!r} is not one of {', '.join(TIERS)}")
        tol = r["tolerance"]
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol < 0:
            raise RegressionFileError(f"{where}: tolerance must be a number >= 0, got {tol!r}")
        if r["tier"] != "archive" and (r["output"] is None or r["metric"] is None or r["expected"] is None):
            raise RegressionFileError(f"{where}: a {r['tier']} row needs output, metric and expected")
        if r["tier"] == "archive" and not r.get("rev"):
            raise RegressionFileError(f"{where}: an archive row needs rev (the revision its command ran at)")
        if r["id"] in seen:
            raise RegressionFileError(f"{where}: duplicate id {r['id']!r}")
        seen.add(r["id"])
        rows.append(Row(id=str(r["id"]), condition=str(r["condition"]), command=str(r["command"]),
                        output=r["output"], metric=r["metric"], expected=r["expected"], tolerance=float(tol),
                        tier=r["tier"], rev=r.get("rev"), effect=str(r.get("effect") or ""),
                        note=str(r.get("note") or ""), table=dict(r.get("table") or {})))
    return rows


def metric_value(data: Any, path: str) -> Any:
    """The value at a dotted path ("sets.dev.results.treerag.700.evidence_recall"; list items by index)."""
    cur = data
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise KeyError(f"{path}: no {part!r} there")
    return cur


def judge(row: Row, value: Any) -> Verdict:
    """OK when a number is within the row's tolerance of the expected one, or a string equals it."""
    if isinstance(row.expected, str) or isinstance(value, str):
        ok = str(value) == str(row.expected)
        return Verdict(row, "OK" if ok else "FAIL", value, "" if ok else f"expected {row.expected!r}")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(float(value)):
        return Verdict(row, "FAIL", value, f"not a number: {value!r}")
    diff = float(value) - float(row.expected)
    ok = abs(diff) <= row.tolerance + 1e-12
    return Verdict(row, "OK" if ok else "FAIL", float(value),
                   "" if ok else f"expected {row.expected} ± {row.tolerance} (off by {diff:+.4g})")


def read_output(row: Row, root: Path, out_dir: Path | None = None) -> Any:
    """The JSON a row's command wrote: at its rev for archive rows, else in out_dir (or the repository)."""
    if row.output is None:
        raise FileNotFoundError(f"{row.id}: no output recorded")
    if row.tier == "archive":
        text = subprocess.run(["git", "show", f"{row.rev}:{row.output}"], cwd=root, capture_output=True,
                              text=True, check=False)
        if text.returncode != 0:
            raise FileNotFoundError(f"{row.id}: {row.output} not at {row.rev}: {text.stderr.strip()}")
        return json.loads(text.stdout)
    path = output_path(row, root, out_dir)
    if not path.exists():
        raise FileNotFoundError(f"{row.id}: {path} not written yet (run the row)")
    return json.loads(path.read_text(encoding="utf-8"))


def output_path(row: Row, root: Path, out_dir: Path | None = None) -> Path:
    assert row.output is not None
    return (out_dir / Path(row.output).name) if out_dir is not None else root / row.output


def command_for(row: Row, root: Path, out_dir: Path | None, artifacts: str) -> str:
    """The row's command with {out} (its output path) and {artifacts} (where tree/ and index/ are) filled in."""
    out = output_path(row, root, out_dir) if row.output else ""
    return row.command.replace("{out}", str(out)).replace("{artifacts}", artifacts)


def check_row(row: Row, root: Path, out_dir: Path | None = None) -> Verdict:
    """Judge a row from its output as last written (no command run)."""
    if row.tier == "archive" and row.output is None:
        return Verdict(row, "OK", None, "recorded in words only (effect)")
    try:
        value = metric_value(read_output(row, root, out_dir), row.metric or "")
    except (FileNotFoundError, KeyError, json.JSONDecodeError) as e:
        return Verdict(row, "MISSING", None, str(e))
    return judge(row, value)


def verdict_line(v: Verdict) -> str:
    shown = "-" if v.value is None else (f"{v.value:.4f}" if isinstance(v.value, float) else str(v.value)[:16])
    return f"{v.status:<7} {v.row.tier:<7} {v.row.id:<38} {shown:>16}  {v.detail}".rstrip()


def results_table(verdicts: list[Verdict]) -> list[str]:
    """The README's results table: rows with a `table` entry, one line per table row, one column each."""
    cells: dict[str, dict[str, str]] = {}
    columns: list[str] = []
    for v in verdicts:
        t = v.row.table
        if not t or v.value is None:
            continue
        if t["column"] not in columns:
            columns.append(t["column"])
        shown = f"{v.value:.3f}" if isinstance(v.value, float) else str(v.value)
        cells.setdefault(t["row"], {})[t["column"]] = shown + ("" if v.status == "OK" else f" ({v.status})")
    lines = [f"| configuration | {' | '.join(columns)} |", f"|---|{'---|' * len(columns)}"]
    lines += [f"| {name} | {' | '.join(row.get(c, '–') for c in columns)} |" for name, row in cells.items()]
    return lines
