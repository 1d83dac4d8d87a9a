#!/usr/bin/env bash
# The ablation table of the shipped reader (v8: 700-token contexts, one member): each piece off in
# turn on dev 179 and train 41, paired against v8. Code-only pieces (restate, narrow pointers, T/F
# calibration, table records on the questions without a rewritten table) replay v8's cached replies;
# demonstrations off changes every prompt (a full LLM run, ~45 min on 2 cores, once), computed
# answers off asks the ~25 compute-worded questions again. Writes bench/results/answer_eval/ablation_v8.md
# and ablation_v8.json. bench/ablation.sh is the same table for v6 at 1,000 tokens and n=1/n=3.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
run() { name=$1; shift
  "$PY" bench/answer_eval.py run --name "$name" --sets dev --limit 179 --step 179 --n 1 "$@"
  "$PY" bench/answer_eval.py run --name "$name" --sets train --n 1 "$@"
}
run v8
run v8-notables -S answer.table_records=false
run v8-norestate -S answer.restate_numbers=false
run v8-nonarrow -S answer.narrow_pointers=false
run v8-notf -S answer.tf_logprobs=false
run v8-nocompute -S 'answer.compute_format=""'
run v8-nodemos -S 'answer.demos=[]'
"$PY" bench/answer_eval.py table --out ablation_v8 v8 v8-notables v8-norestate v8-nonarrow v8-notf v8-nocompute \
  v8-nodemos baseline
