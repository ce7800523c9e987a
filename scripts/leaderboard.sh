#!/usr/bin/env bash
# Set up, then build the leaderboard of the two embedded models (the default model list,
# leaderboard/run/models.yaml) and render its page: one nightly build at a small size (2 instances per
# task, 5 items per instance; a few minutes per model on 2 CPU cores), merged into
# results/leaderboard/leaderboard.json with a history snapshot per night, and the self-contained
# page results/leaderboard/index.html. Offline: set LOGIC_CONSISTENCY_DATA to a local copy of the
# datasets (see README). LIMIT, MAX_ITEMS and LEADERBOARD_DIR change the defaults; further
# arguments go to `logic-consistency leaderboard build` (e.g. --models my_models.yaml).
# Exit status: 0, or 1 if a model failed (the others are on the board, the failure is recorded);
# 2 bad input; 3 the board (or runs/, cache/) cannot be written, found before any model runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# The api extra: a model list may name judges behind an API.
bash scripts/setup.sh api
if [ -n "${LOGIC_CONSISTENCY_DATA:-}" ]; then
  export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
fi
out=${LEADERBOARD_DIR:-results/leaderboard}
status=0
.venv/bin/logic-consistency leaderboard build --out "$out" \
  --limit "${LIMIT:-2}" --metadata "{\"max_items\": ${MAX_ITEMS:-5}}" "$@" || status=$?
if [ -f "$out/leaderboard.json" ]; then
  .venv/bin/logic-consistency leaderboard validate "$out/leaderboard.json"
  echo "page: $(.venv/bin/logic-consistency leaderboard render "$out/leaderboard.json" --out "$out/index.html")"
fi
exit "$status"
