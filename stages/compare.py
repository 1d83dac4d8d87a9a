"""Compare two configurations: ``python -m stages.compare EXP_A EXP_B``.

Each side is a submission CSV, ``workspace``, a DVC experiment name (``dvc exp show``)
or a git revision; ``a,b,c`` makes a side of several runs (e.g. one experiment per
seed). Prints B − A with a paired bootstrap CI over questions, Welch's t-test when
several runs (or recorded ensemble members) exist, and the questions that flipped.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from stages.core.common.cli import run
from stages.core.common.dataio import InputError, has_answers, read_csv_tolerant
from stages.core.common.params import load_params
from stages.core.tools.compare import (
    MEMBERS_PATH,
    SUBMISSION_PATH,
    compare,
    comparison_json,
    format_comparison,
    load_side,
)
from stages.core.tools.compare_html import compare_page


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m stages.compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="EXP_A", help="baseline: CSV path, workspace, experiment name or git rev (a,b,..)")
    parser.add_argument("b", metavar="EXP_B", help="candidate, same forms")
    parser.add_argument("--labels", type=Path, help="questions with gold answers (default: params data.questions)")
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository holding the experiments")
    parser.add_argument("--path", default=SUBMISSION_PATH, help="submission path inside a revision")
    parser.add_argument("--members-path", default=MEMBERS_PATH, help="member scores path inside a revision")
    parser.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (fixed: reruns print the same CI)")
    parser.add_argument("--ci", type=float, default=0.95, help="confidence level")
    parser.add_argument("--max-flips", type=int, default=None, help="list at most this many changed questions")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--html", type=Path, default=None,
                        help="also write the flipped questions side by side (both contexts and answers) to this page")
    args = parser.parse_args()
    labels_path = args.labels or (load_params(args.repo / "params.yaml").get("data") or {}).get("questions")
    if not labels_path:
        raise InputError("no labels: pass --labels or set data.questions in params.yaml")
    labels_path = Path(labels_path) if args.labels else args.repo / labels_path
    labels = read_csv_tolerant(labels_path)
    if not has_answers(labels):
        raise InputError(f"{labels_path}: no gold answers to compare against (pass --labels)")
    try:
        a = load_side(args.a, args.repo, args.path, args.members_path)
        b = load_side(args.b, args.repo, args.path, args.members_path)
        result = compare(labels, a, b, label_a=args.a, label_b=args.b, n_boot=args.n_boot, seed=args.seed,
                         ci=args.ci)
    except InputError:
        raise
    except ValueError as e:  # a malformed submission (missing column, duplicate ids)
        raise InputError(str(e)) from e
    if args.html:
        args.html.write_text(compare_page(result, labels, args.a, args.b, args.repo), encoding="utf-8")
        print(f"compare: wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(comparison_json(result), indent=2, default=str))
    else:
        print(format_comparison(result, args.max_flips))


if __name__ == "__main__":
    run(main, "compare")
