#!/usr/bin/env bash
# The PyPI xllamacpp wheel (AVX2) against xllamacpp built from its PyPI source for this CPU
# (`LLM_BUILD=native scripts/setup.sh`), on the answer stage's real prompts (bench/llm_settings.py,
# llama.cpp's prompt cache off: every prompt evaluated in full). Rounds alternate wheel, native, so a
# machine that slows down mid-run hurts both. Run it alone on the machine: the numbers are wall-clock.
#
#   bench/native_build.sh [ROUNDS] [REQUESTS]     # default 2 rounds of 8 requests
#
# Builds the native wheel once into $NATIVE_DIR (default /tmp/treerag-native; ~12 min on 2 cores) and
# puts it first on PYTHONPATH for the native runs; the venv is not changed.
# Writes bench/results/llm_native_build.json (each run's llm_settings result, and the means).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
ROUNDS=${1:-2}
REQUESTS=${2:-8}
NATIVE_DIR=${NATIVE_DIR:-/tmp/treerag-native}
ver=$("$PY" -c 'import importlib.metadata as m; print(m.version("xllamacpp"))')
if [ ! -d "$NATIVE_DIR/xllamacpp" ]; then
  CMAKE_ARGS="${CMAKE_ARGS:-} -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_LLGUIDANCE=OFF" \
    "$PY" -m pip install -q --no-deps --no-binary xllamacpp --target "$NATIVE_DIR" "xllamacpp==$ver"
fi
OUT=$(mktemp -d /tmp/treerag-native-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
for r in $(seq "$ROUNDS"); do
  "$PY" bench/llm_settings.py --requests "$REQUESTS" --settings base --out "$OUT/wheel_$r.json"
  PYTHONPATH="$NATIVE_DIR" "$PY" bench/llm_settings.py --requests "$REQUESTS" --settings base --out "$OUT/native_$r.json"
done
"$PY" - "$OUT" "$NATIVE_DIR" <<'PYEOF'
import json, statistics, sys
from pathlib import Path
out, native_dir = Path(sys.argv[1]), sys.argv[2]
runs = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}
summary = {}
for build in ("wheel", "native"):
    res = [r["results"]["base"] for k, r in runs.items() if k.startswith(build)]
    summary[build] = {key: round(statistics.mean(x[key] for x in res), 2)
                      for key in ("wall_s_per_request", "prompt_tokens_per_s", "generated_tokens_per_s")}
summary["native_speedup_wall"] = round(summary["wheel"]["wall_s_per_request"] / summary["native"]["wall_s_per_request"], 3)
report = {"native_dir": native_dir, "summary": summary,
          "runs": {k: {**r["results"]["base"], "load_avg_1min_at_end": r["load_avg_1min_at_end"]} for k, r in runs.items()}}
Path("bench/results/llm_native_build.json").write_text(json.dumps(report, indent=1) + "\n")
print(json.dumps(summary, indent=1))
PYEOF
