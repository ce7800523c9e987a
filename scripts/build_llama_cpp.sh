#!/usr/bin/env bash
# Build and install llama-cpp-python[server] (the tests' OpenAI-compatible server) for a portable
# CPU target, never for the build machine's own CPU.
# Why: a native build (llama.cpp's default, GGML_NATIVE=ON) compiles for every instruction set the
# CPU advertises. Some cloud VMs advertise AMX (amx_tile, amx_int8, amx_bf16) but trap its tile
# instructions, and a native wheel then dies with "Illegal instruction" at the first completion.
# The target here is x86-64-v3 (AVX2, FMA, F16C), with AVX-512 and AMX off; other architectures
# get llama.cpp's generic build. The flags go into the wheel's cache key, so a wheel built natively
# (pip's own wheel cache does not key on CMAKE_ARGS) is never reused.
# Usage: bash scripts/build_llama_cpp.sh PYTHON   (PYTHON: the environment's interpreter)
set -euo pipefail
python=${1:?usage: build_llama_cpp.sh PYTHON}
version=0.3.36
case "$(uname -m)" in
  x86_64 | amd64)
    flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    flags="$flags -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF"
    flags="$flags -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX_VNNI=OFF" ;;
  *) flags="-DGGML_NATIVE=OFF" ;;
esac
key=$(printf '%s %s %s' "$version" "$(uname -m)" "$flags" | sha256sum | cut -c1-16)
store=${XDG_CACHE_HOME:-$HOME/.cache}/logic-consistency/llama-cpp-python-$version-$key
marker=$("$python" -c 'import sys; print(sys.prefix)')/.llama-cpp-python-build
if [ "$(cat "$marker" 2>/dev/null)" = "$key" ]; then
  exit 0 # this environment already has the portable build
fi
wheel=$(ls "$store"/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $version for a portable CPU target (once; about 10 minutes on 2 cores)" >&2
  mkdir -p "$(dirname "$store")"
  tmp=$(mktemp -d "${store}.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # A build always ends: 60 minutes is six times the measured build on 2 cores.
  CMAKE_ARGS="$flags" FORCE_CMAKE=1 timeout --kill-after=30 3600 \
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-cache-dir \
    --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$version" || {
    echo "scripts/build_llama_cpp.sh: building llama-cpp-python $version failed (flags: $flags)" >&2
    exit 1
  }
  rm -rf "$store" && mv "$tmp" "$store" # the store appears whole or not at all
  trap - EXIT
  wheel=$(ls "$store"/llama_cpp_python-*.whl | head -n 1)
fi
# --force-reinstall of the wheel alone replaces a native build already installed at this version.
"$python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
"$python" -m pip install --quiet --disable-pip-version-check "${wheel}[server]"
echo "$key" >"$marker"
