"""What the pairwise family adds to ``logic-consistency plan``: the full matrix against PairS.

The pairwise tasks judge the full matrix (every ordered pair) and replay PairS on it at no extra
call; a PairS task (``*_pairs``) asks only the comparisons its merge sorts need, round by round,
so its count depends on the answers. The plan records one simulated run with a random judge
(:mod:`logic_consistency.harness_ext.plan.counts`); these lines give the bounds it is to be read against.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from logic_consistency.metrics.pairs_sort import merge_sort_bound


def full_matrix(docs: Sequence[dict[str, Any]]) -> int:
    """Ordered pairs of items over all documents: sum of n (n - 1)."""
    return sum(len(doc["items"]) * (len(doc["items"]) - 1) for doc in docs)


def matrix_notes(docs: Sequence[dict[str, Any]], *, pairs_runs: int) -> list[tuple[str, Any]]:
    """Plan lines of a pairwise task: its matrix, and PairS replayed on it."""
    notes: list[tuple[str, Any]] = [("full matrix: ordered pairs judged (per template)", full_matrix(docs))]
    if pairs_runs:
        notes.append(("PairS replayed on that matrix", f"{pairs_runs} runs, 0 extra calls"))
    return notes


def pairs_notes(docs: Sequence[dict[str, Any]], *, pairs_runs: int) -> list[tuple[str, Any]]:
    """Plan lines of a PairS task: the full matrix it avoids and its per-run and total bounds."""
    worst = sum(merge_sort_bound(len(doc["items"])) for doc in docs)
    return [
        ("full matrix: ordered pairs (one judgement each)", full_matrix(docs)),
        ("PairS per run, worst case: comparisons (n ceil(log2 n) - 2^ceil(log2 n) + 1)", worst),
        ("PairS per run, worst case: prompts raw + calibrated (both orders)", 3 * worst),
        (f"PairS over {pairs_runs} runs: distinct prompts, upper bound (one memo per document)", full_matrix(docs)),
    ]
