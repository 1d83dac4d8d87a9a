#!/usr/bin/env bash
# The typed reader's ablation table: every piece off in turn, at n=1 and n=3, on dev 179 and
# train 41, against the reader's defaults on v6's 1,000-token contexts (the budget before v7's 700,
# where every member of n=3 has its replies cached). Each piece that is code only (restate, narrow,
# T/F calibration, the grounded-first vote, compute routing) replays those replies from the response
# cache, so after one full run the whole table costs no LLM time. Writes
# bench/results/answer_eval/ablation.md and ablation.json.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# v6's reader as it was measured: demonstrations for every kind, tables as grids (v8/v9 changed both)
CTX=(-S retrieve.max_context_tokens=1000 -S 'answer.demo_kinds=[true_false,numeric,range,text]'
     -S answer.table_records=false)
run() { name=$1; shift; for n in 1 3; do
  suffix=$([ "$n" = 1 ] && echo "-n1" || echo "")
  "$PY" bench/answer_eval.py run --name "$name$suffix" --sets dev --limit 179 --step 179 --n "$n" "${CTX[@]}" "$@"
  "$PY" bench/answer_eval.py run --name "$name$suffix" --sets train --n "$n" "${CTX[@]}" "$@"
done; }
run v6
run v6-norestate -S answer.restate_numbers=false
run v6-nonarrow -S answer.narrow_pointers=false
run v6-notf -S answer.tf_logprobs=false
run v6-nocompute -S 'answer.compute_format=""'
"$PY" bench/answer_eval.py run --name v6-noprefer --sets dev --limit 179 --step 179 --n 3 "${CTX[@]}" \
  -S vote.prefer_grounded=false
"$PY" bench/answer_eval.py run --name v6-noprefer --sets train --n 3 "${CTX[@]}" -S vote.prefer_grounded=false
"$PY" bench/answer_eval.py table --out ablation v6 v6-norestate v6-nonarrow v6-notf v6-nocompute v6-noprefer \
  v6-n1 v6-norestate-n1 v6-nonarrow-n1 v6-notf-n1 v6-nocompute-n1 baseline
