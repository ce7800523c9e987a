"""Benchmark exact s_tran(K) against the paper's per-subset cycle search.

Builds a random N-item tournament (seeded), then times

* ``transitivity(wins, k)``: the exact value (closed form / source recursion on bitmasks),
* ``transitivity_by_cycle_search(wins, k)``: all C(N, K) subsets, each checked with the paper's
  Algorithm 2 DFS (the plain definition, eq. 1 without sampling),
* ``transitivity(wins, k, samples=1000)``: the paper's M = 1000 sampled estimator,

and prints the best time over ``--repeats`` runs of each. Example::

    python scripts/bench_transitivity.py --n 20 --k 5 --repeats 5 --seed 0
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from logic_consistency.metrics import transitivity, transitivity_by_cycle_search


def random_tournament(n_items: int, seed: int) -> np.ndarray:
    """Each pair i < j gets one edge, i -> j or j -> i with probability 1/2."""
    upper = np.random.default_rng(seed).random((n_items, n_items)) < 0.5
    return np.triu(upper, 1) | np.triu(~upper, 1).T


def best_time(function: Callable[[], float], repeats: int) -> tuple[float, float]:
    """Return (best wall time in seconds, value) over ``repeats`` calls."""
    best = math.inf
    value = math.nan
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return best, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="number of items N (default 20)")
    parser.add_argument("--k", type=int, default=5, help="subset size K (default 5)")
    parser.add_argument("--repeats", type=int, default=5, help="timing repeats; best is kept")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random tournament")
    parser.add_argument("--samples", type=int, default=1000, help="M for the sampled estimator")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")

    wins = random_tournament(args.n, args.seed)
    n, k = args.n, args.k
    exact_time, exact = best_time(lambda: transitivity(wins, k), args.repeats)
    reference_time, reference = best_time(lambda: transitivity_by_cycle_search(wins, k), args.repeats)
    sampled_time, sampled = best_time(lambda: transitivity(wins, k, samples=args.samples, seed=args.seed), args.repeats)

    equal = exact == reference
    print(
        f"exact s_tran({k}) n={n}: {exact_time:.6f} s; "
        f"per-subset cycle search (all C({n},{k}) = {math.comb(n, k):,} subsets): "
        f"{reference_time:.6f} s; "
        f"speed-up x{reference_time / exact_time:,.0f}; "
        f"values equal: {exact:.4f}" + ("" if equal else f" != {reference:.4f} (MISMATCH)")
    )
    standard_error = math.sqrt(exact * (1 - exact) / args.samples)
    print(
        f"paper's sampled estimator (M={args.samples}, seed={args.seed}): {sampled_time:.6f} s; "
        f"value {sampled:.4f} (exact {exact:.4f}, binomial s.e. {standard_error:.4f})"
    )
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
