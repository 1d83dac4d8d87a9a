"""How big is the product a newcomer must read? The numbers issue 44 tracks, for any checkout.

    python bench/code_shape.py              # this checkout
    python bench/code_shape.py --json       # as JSON

params.yaml keys and booleans; the largest files under stages/; functions taking more than 8
parameters; product comments (stages/) that name a labelled question id (d123, q045, h301, b012) or a
single corpus document (an author-year id of data/wattbot/metadata.csv); files tracked under
bench/results/; README lines. tests/test_code_shape.py holds the limits.
"""
from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import yaml

ROOT = Path.cwd()
QUESTION_ID = re.compile(r"\b[dqhb]\d{3}\b")


def leaves(d: object) -> list[object]:
    if isinstance(d, dict):
        return [x for v in d.values() for x in leaves(v)]
    return [d]


def doc_ids(root: Path) -> set[str]:
    meta = root / "data" / "wattbot" / "metadata.csv"
    if not meta.exists():
        return set()
    with meta.open(encoding="utf-8-sig", errors="replace", newline="") as f:
        return {r["id"].lower() for r in csv.DictReader(f)}


def comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each comment and docstring-free string comment token of a Python file."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def wide_functions(path: Path, limit: int = 8) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
            if len(names) > limit:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({len(names)})")
    return out


def shape(root: Path) -> dict[str, object]:
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    values = leaves(params)
    files = sorted(root.glob("stages/**/*.py"))
    sizes = sorted(((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(root))) for p in files),
                   reverse=True)
    docs = doc_ids(root)
    named_ids, named_docs = [], []
    for p in files:
        for line, text in comments(p):
            low = text.lower()
            if QUESTION_ID.search(low):
                named_ids.append(f"{p.relative_to(root)}:{line}")
            if any(re.search(rf"\b{re.escape(d)}\b", low) for d in docs):
                named_docs.append(f"{p.relative_to(root)}:{line}")
    tracked = subprocess.run(["git", "ls-files", "bench/results"], cwd=root, capture_output=True, text=True).stdout
    return {"params_keys": len(values), "params_booleans": sum(isinstance(v, bool) for v in values),
            "largest_files": [f"{p} ({n})" for n, p in sizes[:5]], "files_over_400": sum(n > 400 for n, _ in sizes),
            "functions_over_8_params": [f for p in files for f in wide_functions(p)],
            "comments_naming_question_ids": len(named_ids), "comments_naming_documents": len(named_docs),
            "comment_examples": (named_ids + named_docs)[:10],
            "tracked_under_bench_results": len(tracked.split()),
            "readme_lines": len((root / "README.md").read_text(encoding="utf-8").splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    s = shape(ROOT)
    if args.json:
        print(json.dumps(s, indent=1))
    else:
        for k, v in s.items():
            print(f"{k}: {len(v) if isinstance(v, list) and k == 'functions_over_8_params' else v}")
            if k == "functions_over_8_params":
                for f in v:  # type: ignore[union-attr]
                    print(f"    {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
