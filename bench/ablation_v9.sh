#!/usr/bin/env bash
# The ablation table of the shipped reader (v9: 700-token contexts, one member, demonstrations for
# True/False, range and name questions only): each piece off in turn on dev 179 and train 41, paired
# against v9. Code-only pieces (restate, narrow pointers, T/F calibration) replay v9's cached replies;
# the others ask again only where the prompt changes (table records: the questions with a rewritten
# table; computed answers: the ~25 compute-worded questions; demonstrations: every prompt, ~45 min on
# 2 cores once). Writes bench/results/answer_eval/ablation_v9.md and .json. bench/ablation.sh is the
# same table for v6 (1,000 tokens, n=1 and n=3).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# v9's contexts: retrieved from the tree before v10's table captions (the committed contexts of these
# params are v10's now), so this table replays as it was measured
CTX=bench/results/answer_eval/contexts
run() { name=$1; shift
  "$PY" bench/answer_eval.py run --name "$name" --sets dev --limit 179 --step 179 --n 1 \
    --contexts dev=$CTX/dev-5510b6d66e1c-v9.parquet "$@"
  "$PY" bench/answer_eval.py run --name "$name" --sets train --n 1 --contexts train=$CTX/train-120c24b426e3-v9.parquet "$@"
}
run v9
run v9-notables -S answer.table_records=false
run v9-norestate -S answer.restate_numbers=false
run v9-nonarrow -S answer.narrow_pointers=false
run v9-notf -S answer.tf_logprobs=false
run v9-nocompute -S 'answer.compute_format=""'
run v9-demos-all -S 'answer.demo_kinds=[true_false,numeric,range,text]'
run v9-nodemos -S 'answer.demos=[]'
"$PY" bench/answer_eval.py table --out ablation_v9 v9 v9-notables v9-norestate v9-nonarrow v9-notf v9-nocompute \
  v9-demos-all v9-nodemos baseline
