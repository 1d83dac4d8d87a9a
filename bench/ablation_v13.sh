#!/usr/bin/env bash
# Issue 25's ablation (v13): tables the reader can read (tree.table_columns), arithmetic done by code
# (answer.compute_format: operation, the wider compute wording, rounded conversions) and trimmed units
# in a smaller budget (retrieve.trim_tokens: 150, max_context_tokens: 650), each on and off, n=1,
# on dev (186 scored, the 12 table questions d951-d962 included) and train 41, paired against v12.
#
#   bench/ablation_v13.sh            # contexts (~4 min each variant with a tree change), runs, table
#
# v13-base is v12's default as shipped at 7feec37, run from a worktree of that commit:
#   git worktree add /tmp/wt-base 7feec37 && ln -s "$PWD/artifacts" /tmp/wt-base/artifacts
#   cp data/wattbot/dev_QA.csv /tmp/wt-base/data/wattbot/    # the 12 new table questions
#   (cd /tmp/wt-base && python bench/answer_eval.py run --name v13-base --contexts dev=$C/flat-base/dev.parquet
#    train=$C/flat-base/train.parquet)  and its results copied to bench/results/answer_eval/v13-base/
# Every other run uses this checkout's code. Replies come from the response cache where a prompt was asked
# before, so only the first run of each new prompt pays (v13-all: every prompt; the others: the questions
# whose context or format differ).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
C=${CONTEXTS:-/tmp/ctx}
OLD=(-S tree.table_columns=flat)
TRIM=(-S retrieve.trim_tokens=150 -S retrieve.max_context_tokens=650)
NOTRIM=(-S retrieve.trim_tokens=0 -S retrieve.max_context_tokens=700)
ctx() { out=$1; shift; [ -f "$C/$out/train.parquet" ] || "$PY" bench/variant_contexts.py --out "$C/$out" "$@"; }
ctx flat-base "${OLD[@]}" "${NOTRIM[@]}"
ctx flat-trim "${OLD[@]}" "${TRIM[@]}"
ctx seg-base -S tree.table_columns=segment "${NOTRIM[@]}"
ctx seg-trim -S tree.table_columns=segment "${TRIM[@]}"
run() { name=$1; c=$2; shift 2
  "$PY" bench/answer_eval.py run --name "$name" --n 1 --contexts "dev=$C/$c/dev.parquet" "train=$C/$c/train.parquet" "$@"
}
OP=(-S answer.compute_format=operation -S answer.compute_decimals=2)
NOOP=(-S answer.compute_format=expression -S answer.compute_decimals=-1)
run v13-all seg-trim "${OP[@]}"                      # everything on
run v13-op flat-base "${OP[@]}"                      # arithmetic by code alone
run v13-tables seg-base "${NOOP[@]}"                 # tables alone
run v13-trim seg-trim "${NOOP[@]}"                   # all but arithmetic
run v13-all-notables flat-trim "${OP[@]}"            # all but tables
run v13-all-notrim seg-base "${OP[@]}"               # all but trimmed units
run v13-all-noround seg-trim -S answer.compute_format=operation -S answer.compute_decimals=-1  # replay: no rounding
run v13-wide flat-base -S answer.compute_format=expression -S answer.compute_decimals=-1  # v12 + wider compute wording
"$PY" bench/answer_eval.py table --out ablation_v13 v13-base v13-all v13-op v13-tables v13-trim v13-all-notables \
  v13-all-notrim v13-all-noround v13-wide
