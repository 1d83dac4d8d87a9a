"""Run the regressions file and print OK / FAIL per row.

    python bench/regressions.py --tier fast                # the LLM-free rows (CI runs these): recall, fingerprint
    python bench/regressions.py --tier llm                 # the embedded 1.5B rows (on demand; ~1 h on 2 cores)
    python bench/regressions.py --tier llm --no-run        # judge the outputs as last written, run nothing
    python bench/regressions.py --tier archive             # removed variants: their recorded numbers at their rev
    python bench/regressions.py --only retrieval-dev       # some rows by id
    python bench/regressions.py --readme                   # README's results table from the last check

Rows live in bench/regressions.yaml (fast, llm) and bench/regressions_archive.yaml (archive); the schema
is in bench/lib/regressions.py. Each run writes bench/results/regressions/last_check.json (every row's
value and verdict), from which --readme writes the table between the README's `results:begin/end` marks.
Exit status 1 when a row fails or its output is missing.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.regressions import (  # noqa: E402
    TIERS,
    Row,
    Verdict,
    check_row,
    command_for,
    load_rows,
    results_table,
    verdict_line,
)

FILES = (ROOT / "bench" / "regressions.yaml", ROOT / "bench" / "regressions_archive.yaml")
LAST = ROOT / "bench" / "results" / "regressions" / "last_check.json"
README = ROOT / "README.md"
BEGIN, END = "<!-- results:begin (bench/regressions.py --readme) -->", "<!-- results:end -->"


def all_rows() -> list[Row]:
    rows = [r for f in FILES if f.exists() for r in load_rows(f)]
    ids = [r.id for r in rows]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SystemExit(f"regressions: ids used in both files: {', '.join(dup)}")
    return rows


def run_row(row: Row, out_dir: Path | None, artifacts: str) -> str:
    """Run the row's command from the repository root; '' when it succeeded, else its last output lines."""
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    cmd = command_for(row, ROOT, out_dir, artifacts)
    if cmd.startswith("python "):  # this interpreter (the venv's), whatever PATH says
        cmd = f"{sys.executable} {cmd[len('python '):]}"
    print(f"--- {row.id}: {cmd}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True, check=False)
    print(f"    {time.perf_counter() - t0:.0f} s, exit {proc.returncode}", flush=True)
    return "" if proc.returncode == 0 else "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])


def readme_table() -> list[str]:
    """README's results table from the last check (rows since deleted from the files are left out)."""
    rows = {r.id: r for r in all_rows()}
    last = json.loads(LAST.read_text(encoding="utf-8"))["rows"]
    return results_table([Verdict(rows[v["id"]], v["status"], v["value"], v["detail"])
                          for v in last if v["id"] in rows])


def write_readme() -> None:
    text = README.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"regressions: {README} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + "\n" + "\n".join(readme_table()) + "\n" + END + tail, encoding="utf-8")
    print(f"regressions: README results table written from {LAST.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/regressions.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tier", nargs="+", choices=TIERS, default=["fast", "llm"])
    ap.add_argument("--only", nargs="+", default=None, metavar="ID")
    ap.add_argument("--no-run", action="store_true", help="judge the outputs as last written")
    ap.add_argument("--out-dir", type=Path, default=None,
                    help="write (and read) outputs here instead of the paths the rows name (CI, tests)")
    ap.add_argument("--artifacts", default="artifacts", help="the built tree/ and index/ the fast rows read")
    ap.add_argument("--readme", action="store_true", help="only write README's results table from the last check")
    args = ap.parse_args(argv)
    if args.readme:
        write_readme()
        return 0
    rows = [r for r in all_rows() if r.tier in args.tier and (args.only is None or r.id in args.only)]
    if args.only:
        unknown = sorted(set(args.only) - {r.id for r in rows})
        if unknown:
            raise SystemExit(f"regressions: no row {', '.join(unknown)} in tiers {', '.join(args.tier)}")
    verdicts: list[Verdict] = []
    failures: dict[str, str] = {}  # command -> '' or its failure: rows sharing a command run it once
    for row in rows:
        # a row with a rev (an older version's number, kept to compare with) is run by hand there, never here
        if not args.no_run and row.tier != "archive" and not row.rev and row.command not in failures:
            failures[row.command] = run_row(row, args.out_dir, args.artifacts)
        failed = failures.get(row.command, "")
        v = check_row(row, ROOT, args.out_dir)
        if failed:  # an output left by an earlier run must not pass for this one
            v = Verdict(row, "FAIL", v.value, f"command failed: {failed}")
        verdicts.append(v)
        print(verdict_line(v), flush=True)
    bad = [v for v in verdicts if v.status != "OK"]
    print(f"regressions: {len(verdicts) - len(bad)} OK, {len(bad)} not OK of {len(verdicts)} rows")
    if args.out_dir is None and not args.only:
        LAST.parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(LAST.read_text(encoding="utf-8"))["rows"] if LAST.exists() else []
        fresh = {v.row.id for v in verdicts}
        merged = [o for o in old if o["id"] not in fresh] + [
            {"id": v.row.id, "tier": v.row.tier, "status": v.status, "value": v.value, "detail": v.detail}
            for v in verdicts]
        LAST.write_text(json.dumps({"rows": merged}, indent=1) + "\n", encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
