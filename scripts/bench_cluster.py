"""Benchmark: the nightly build one model after another against a Ray executor, and a GPU projection.

1. Builds the board of the shipped model list at ``--limit LIMIT`` (environment, default 2) and
   ``max_items`` ``MAX_ITEMS`` (default 5), as ``scripts/leaderboard.sh`` does, twice,
   each in a fresh folder (no answer from a cache): the local executor, then the Ray executor on a
   local Ray started here with ``--workers`` CPUs (default 2). Prints both wall times and the ratio.
2. Projects the GPUs a board of ``--judges`` models at paper scale needs to finish in ``--hours``:
   ``judges * tokens per model / (rate * 3600 * hours)``, at the published rates of
   :data:`PUBLISHED_RATES` or at ``--gpu-tokens-per-second`` (a rate you measured for your judge).
   ``--tokens-per-model`` defaults to 106 M prompt tokens plus about 77 M for later stages
   (``logic-consistency plan --tasks logic_consistency``, full data, SmolLM2 tokenizer).

    LOGIC_CONSISTENCY_DATA=../shared/data/raw LIMIT=2 .venv/bin/python scripts/bench_cluster.py
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

#: Prompt tokens of one model's full suite: 106 M (first stages) + about 77 M (later stages), from ``plan``.
PAPER_SCALE_TOKENS = 183_000_000

#: Prompt tokens per second per GPU, from NVIDIA's published TensorRT-LLM throughput table
#: (docs/source/performance/perf-overview.md, "Total Output Throughput", input/output lengths
#: 2048/128, FP8 weights, H100 SXM 80GB): output tokens/s x 2048/128 prompt tokens per output token,
#: divided by the GPUs of the row. The suite's prompts are long and its answers one to a few tokens,
#: so these rates (which also spend time generating 128 tokens a request) are on the safe side;
#: vLLM's throughput on the same GPU is usually lower than TensorRT-LLM's.
PUBLISHED_RATES = {
    "8B judge (Llama 3.1 8B, FP8, 1 H100: 3,450 output tok/s)": 3_450 * 2048 / 128,
    "70B judge (Llama 3.3 70B, FP8, 2 H100 TP2: 762 output tok/s)": 762 * 2048 / 128 / 2,
}


def timed_build(out: Path, limit: str, max_items: str, executor: Any = None) -> float:
    """Seconds of one build of the shipped model list into ``out`` (a failed model stops the benchmark)."""
    from logic_consistency.leaderboard.run.nightly import build

    overrides = {"limit": float(limit), "metadata": {"max_items": int(max_items)}}
    started = time.monotonic()
    result = build(out, overrides=overrides, progress=False, executor=executor)
    seconds = time.monotonic() - started
    if result.failed:
        raise SystemExit(f"a model failed: {[outcome.failure for outcome in result.failed]}")
    return seconds


def projection(judges: int, tokens_per_model: float, rates: dict[str, float], hours: float) -> str:
    """A Markdown table: GPUs needed for ``judges`` models in ``hours``, one row per named rate (prompt tokens/s/GPU)."""
    total = judges * tokens_per_model
    lines = [
        "| judges (all of one size) | prompt tokens | prompt tokens/s per GPU | GPU-hours | GPUs for the window |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, rate in rates.items():
        gpu_hours = total / rate / 3600
        gpus = math.ceil(gpu_hours / hours)
        lines.append(f"| {judges} x {name} | {total:,.0f} | {rate:,.0f} | {gpu_hours:,.1f} | {gpus} ({hours:g} h) |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray (default 2)")
    parser.add_argument("--judges", type=int, default=20)
    parser.add_argument("--hours", type=float, default=8.0)
    parser.add_argument("--tokens-per-model", type=float, default=PAPER_SCALE_TOKENS)
    parser.add_argument(
        "--gpu-tokens-per-second",
        type=float,
        help="a prompt tokens/s per GPU you measured (default: the published rates)",
    )
    parser.add_argument("--skip-runs", action="store_true", help="only the projection")
    args = parser.parse_args()
    limit, max_items = os.environ.get("LIMIT", "2"), os.environ.get("MAX_ITEMS", "5")
    if not args.skip_runs:
        with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
            from logic_consistency.leaderboard.run.executor import build_executor

            local = timed_build(Path(folder) / "local", limit, max_items)
            ray_executor = build_executor("ray", init_options={"num_cpus": args.workers})
            ray = timed_build(Path(folder) / "ray", limit, max_items, ray_executor)
        print(
            f"LIMIT={limit}, MAX_ITEMS={max_items}, both embedded models: local sequential {local:.0f} s, "
            f"Ray ({args.workers} CPUs) {ray:.0f} s"
        )
        print(f"ratio local / Ray: {local / ray:.2f}")
    if args.gpu_tokens_per_second:
        rates = {"your judge (--gpu-tokens-per-second)": args.gpu_tokens_per_second}
    else:
        rates = PUBLISHED_RATES
        print("rates: NVIDIA TensorRT-LLM perf-overview, input/output 2048/128 (see PUBLISHED_RATES)")
    print(projection(args.judges, args.tokens_per_model, rates, args.hours))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
