"""Tests for metrics/transitivity.py: s_tran(K) (paper eq. 1) and Algorithm 1."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_consistency.metrics import (
    EXACT_WORK_LIMIT,
    UndefinedMetricError,
    relation_graph,
    transitivity,
    transitivity_by_cycle_search,
)


def graph(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    wins = np.zeros((n, n), dtype=bool)
    for i, j in edges:
        wins[i, j] = True
    return wins


def random_tournament(n: int, seed: int) -> np.ndarray:
    upper = np.random.default_rng(seed).random((n, n)) < 0.5
    return np.triu(upper, 1) | np.triu(~upper, 1).T


@st.composite
def tournaments(draw: st.DrawFn, max_n: int = 9) -> np.ndarray:
    n = draw(st.integers(3, max_n))
    pairs = n * (n - 1) // 2
    bits = np.array(draw(st.lists(st.booleans(), min_size=pairs, max_size=pairs)), dtype=bool)
    wins = np.zeros((n, n), dtype=bool)
    rows, cols = np.triu_indices(n, 1)
    wins[rows, cols] = bits
    wins[cols, rows] = ~bits
    return wins


@st.composite
def partial_graphs(draw: st.DrawFn, max_n: int = 9) -> np.ndarray:
    """Per pair: no edge, i -> j, j -> i, or both (a 2-cycle); at least one edge overall."""
    n = draw(st.integers(3, max_n))
    states = draw(st.lists(st.integers(0, 3), min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    wins = np.zeros((n, n), dtype=bool)
    for (i, j), state in zip(zip(*np.triu_indices(n, 1)), states):
        wins[i, j] = state in (1, 3)
        wins[j, i] = state in (2, 3)
    if not wins.any():
        wins[0, 1] = True
    return wins


# --- hand-worked cases --------------------------------------------------------------------------

THREE_CYCLE = graph(3, [(0, 1), (1, 2), (2, 0)])
# 0 -> 1 -> 2 -> 0 is the only cycle; item 3 loses to everyone.
# Triples: {0,1,2} cyclic; {0,1,3}, {0,2,3}, {1,2,3} each have a source -> s_tran(3) = 3/4.
# Out-degrees (2, 2, 2, 0): sum C(s_i, 2) = 3 transitive triples out of C(4, 3) = 4.
# The only 4-subset contains the cycle -> s_tran(4) = 0.
ONE_CYCLE_4 = graph(4, [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)])
# Paper Figure 2 (c)/(d): a 4-cycle without chords. Every triple induces a 2-edge path
# (acyclic), but all four items form a cycle s_tran(3) cannot see.
FOUR_CYCLE = graph(4, [(0, 1), (1, 2), (2, 3), (3, 0)])


@pytest.mark.parametrize("samples", [None, 500])
def test_three_cycle_scores_zero(samples: int | None) -> None:
    assert transitivity(THREE_CYCLE, 3, samples=samples) == 0.0


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_transitive_tournament_scores_one(k: int) -> None:
    wins = np.triu(np.ones((6, 6), dtype=bool), 1)  # item i beats every later item
    assert transitivity(wins, k) == 1.0


def test_four_item_tournament_with_one_three_cycle() -> None:
    assert transitivity(ONE_CYCLE_4, 3) == 0.75
    assert transitivity(ONE_CYCLE_4, 4) == 0.0
    assert transitivity_by_cycle_search(ONE_CYCLE_4, 3) == 0.75


def test_partial_four_cycle_is_invisible_to_k3() -> None:
    assert transitivity(FOUR_CYCLE, 3) == 1.0
    assert transitivity(FOUR_CYCLE, 4) == 0.0
    assert transitivity_by_cycle_search(FOUR_CYCLE, 4) == 0.0


def test_two_cycle_counts_as_cycle() -> None:
    wins = graph(4, [(0, 1), (1, 0), (2, 3)])  # 0 <-> 1 contradictory; 2 -> 3
    # Triples containing both 0 and 1: {0,1,2}, {0,1,3} are cyclic; the other two are not.
    assert transitivity(wins, 3) == 0.5
    assert transitivity(wins, 4) == 0.0


def test_partial_graph_sparse_subsets_count_as_acyclic() -> None:
    # Only one judgement among 4 items: every subset is acyclic (partial graph semantics).
    assert transitivity(graph(4, [(2, 1)]), 3) == 1.0


def test_integer_zero_one_matrix_accepted() -> None:
    assert transitivity(THREE_CYCLE.astype(int), 3) == 0.0


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(wins=tournaments(), data=st.data())
def test_exact_equals_reference_on_tournaments(wins: np.ndarray, data: st.DataObject) -> None:
    k = data.draw(st.integers(3, wins.shape[0]), label="k")
    assert transitivity(wins, k) == transitivity_by_cycle_search(wins, k)


@settings(max_examples=300, deadline=None)
@given(wins=partial_graphs(), data=st.data())
def test_exact_equals_reference_on_partial_graphs(wins: np.ndarray, data: st.DataObject) -> None:
    k = data.draw(st.integers(3, wins.shape[0]), label="k")
    assert transitivity(wins, k) == transitivity_by_cycle_search(wins, k)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 12), order=st.data())
def test_any_transitive_tournament_scores_one(n: int, order: st.DataObject) -> None:
    ranking = order.draw(st.permutations(range(n)), label="ranking")
    position = np.argsort(ranking)  # position[item] = rank of item, 0 = best
    wins = position[:, None] < position[None, :]
    for k in range(3, n + 1):
        assert transitivity(wins, k) == 1.0


@settings(max_examples=100, deadline=None)
@given(wins=partial_graphs(max_n=8), data=st.data())
def test_relabelling_invariance(wins: np.ndarray, data: st.DataObject) -> None:
    n = wins.shape[0]
    perm = np.array(data.draw(st.permutations(range(n)), label="perm"))
    relabelled = wins[np.ix_(perm, perm)]
    for k in range(3, n + 1):
        assert transitivity(relabelled, k) == transitivity(wins, k)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    n=st.integers(5, 12),
    graph_seed=st.integers(0, 10_000),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_sampled_estimator_within_binomial_error(n: int, graph_seed: int, seed: int, data: st.DataObject) -> None:
    wins = random_tournament(n, graph_seed)
    k = data.draw(st.integers(3, min(n, 6)), label="k")
    m = 4000
    exact = transitivity(wins, k)
    sampled = transitivity(wins, k, samples=m, seed=seed)
    # Each draw is Bernoulli(exact): the estimate's standard error is sqrt(p (1 - p) / M)
    # (paper Appendix I); 4 standard errors leave ~6e-5 chance of a spurious failure.
    assert abs(sampled - exact) <= 4 * math.sqrt(exact * (1 - exact) / m) + 1e-12
    assert sampled == transitivity(wins, k, samples=m, seed=seed)  # deterministic per seed


def test_sampled_estimator_uses_seed() -> None:
    wins = random_tournament(12, 3)
    results = {transitivity(wins, 5, samples=300, seed=seed) for seed in range(5)}
    assert len(results) > 1


def test_exact_handles_larger_tournaments_quickly() -> None:
    wins = random_tournament(60, 0)
    value = transitivity(wins, 5)
    assert 0.0 < value < 1.0
    assert transitivity(wins, 3) == pytest.approx(
        np.sum(wins.sum(axis=1) * (wins.sum(axis=1) - 1) // 2) / math.comb(60, 3)
    )


# --- relation graph (Algorithm 1) ---------------------------------------------------------------


def test_relation_graph_uses_upper_triangle_and_ties_draw_no_edge() -> None:
    prefs = np.array(
        [
            [np.nan, 0.5, 0.2],  # 0 vs 1: tie -> no edge (not "0 wins", Algorithm 1's >= 0.5); 0 vs 2: 2 wins
            [0.9, np.nan, 0.7],  # lower triangle is never read
            [0.0, 0.0, np.nan],
        ]
    )
    expected = graph(3, [(2, 0), (1, 2)])
    np.testing.assert_array_equal(relation_graph(prefs), expected)
    np.testing.assert_array_equal(relation_graph(prefs, nan_policy="omit"), expected)
    # the tied pair would close the cycle 0 -> 1 -> 2 -> 0 if it were scored as a win for 0
    assert transitivity(relation_graph(prefs), 3) == 1.0


def test_relation_graph_omit_leaves_pair_without_edge() -> None:
    prefs = np.array([[0, np.nan, 0.8], [0.1, 0, 0.4], [0.3, 0.6, 0]], dtype=float)
    wins = relation_graph(prefs, nan_policy="omit")
    np.testing.assert_array_equal(wins, graph(3, [(0, 2), (2, 1)]))
    with pytest.raises(ValueError, match="prefs has 1 NaN"):
        relation_graph(prefs)


# --- bad inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wins", "match"),
    [
        (np.zeros((3, 4), dtype=bool), r"wins must be square"),
        (np.zeros(3, dtype=bool), r"wins must be a 2-D"),
        (np.array([[0, 2, 0], [0, 0, 1], [1, 0, 0]]), r"wins must be boolean"),
        (np.array([[0, np.nan, 0], [0, 0, 1], [1, 0, 0]]), r"wins contains NaN"),
        (np.array([["a", "b"], ["c", "d"]]), r"wins must be a boolean array"),
        (np.eye(3, dtype=bool), r"wins must have a False diagonal"),
        (np.zeros((4, 4), dtype=bool), r"wins has no edges.*undefined"),
    ],
)
@pytest.mark.parametrize("function", [transitivity, transitivity_by_cycle_search])
def test_bad_wins(function, wins: np.ndarray, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        function(wins, 3)


def test_empty_graph_is_undefined_metric_error() -> None:
    with pytest.raises(UndefinedMetricError):
        transitivity(np.zeros((3, 3), dtype=bool))


@pytest.mark.parametrize(
    ("k", "match"),
    [
        (2, r"k must be >= 3"),
        (5, r"k must be <= the number of items N = 4"),
        (3.0, r"k must be an integer"),
        (True, r"k must be an integer, got a bool"),
    ],
)
def test_bad_k(k: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        transitivity(ONE_CYCLE_4, k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=match):
        transitivity_by_cycle_search(ONE_CYCLE_4, k)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"samples": 0}, r"samples must be >= 1"),
        ({"samples": 10.5}, r"samples must be an integer"),
        ({"samples": 10, "seed": -1}, r"seed must be >= 0"),
        ({"samples": 10, "seed": None}, r"seed must be an integer"),
    ],
)
def test_bad_sampling_options(options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        transitivity(ONE_CYCLE_4, 3, **options)  # type: ignore[arg-type]


def test_exact_limit_suggests_sampling() -> None:
    n, k = 25, 12
    assert math.comb(n, k) > EXACT_WORK_LIMIT
    partial = graph(n, [(0, 1)])
    with pytest.raises(ValueError, match=r"over the limit.*samples="):
        transitivity(partial, k)
    with pytest.raises(ValueError, match=r"samples="):
        transitivity(random_tournament(60, 0), 12)
    assert transitivity(partial, k, samples=50) == 1.0


# ----------------------------------------------------------------------------- sampling without replacement
def test_unrank_combination_lists_subsets_in_itertools_order() -> None:
    import itertools

    from logic_consistency.metrics._graph import unrank_combination

    for n, k in [(5, 3), (7, 4), (6, 6), (9, 3)]:
        expected = [list(c) for c in itertools.combinations(range(n), k)]
        assert [unrank_combination(i, n, k) for i in range(math.comb(n, k))] == expected


@pytest.mark.parametrize(("n", "k", "m"), [(6, 3, 20), (8, 4, 30), (40, 3, 500), (200, 5, 300)])
def test_sampled_subsets_are_distinct_and_capped(n: int, k: int, m: int) -> None:
    from logic_consistency.metrics._graph import sample_distinct_subsets

    subsets = sample_distinct_subsets(n, k, m, np.random.default_rng(1))
    keys = [tuple(s) for s in subsets]
    assert len(keys) == m == len(set(keys))  # without replacement
    assert all(len(s) == k and list(s) == sorted(s) and 0 <= s[0] and s[-1] < n for s in keys)
    with pytest.raises(ValueError, match="distinct"):
        sample_distinct_subsets(n, k, math.comb(n, k) + 1, np.random.default_rng(1))


def test_sampled_estimate_caps_m_at_the_number_of_subsets() -> None:
    """C(5, 3) = 10 < M = 1000: Algorithm 2 sees every triple once, so the estimate is exact."""
    wins = random_tournament(5, 11)
    exact = transitivity(wins, 3)
    assert 0.0 < exact < 1.0
    for seed in range(5):
        assert transitivity(wins, 3, samples=1000, seed=seed) == exact
    # ONE_CYCLE_4: 3 of its 4 triples are transitive; sampled with replacement this would not be
    # exactly 3/4 for most seeds
    assert transitivity(ONE_CYCLE_4, 3, samples=1000, seed=3) == 0.75


def test_sampled_estimate_without_replacement_is_uniform() -> None:
    """Each of the C(7, 3) = 35 triples is drawn equally often across seeds (M = 10 of 35)."""
    from logic_consistency.metrics._graph import sample_distinct_subsets

    counts: dict[tuple[int, ...], int] = {}
    for seed in range(700):
        for subset in sample_distinct_subsets(7, 3, 10, np.random.default_rng(seed)):
            counts[tuple(subset)] = counts.get(tuple(subset), 0) + 1
    assert len(counts) == 35
    expected = 700 * 10 / 35  # 200 draws of each triple
    # binomial sd ~ sqrt(7000 * (1/35) * (34/35)) ~ 13.8; 5 sd
    assert all(abs(count - expected) < 70 for count in counts.values())


def test_replace_true_keeps_independent_draws() -> None:
    wins = random_tournament(5, 11)
    exact = transitivity(wins, 3)
    with_replacement = {transitivity(wins, 3, samples=50, seed=seed, replace=True) for seed in range(8)}
    assert len(with_replacement) > 1 and with_replacement != {exact}  # repeats make it vary
    with pytest.raises(ValueError, match="replace"):
        transitivity(wins, 3, samples=50, replace="yes")
