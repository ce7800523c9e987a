#!/usr/bin/env bash
# Install the built wheel (not editable) into a fresh environment and run a smoke set from outside
# the source tree, so a wheel that forgets package data (task YAML, _options_yaml, the page's or the
# schema's files) fails here rather than in a user's first run; the tests run from the source tree
# and cannot see that. Steps: python -m build (the sdist, then the wheel built from it), a fresh
# venv with the wheel and its dependencies (from pip's cache after the first time), then, from an
# empty folder: `lm_eval ls tasks` lists every task of the source tree's index, one task runs on
# lm-eval's dummy model, its results go on a board that `leaderboard render` draws, and
# `check-task` validates a YAML from `tasks-dir`.
# Usage: bash scripts/wheel_smoke.sh [--drop PATH_IN_WHEEL]: --drop deletes that file from the
# wheel first (to see the smoke set fail, e.g. --drop logic_consistency/tasks/pairwise/_options_yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${PYTHON:-python3}
drop=""
if [ "${1:-}" = --drop ]; then drop=${2:?--drop needs a path inside the wheel}; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/lc-wheel-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
pip=(--quiet --disable-pip-version-check)
start=$SECONDS

# 1. sdist + wheel, with the build frontend in its own small environment
"$python" -m venv "$work/build-env"
"$work/build-env/bin/python" -m pip install "${pip[@]}" build
"$work/build-env/bin/python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
wheel=$(ls "$work"/dist/*.whl)
ls "$work"/dist/*.tar.gz >/dev/null
if [ -n "$drop" ]; then
  "$work/build-env/bin/python" - "$wheel" "$drop" <<'PY'
import sys, zipfile
wheel, drop = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as source:
    entries = [(info, source.read(info)) for info in source.infolist()]
if drop not in {info.filename for info, _ in entries}:
    sys.exit(f"wheel_smoke: {drop} is not in {wheel}")
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as target:
    for info, data in entries:
        if info.filename != drop:
            target.writestr(info, data)
print(f"wheel_smoke: dropped {drop} from the wheel", file=sys.stderr)
PY
fi
built=$SECONDS

# 2. a fresh environment holding the wheel (not editable). Its dependencies: by default those of
# ./.venv (scripts/setup.sh made it; the same pins), seen through a .pth line placed after the new
# environment's own site-packages. A directory named in a .pth is only added to sys.path: its own
# .pth files (the editable install's finder, the autoload hook) are not run, so the suite and its
# hook come from the wheel alone. WHEEL_SMOKE_FRESH_DEPS=1 installs every dependency afresh
# instead (from pip's cache after the first time; several minutes on 2 cores).
"$python" -m venv "$work/env"
env_python="$work/env/bin/python"
if [ "${WHEEL_SMOKE_FRESH_DEPS:-0}" = 1 ] || [ ! -x .venv/bin/python ]; then
  "$env_python" -m pip install "${pip[@]}" torch==2.13.0  # pinned first: an unpinned one pulls CUDA
  "$env_python" -m pip install "${pip[@]}" "$wheel"
else
  deps=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  site=$("$env_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$deps" >"$site/zz_wheel_smoke_dependencies.pth"
  "$env_python" -m pip install "${pip[@]}" --no-deps "$wheel"
  # lm-eval's console script, as pip writes it. Not `python -m lm_eval`: the autoload hook wraps
  # the loader of lm_eval.__main__ in one without get_code, which runpy needs.
  printf '#!%s\nimport sys\nfrom lm_eval.__main__ import cli_evaluate\nsys.exit(cli_evaluate())\n' "$env_python" \
    >"$work/env/bin/lm_eval"
  chmod +x "$work/env/bin/lm_eval"
fi
installed=$SECONDS

# 3. the smoke set, from an empty folder, on the source tree's fixture data (data only)
mkdir "$work/outside" && cd "$work/outside"
export LOGIC_CONSISTENCY_DATA="$root/tests/fixtures/data" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
unset PYTHONPATH
"$env_python" - <<'PY'
import logic_consistency, sys
from pathlib import Path
where = Path(logic_consistency.__file__).resolve()
if not where.is_relative_to(Path(sys.prefix).resolve()):
    sys.exit(f"wheel_smoke: logic_consistency imported from {where}, not from the fresh environment")
PY
"$work/env/bin/logic-consistency" --version
# every task of the source tree's index is listed by the installed suite
source_tasks() { "$root/.venv/bin/python" -c "
from lm_eval.tasks import TaskManager
print('\n'.join(sorted(TaskManager(include_path='$root/tasks', include_defaults=False).all_tasks)))"; }
(cd "$root" && LOGIC_CONSISTENCY_AUTOLOAD=0 source_tasks) >"$work/expected.txt"
"$work/env/bin/lm_eval" ls tasks >"$work/listed.txt" 2>"$work/ls.log" || { tail -20 "$work/ls.log" >&2; exit 1; }
grep -o 'logic_consistency[a-z0-9_]*' "$work/listed.txt" | sort -u >"$work/found.txt"
if ! missing=$(comm -23 "$work/expected.txt" "$work/found.txt") || [ -n "$missing" ]; then
  echo "wheel_smoke: lm_eval ls tasks misses: $missing" >&2
  exit 1
fi
echo "lm_eval ls tasks: all $(wc -l <"$work/expected.txt") tasks and groups of the suite"
"$work/env/bin/lm_eval" --model dummy --tasks logic_consistency_summeval --limit 1 \
  --metadata '{"max_items": 5}' --output_path results --log_samples >"$work/run.log" 2>&1 \
  || { tail -30 "$work/run.log" >&2; exit 1; }
"$work/env/bin/logic-consistency" leaderboard ingest results --out board --no-progress
"$work/env/bin/logic-consistency" leaderboard render board/leaderboard.json --out board/index.html
grep -q logic_consistency_summeval board/index.html
tasks_dir=$("$work/env/bin/logic-consistency" tasks-dir)
case "$tasks_dir" in "$work/env"/*) ;; *) echo "wheel_smoke: tasks-dir is $tasks_dir" >&2; exit 1 ;; esac
"$work/env/bin/logic-consistency" check-task "$tasks_dir/pairwise/summeval/summeval.yaml"
echo "wheel smoke passed: build $((built - start)) s, install $((installed - built)) s, smoke $((SECONDS - installed)) s"
