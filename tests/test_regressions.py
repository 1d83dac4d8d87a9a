"""The regressions file and its checker (bench/regressions.yaml, bench/lib/regressions.py, bench/regressions.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.lib.regressions import (
    RegressionFileError,
    Row,
    check_row,
    judge,
    load_rows,
    metric_value,
    results_table,
)

ROOT = Path(__file__).resolve().parents[1]
ROW = dict(id="r", condition="c", command="echo", output="o.json", metric="a.b", expected=0.5, tolerance=0.01,
           tier="fast")


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    import yaml

    p = tmp_path / "reg.yaml"
    p.write_text(yaml.safe_dump({"rows": rows}))
    return p


def test_the_committed_files_load_with_unique_ids() -> None:
    rows = load_rows(ROOT / "bench" / "regressions.yaml") + load_rows(ROOT / "bench" / "regressions_archive.yaml")
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    assert {r.tier for r in rows} == {"fast", "llm", "archive"}


@pytest.mark.parametrize("change, message", [
    ({"tier": "slow"}, "tier 'slow' is not one of"),
    ({"tolerance": -1}, "tolerance must be a number >= 0"),
    ({"expected": None}, "needs output, metric and expected"),
    ({"colour": "red"}, "unknown colour"),
])
def test_a_malformed_row_names_the_file_row_and_key(tmp_path: Path, change: dict, message: str) -> None:
    p = _write(tmp_path, [{**ROW, **change}])
    with pytest.raises(RegressionFileError, match=message) as e:
        load_rows(p)
    assert "row 1 (r)" in str(e.value) and str(p) in str(e.value)


def test_missing_keys_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RegressionFileError, match="missing metric"):
        load_rows(_write(tmp_path, [{k: v for k, v in ROW.items() if k != "metric"}]))
    with pytest.raises(RegressionFileError, match="duplicate id 'r'"):
        load_rows(_write(tmp_path, [ROW, ROW]))
    with pytest.raises(RegressionFileError, match="needs rev"):
        load_rows(_write(tmp_path, [{**ROW, "tier": "archive"}]))


def test_metric_paths_read_dicts_lists_and_numeric_keys() -> None:
    data = {"sets": {"dev": {"results": {"700": {"recall": 0.95}}}}, "m": [0.1, 0.2]}
    assert metric_value(data, "sets.dev.results.700.recall") == 0.95
    assert metric_value(data, "m.1") == 0.2
    with pytest.raises(KeyError, match="no 'train'"):
        metric_value(data, "sets.train.results")


def test_judge_holds_the_tolerance_and_strings_exactly() -> None:
    row = Row(**{**ROW, "expected": 0.5, "tolerance": 0.01})
    assert judge(row, 0.509).status == "OK"
    v = judge(row, 0.52)
    assert v.status == "FAIL" and "off by +0.02" in v.detail
    sha = Row(**{**ROW, "expected": "abc", "tolerance": 0.0})
    assert judge(sha, "abc").status == "OK" and judge(sha, "abd").status == "FAIL"
    assert judge(row, None).status == "FAIL"


def test_check_reads_the_output_and_reports_what_is_missing(tmp_path: Path) -> None:
    row = Row(**ROW)
    assert check_row(row, tmp_path).status == "MISSING"
    (tmp_path / "o.json").write_text(json.dumps({"a": {"b": 0.505}}))
    assert check_row(row, tmp_path).status == "OK"
    (tmp_path / "o.json").write_text(json.dumps({"a": {"b": 0.6}}))
    assert check_row(row, tmp_path).status == "FAIL"


def test_results_table_has_one_line_per_configuration() -> None:
    a = Row(**{**ROW, "id": "a", "table": {"row": "default", "column": "dev"}})
    b = Row(**{**ROW, "id": "b", "table": {"row": "default", "column": "blind"}})
    c = Row(**{**ROW, "id": "c", "table": {"row": "v12", "column": "dev"}})
    lines = results_table([judge(a, 0.8), judge(b, 0.7), judge(c, 0.5)])
    assert lines[0] == "| configuration | dev | blind |"
    assert lines[2] == "| default | 0.800 (FAIL) | 0.700 (FAIL) |"
    assert lines[3] == "| v12 | 0.500 | – |"  # within tolerance of 0.5: no mark


def test_the_readme_table_is_the_one_the_last_check_gives() -> None:
    """README's results numbers come from bench/results/regressions/last_check.json, not from a hand."""
    from bench.regressions import BEGIN, END, readme_table  # noqa: PLC0415

    readme = (ROOT / "README.md").read_text()
    block = readme.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert block == "\n".join(readme_table())


def test_the_archive_rows_hold_at_their_revisions() -> None:
    """Each removed variant's recorded number is what its output file said at the revision it ran at."""
    if subprocess.run(["git", "rev-parse", "--verify", "-q", "v33^{commit}"], cwd=ROOT,
                      capture_output=True).returncode != 0:
        pytest.skip("the v33 tag is not in this clone (a shallow clone): archive rows cannot be read")
    rows = load_rows(ROOT / "bench" / "regressions_archive.yaml")
    bad = [(r.id, v.status, v.detail) for r in rows if (v := check_row(r, ROOT)).status != "OK"]
    assert bad == []


@pytest.mark.skipif(not os.environ.get("CI") and not os.environ.get("TREERAG_FAST_REGRESSIONS"),
                    reason="builds the WattBot index (~5 min): CI, or TREERAG_FAST_REGRESSIONS=1")
def test_the_fast_rows_hold(tmp_path: Path) -> None:
    """CI: the LLM-free rows on an index built from scratch here (WattBot and corpus2)."""
    from tests.wattbot_project import build_index_project  # noqa: PLC0415

    wattbot = build_index_project(tmp_path, "wattbot")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "regressions.py"), "--tier", "fast",
                           "--out-dir", str(tmp_path / "out"), "--artifacts", str(wattbot / "artifacts")],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "TREERAG_CACHE_DIR":
                                                                         str(tmp_path / "cache")})
    print(proc.stdout[-6000:], proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "FAIL" not in proc.stdout and "MISSING" not in proc.stdout
