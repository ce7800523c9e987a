"""Cost of PairS greedy against the authors' beam search, side by side in one run.

Runs ``logic_consistency_summeval_pairs`` (all 16 summaries of an article: 240 ordered pairs) with
lm-eval's ``dummy`` model (random log-likelihoods, so many judgements fall near 0.5, where the beam
branches) once per search, and prints per search, as means over the instances: comparisons per run
(the authors' ``api_call``), prompts per calibrated run (two per comparison), distinct prompts asked
of the model per instance (raw and calibrated sorts and all runs share one memo), merge rounds per
instance, and the batched model calls of the whole run (each round of every document is one call).
With the paper's 100 runs the shared memo soon holds every pair, so ``--runs 1`` shows the cost of
one sort.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_pairs.py --limit 5 --runs 1
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from typing import Any

SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("greedy", {}),
    ("beam 1, gap 0.1", {"pairs_method": "beam", "pairs_beam_size": 1}),
    ("beam 3, gap 0.1", {"pairs_method": "beam", "pairs_beam_size": 3}),
    ("beam 100, gap 0.1", {"pairs_method": "beam", "pairs_beam_size": 100}),
    ("beam 100, gap 0.2", {"pairs_method": "beam", "pairs_beam_size": 100, "pairs_prob_gap": 0.2}),
]
TASK = "logic_consistency_summeval_pairs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=5, help="SummEval articles (instances)")
    parser.add_argument("--runs", type=int, default=1, help="pairs_runs: sorts per instance")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    print(f"{TASK}, --limit {args.limit}, pairs_runs {args.runs}, lm-eval dummy model")
    print(
        "| search | comparisons / run | prompts / calibrated run | model calls / instance | rounds / instance "
        "| batched model calls | s |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, metadata in SEARCHES:
        start = time.perf_counter()
        out = simple_evaluate(
            model="dummy",
            tasks=[TASK],
            limit=args.limit,
            log_samples=True,
            task_manager=TaskManager(metadata={"pairs_runs": args.runs, **metadata}),
        )
        records = [sample["doc"]["pairs"] for sample in out["samples"][TASK]]
        raw = statistics.mean(statistics.mean(r["comparisons"]["raw"]) for r in records)
        calibrated = statistics.mean(2 * statistics.mean(r["comparisons"]["calibrated"]) for r in records)
        calls = statistics.mean(r["model_calls"] for r in records)
        rounds = statistics.mean(r["rounds"] for r in records)
        print(
            f"| {name} | {raw:.1f} | {calibrated:.1f} | {calls:.1f} | {rounds:.1f} | {max(r['rounds'] for r in records)} "
            f"| {time.perf_counter() - start:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
