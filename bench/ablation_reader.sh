#!/usr/bin/env bash
# The ablation table of the shipped reader: each piece off in turn on dev and train at 700 tokens and
# one member, paired against the shipped configuration. Code-only pieces (restate, narrow pointers,
# T/F calibration) replay its cached replies; the others ask again only where the prompt changes
# (table records: the questions with a rewritten table; computed answers: the ~25 compute-worded
# questions; demonstrations: every prompt, ~45 min on 2 cores once). bench/ablation.sh is the same
# table for v6 (1,000 tokens, n=1 and n=3).
#
#   bench/ablation_reader.sh        # v10 (today's tree and contexts, units as retrieved) -> ablation_v10.md
#   bench/ablation_reader.sh v9     # v9, on the contexts retrieved before v10's table captions -> ablation_v9.md
#   bench/ablation_reader.sh v11    # v11, the default: v10 reading the units in reverse order -> ablation_v11.md
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
V=${1:-v10}
CTX=bench/results/answer_eval/contexts
# v9 and v10 read the units as retrieved (ensemble.views: [as_is]); v11 in reverse order, the default
AS_IS=(-S 'ensemble.views=[as_is]')
case "$V" in
  v11) DEV=(); TRAIN=(); AS_IS=() ;;
  v10) DEV=(); TRAIN=() ;;
  # v9's contexts: the committed contexts of these params are v10's now
  v9) DEV=(--contexts "dev=$CTX/dev-5510b6d66e1c-v9.parquet"); TRAIN=(--contexts "train=$CTX/train-120c24b426e3-v9.parquet") ;;
  *) echo "ablation_reader.sh: unknown version '$V' (v11 | v10 | v9)" >&2; exit 2 ;;
esac
run() { name=$1; shift
  "$PY" bench/answer_eval.py run --name "$name" --sets dev --limit 179 --step 179 --n 1 "${DEV[@]}" "${AS_IS[@]}" "$@"
  "$PY" bench/answer_eval.py run --name "$name" --sets train --n 1 "${TRAIN[@]}" "${AS_IS[@]}" "$@"
}
run "$V"
run "$V-notables" -S answer.table_records=false
run "$V-norestate" -S answer.restate_numbers=false
run "$V-nonarrow" -S answer.narrow_pointers=false
run "$V-notf" -S answer.tf_logprobs=false
run "$V-nocompute" -S 'answer.compute_format=""'
run "$V-demos-all" -S 'answer.demo_kinds=[true_false,numeric,range,text]'
run "$V-nodemos" -S 'answer.demos=[]'
"$PY" bench/answer_eval.py table --out "ablation_$V" "$V" "$V-notables" "$V-norestate" "$V-nonarrow" "$V-notf" \
  "$V-nocompute" "$V-demos-all" "$V-nodemos" baseline
