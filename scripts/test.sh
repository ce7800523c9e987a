#!/usr/bin/env bash
# Set up (scripts/setup.sh with the test extra: the test tools, the api extra and llama.cpp's
# server) and run the whole test suite. Tests that read the real datasets run when
# LOGIC_CONSISTENCY_DATA names a local copy (CI: ../shared/data/raw) and are skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# The leaderboard page is tested in a real headless browser (tests/leaderboard/test_render.py):
# install Debian's chromium when it is missing and this user may (elsewhere that test is skipped).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
    || echo "chromium could not be installed; the browser test will be skipped" >&2
fi
# Lint (ruff, configured in pyproject.toml: rules incl. import order) and format check, and type
# check (mypy) of the whole repository, strict on metrics/ and harness_ext/, then the tests. The
# root folder is the package logic_consistency: mypy reads it through a link.
.venv/bin/python -m ruff check .
.venv/bin/python -m ruff format --check .
mkdir -p .typecheck && ln -sfn .. .typecheck/logic_consistency
.venv/bin/python -m mypy --python-executable .venv/bin/python .typecheck/logic_consistency
.venv/bin/python -m mypy --strict --python-executable .venv/bin/python \
  .typecheck/logic_consistency/metrics .typecheck/logic_consistency/harness_ext
# Shells that set PYTHONDONTWRITEBYTECODE (this project's build machines do) make every process compile
# every module it imports from source: about 4.7 CPU-s of each lm_eval start. The test run lets Python
# write its bytecode caches (into .venv and the tree's __pycache__, both ignored by git), so a module is
# compiled once per run, not once per process.
unset PYTHONDONTWRITEBYTECODE
# With more than one worker, every worker and every model run a test starts gets one OpenMP (torch)
# thread unless OMP_NUM_THREADS says otherwise: two workers' models at two threads each put four
# spinning OpenMP teams on two cores, and a small model's many small operations then wait out a
# scheduler slice at every barrier (docs/benchmarks.md, "Test suite time").
if [ "${LC_TEST_WORKERS:-2}" -gt 1 ]; then
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fi
# Two tiers, one command each (CONTRIBUTING.md, "Tests"): this script alone runs everything (CI); with
# `-m "not slow"` it is the fast tier. Both run on LC_TEST_WORKERS pytest-xdist workers (default 2, the
# cores of the machines the suite is built on; 0 runs in this process); --dist loadfile runs each
# module on one worker, so a module-scoped fixture (a study, a cluster, a server) is built once. Not
# loadgroup: pytest-xdist 3.8 marks a group by rewriting a node id that pytest 9 no longer reads.
# The 30 slowest tests are listed.
pytest=(-m pytest -n "${LC_TEST_WORKERS:-2}" --dist loadfile --durations=30)
if [ "${COVERAGE:-0}" != 1 ]; then
  exec .venv/bin/python "${pytest[@]}" "$@"
fi
# COVERAGE=1 (CI): line coverage of the package, child processes included (pyproject.toml's
# [tool.coverage.*]); the data file is absolute, since children run in other folders.
export COVERAGE_FILE="$PWD/.coverage"
rm -f .coverage .coverage.*
status=0
.venv/bin/python -m coverage run "${pytest[@]}" "$@" || status=$?
.venv/bin/python -m coverage combine --quiet
echo "line coverage of the package: $(.venv/bin/python -m coverage report --format=total)%"
exit "$status"
