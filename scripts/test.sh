#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite. Tests that read the real datasets run
# when LOGIC_CONSISTENCY_DATA names a local copy (CI: ../shared/data/raw) and are skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
