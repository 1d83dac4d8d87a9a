#!/usr/bin/env bash
# Seconds and evaluated prompt tokens per question of an answering configuration from an EMPTY
# LLM response cache (llama.cpp's own prompt cache starts empty too: a fresh embedded server),
# so that two configurations compare on what a first run on unseen questions pays. The models,
# embeddings and ONNX export are shared with the normal cache (linked), only llm/ is new.
# Run it alone on the machine: the numbers are wall-clock.
#
#   bench/cold_cost.sh NAME [answer_eval run options...]
#   bench/cold_cost.sh cold-v13-base --sets train
#   bench/cold_cost.sh cold-n3 --sets train --n 3
#
# Writes bench/results/answer_eval/NAME/<set>/summary.json: cost.llm_s_per_question,
# cost.prompt_evaluated_per_question, cost.wall_s_this_run (and the scores, which must equal the
# warm run of the same configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
NAME=${1:?usage: bench/cold_cost.sh NAME [answer_eval run options...]}
shift
BASE=${TREERAG_CACHE_DIR:-$HOME/.cache/treerag}
COLD=$(mktemp -d /tmp/treerag-cold.XXXXXX)
trap 'rm -rf "$COLD"' EXIT
for d in models embeddings onnx; do
  [ -e "$BASE/$d" ] && ln -s "$BASE/$d" "$COLD/$d"
done
TREERAG_CACHE_DIR=$COLD "$PY" bench/answer_eval.py run --name "$NAME" "$@"
