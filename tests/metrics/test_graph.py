"""Tests for metrics/_graph.py: Algorithm 2 and the exact subset counters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_consistency.metrics import _graph, has_cycle, transitivity_by_cycle_search


def random_tournament(n: int, seed: int) -> np.ndarray:
    upper = np.random.default_rng(seed).random((n, n)) < 0.5
    return np.triu(upper, 1) | np.triu(~upper, 1).T


def brute_force_three_cycles(wins: np.ndarray) -> int:
    """Count cyclic triples directly: a -> b -> c -> a in either orientation."""
    cycles = 0
    for a, b, c in itertools.combinations(range(wins.shape[0]), 3):
        if (wins[a, b] and wins[b, c] and wins[c, a]) or (wins[a, c] and wins[c, b] and wins[b, a]):
            cycles += 1
    return cycles


# --- has_cycle (paper Algorithm 2) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("adjacency", "expected"),
    [
        ([[1], [2], [0]], True),  # 3-cycle
        ([[1, 2], [2], []], False),  # transitive triple
        ([[1], [0]], True),  # 2-cycle
        ([[0]], True),  # self-loop
        ([[], [], []], False),  # no edges
        ([[1], [2], [3], [0]], True),  # 4-cycle
        ([[1], [], [3], [1]], False),  # two paths into a shared vertex (visited, not on stack)
        ([], False),  # empty graph
    ],
)
def test_has_cycle_hand_cases(adjacency: list[list[int]], expected: bool) -> None:
    assert has_cycle(adjacency) is expected


def test_has_cycle_long_path_does_not_hit_recursion_limit() -> None:
    n = 5000
    path = [[v + 1] for v in range(n - 1)] + [[]]
    assert has_cycle(path) is False
    path[-1] = [0]  # close the path into one long cycle
    assert has_cycle(path) is True


@pytest.mark.parametrize(
    ("adjacency", "match"),
    [
        ([[3], [], []], r"adjacency\[0\] points to 3"),
        ([[1.0], []], r"adjacency\[0\] must hold integer"),
        ([1, 2], r"adjacency must be a sequence of neighbour lists"),
    ],
)
def test_has_cycle_rejects_bad_vertices(adjacency: list[list[object]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        has_cycle(adjacency)  # type: ignore[arg-type]


# --- closed-form 3-cycle count (Kendall & Babington Smith) --------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_three_cycle_closed_form_matches_brute_force(seed: int) -> None:
    n = 3 + seed % 10
    wins = random_tournament(n, seed)
    out_degrees = wins.sum(axis=1)
    assert _graph.count_three_cycles(out_degrees) == brute_force_three_cycles(wins)
    transitive = math.comb(n, 3) - brute_force_three_cycles(wins)
    assert _graph.count_transitive_triples(out_degrees) == transitive


def test_three_cycle_closed_form_regular_tournament() -> None:
    # The cyclic tournament on 5 items (i beats i+1, i+2 mod 5) is regular with s_i = 2, so it
    # has the maximum C(5,3) - 5 * C(2,2) = 5 cyclic triples.
    wins = np.zeros((5, 5), dtype=bool)
    for i in range(5):
        wins[i, (i + 1) % 5] = wins[i, (i + 2) % 5] = True
    assert _graph.count_three_cycles(wins.sum(axis=1)) == 5 == brute_force_three_cycles(wins)


# --- exact counters vs the reference cycle search ----------------------------------------------


@settings(max_examples=150, deadline=None)
@given(n=st.integers(3, 9), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_counters_agree_on_tournaments(n: int, seed: int, data: st.DataObject) -> None:
    wins = random_tournament(n, seed)
    k = data.draw(st.integers(3, n), label="k")
    out_masks, in_masks = _graph.bitmasks(wins)
    reference = round(transitivity_by_cycle_search(wins, k) * math.comb(n, k))
    assert _graph.count_transitive_subsets(out_masks, k) == reference
    assert _graph.count_acyclic_subsets(out_masks, in_masks, k) == reference


def test_bitmasks_and_tournament_detection() -> None:
    wins = np.array([[False, True, False], [False, False, True], [True, False, False]])
    out_masks, in_masks = _graph.bitmasks(wins)
    assert out_masks == [0b010, 0b100, 0b001]
    assert in_masks == [0b100, 0b001, 0b010]
    assert _graph.is_tournament(wins)
    wins[0, 1] = False  # pair {0, 1} now has no edge
    assert not _graph.is_tournament(wins)
    wins[0, 1] = wins[1, 0] = True  # both directions: a 2-cycle, not a tournament either
    assert not _graph.is_tournament(wins)


def test_sampler_draws_uniform_subsets() -> None:
    # On the 4-item tournament with one 3-cycle, 1 of the 4 triples is cyclic: the sampled
    # acyclic count of 4000 draws is Binomial(4000, 3/4), sd ~ 27.
    wins = np.zeros((4, 4), dtype=bool)
    for i, j in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]:
        wins[i, j] = True
    acyclic = _graph.count_acyclic_samples(wins, 3, 4000, np.random.default_rng(0))
    assert abs(acyclic - 3000) < 4 * math.sqrt(4000 * 0.75 * 0.25)
