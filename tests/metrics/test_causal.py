"""Tests of the causal epistemic consistency metrics (Cui et al., "Nuance Matters", section 3)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from logic_consistency import metrics
from logic_consistency.metrics.causal import (
    CAUSAL_LABELS,
    causal_consistency,
    confusion_matrix,
    cross_group_position,
    intra_group_clustering,
    intra_group_clustering_density,
    kendall_tau,
    polarity_change_distances,
)

PERFECT = list(CAUSAL_LABELS)


def seq(text: str) -> list[int]:
    """A ranking written as in the paper's Table 4: "-5 -4 +1 ..."."""
    return [int(token) for token in text.split()]


# ----------------------------------------------------------------------------- hand-worked cases
def test_perfect_ranking_scores_one_everywhere() -> None:
    assert causal_consistency(PERFECT) == {
        "tau_supporters": 1.0,
        "tau_defeaters": 1.0,
        "tau_all": 1.0,
        "cgp": 1.0,
        "igc": 1.0,
        "igc_density": 1.0,
    }


def test_reversed_ranking() -> None:
    # every pair discordant; every supporter before every defeater; both groups still contiguous
    assert causal_consistency(PERFECT[::-1]) == {
        "tau_supporters": -1.0,
        "tau_defeaters": -1.0,
        "tau_all": -1.0,
        "cgp": 0.0,
        "igc": 1.0,
        "igc_density": 1.0,
    }


def test_interleaved_ranking() -> None:
    result = causal_consistency(seq("-5 +1 -4 +2 -3 +3 -2 +4 -1 +5"))
    # within each group the order is right
    assert result["tau_defeaters"] == result["tau_supporters"] == 1.0
    # discordant pairs = supporters before defeaters: 4 + 3 + 2 + 1 = 10 of 45
    assert result["tau_all"] == pytest.approx((35 - 10) / 45)
    assert result["cgp"] == pytest.approx(1 - 10 / 25)
    # density: each group spans 9 positions with gaps of 1 -> 5/9 * (1 - 1/9)
    assert result["igc_density"] == pytest.approx(40 / 81)
    # silhouette, alternating D A D A ...: same-group item at offset 2k is at distance k, other-group
    # item at offset 2k+1 at distance k+1, giving per position
    # [1/6, -0.12, 9/44, 1/36, 1/6, 1/6, 1/36, 9/44, -0.12, 1/6]
    expected = (4 / 6 + 2 / 36 + 18 / 44 - 0.24) / 10
    assert result["igc"] == pytest.approx(expected)


def test_one_adjacent_swap_across_groups() -> None:
    result = causal_consistency(seq("-5 -4 -3 -2 +1 -1 +2 +3 +4 +5"))
    assert result["tau_defeaters"] == result["tau_supporters"] == 1.0
    assert result["tau_all"] == pytest.approx(43 / 45)  # one discordant pair of 45
    assert result["cgp"] == pytest.approx(24 / 25)
    # each group spans 6 positions with one gap of 1: 5/6 * (1 - 1/6)
    assert result["igc_density"] == pytest.approx(25 / 36)


def test_kendall_tau_matches_scipy_without_ties() -> None:
    from scipy.stats import kendalltau

    rng = np.random.default_rng(7)
    for _ in range(50):
        values = list(rng.permutation(10))
        assert kendall_tau(values) == pytest.approx(kendalltau(values, sorted(values)).statistic)


# ----------------------------------------------------------------------------- the paper's tables
@pytest.mark.parametrize(
    ("sequence", "cgp", "igc_density"),
    [
        # Table 4 (Appendix C.2), values as printed
        ("-5 -4 -3 -2 -1 +1 +2 +3 +4 +5", 1.000, 1.000),
        ("-5 -4 -3 -2 +1 -1 +2 +3 +4 +5", 0.960, 0.694),
        ("-5 -4 -2 +1 +2 -1 -3 +3 +4 +5", 0.840, 0.510),
        ("-5 -4 -3 -2 +1 +2 +3 +4 -1 +5", 0.840, 0.502),
        ("-5 -4 +1 -2 -1 -3 +2 +3 +4 +5", 0.880, 0.543),
        ("+4 +3 -1 +2 +1 +5 -2 -3 -4 -5", 0.120, 0.543),
    ],
)
def test_table_4_cgp_and_igc_values_as_printed(sequence: str, cgp: float, igc_density: float) -> None:
    result = causal_consistency(seq(sequence))
    assert round(result["cgp"], 3) == cgp
    assert round(result["igc_density"], 3) == igc_density


def test_appendix_c1_worked_example_of_the_silhouette_igc() -> None:
    polarities = [1, 1, 2, 1, 1, 2, 2, 2, 1, 2]
    # the distance matrix printed in Appendix C.1
    printed = [
        [0, 0, 1, 1, 1, 2, 2, 2, 2, 3],
        [0, 0, 1, 1, 1, 2, 2, 2, 2, 3],
        [1, 1, 0, 1, 1, 1, 1, 1, 2, 2],
        [1, 1, 1, 0, 0, 1, 1, 1, 1, 2],
        [1, 1, 1, 0, 0, 1, 1, 1, 1, 2],
        [2, 2, 1, 1, 1, 0, 0, 0, 1, 1],
        [2, 2, 1, 1, 1, 0, 0, 0, 1, 1],
        [2, 2, 1, 1, 1, 0, 0, 0, 1, 1],
        [2, 2, 2, 1, 1, 1, 1, 1, 0, 1],
        [3, 3, 2, 2, 2, 1, 1, 1, 1, 0],
    ]
    assert polarity_change_distances(polarities).tolist() == printed
    assert round(intra_group_clustering(polarities), 3) == 0.387


@pytest.mark.parametrize(
    ("polarities", "expected"),
    [
        ("DDDDDAAAAA", 1.0),  # optimal case
        ("DDDDDDDDDA", 1.0),  # edge case: a lone element scores 1 (eq. 12), not 0
        ("ADDDDDDDDD", 1.0),  # its dual
        ("DDDDADDDDD", (4 * 0.375 + 1.0 + 5 * 0.5) / 10),  # lone element inside the other group
    ],
)
def test_appendix_c1_optimal_and_edge_cases(polarities: str, expected: float) -> None:
    assert intra_group_clustering(list(polarities)) == pytest.approx(expected)


def test_the_two_igc_definitions_differ() -> None:
    # documented in the module: compare with published numbers through igc_density only
    result = causal_consistency(seq("-5 -4 -3 -2 +1 +2 +3 +4 -1 +5"))
    assert round(result["igc"], 3) == 0.661
    assert round(result["igc_density"], 3) == 0.502


# ----------------------------------------------------------------------------- the Random row
#: Table 1, Random row: (mean, sd) as printed.
RANDOM_ROW = {
    "tau_supporters": (-0.003, 0.409),
    "tau_defeaters": (0.005, 0.406),
    "tau_all": (-0.008, 0.249),
    "cgp": (0.496, 0.192),
    "igc_density": (0.467, 0.077),
}
N_SIMULATED = 20_000
#: The paper does not say how many random rankings its Random row averages; its means are off by
#: up to 1.4 standard errors of a sample of the test set's size, so that size is assumed here.
N_PAPER = 1_970


def _exact_random_moments() -> dict[str, tuple[float, float, float]]:
    """Mean, sd and kurtosis of each metric under a uniformly random ranking, computed exactly.

    Kendall tau of k items: mean 0, variance 2 (2k + 5) / (9 k (k - 1)). CGP and the IGC variants
    depend only on the polarity pattern, and the C(10, 5) = 252 patterns are equally likely.
    """
    out = {}
    for name, k in (("tau_supporters", 5), ("tau_defeaters", 5), ("tau_all", 10)):
        # kurtosis of tau is close to 3 (normal) for these k; 3 is used for the sd's standard error
        out[name] = (0.0, math.sqrt(2 * (2 * k + 5) / (9 * k * (k - 1))), 3.0)
    patterns = [
        [1 if i in supporters else -1 for i in range(10)] for supporters in itertools.combinations(range(10), 5)
    ]
    values = {
        "cgp": np.array([cross_group_position(p) for p in patterns]),
        "igc_density": np.array([intra_group_clustering_density(p) for p in patterns]),
        "igc": np.array([intra_group_clustering(p) for p in patterns]),
    }
    for name, array in values.items():
        centred = array - array.mean()
        out[name] = (float(array.mean()), float(array.std()), float((centred**4).mean() / array.var() ** 2))
    return out


@pytest.fixture(scope="module")
def simulated() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20240607)
    labels = np.array(CAUSAL_LABELS)
    results = [causal_consistency(rng.permutation(labels).tolist()) for _ in range(N_SIMULATED)]
    return {name: np.array([result[name] for result in results]) for name in results[0]}


def _standard_errors(sd: float, kurtosis: float, n: int) -> tuple[float, float]:
    """Standard errors of a sample mean and a sample sd of n draws (large-sample formulas)."""
    return sd / math.sqrt(n), sd * math.sqrt((kurtosis - 1) / (4 * n))


def test_random_rankings_match_the_exact_moments(simulated: dict[str, np.ndarray]) -> None:
    exact = _exact_random_moments()
    assert exact["igc_density"][:2] == pytest.approx((0.4689, 0.0812), abs=5e-5)
    for name, (mean, sd, kurtosis) in exact.items():
        se_mean, se_sd = _standard_errors(sd, kurtosis, N_SIMULATED)
        # 4 standard errors: a seeded run, so this only guards against a wrong formula
        assert abs(simulated[name].mean() - mean) < 4 * se_mean, name
        assert abs(simulated[name].std(ddof=1) - sd) < 4 * se_sd, name


def test_random_rankings_reproduce_the_papers_random_row(simulated: dict[str, np.ndarray]) -> None:
    exact = _exact_random_moments()
    for name, (paper_mean, paper_sd) in RANDOM_ROW.items():
        _, sd, kurtosis = exact[name]
        paper_se = _standard_errors(sd, kurtosis, N_PAPER)
        our_se = _standard_errors(sd, kurtosis, N_SIMULATED)
        # 3 combined standard errors of the two samples, plus the printed rounding (0.0005)
        tolerance_mean = 3 * math.hypot(paper_se[0], our_se[0]) + 5e-4
        tolerance_sd = 3 * math.hypot(paper_se[1], our_se[1]) + 5e-4
        assert abs(simulated[name].mean() - paper_mean) < tolerance_mean, name
        assert abs(simulated[name].std(ddof=1) - paper_sd) < tolerance_sd, name


# ----------------------------------------------------------------------------- properties
@given(st.permutations(list(CAUSAL_LABELS)))
def test_metric_ranges_and_symmetries(ranking: list[int]) -> None:
    result = causal_consistency(ranking)
    for name in ("tau_supporters", "tau_defeaters", "tau_all", "igc"):
        assert -1.0 <= result[name] <= 1.0
    assert 0.0 <= result["cgp"] <= 1.0
    assert 0.0 < result["igc_density"] <= 1.0
    # reversing the ranking negates every tau and mirrors CGP; clustering does not change
    flipped = causal_consistency(ranking[::-1])
    for name in ("tau_supporters", "tau_defeaters", "tau_all"):
        assert flipped[name] == pytest.approx(-result[name])
    assert flipped["cgp"] == pytest.approx(1 - result["cgp"])
    assert flipped["igc_density"] == pytest.approx(result["igc_density"])
    assert flipped["igc"] == pytest.approx(result["igc"])


# ----------------------------------------------------------------------------- confusion matrix
def test_confusion_matrix_counts_label_against_position() -> None:
    matrix = confusion_matrix([PERFECT, PERFECT[::-1], seq("-5 -4 -3 -2 +1 -1 +2 +3 +4 +5")])
    assert matrix.shape == (10, 10)
    assert matrix.sum() == 30
    assert (matrix.sum(axis=1) == 3).all() and (matrix.sum(axis=0) == 3).all()
    assert matrix[0, 0] == 2  # -5 first in the perfect and the swapped ranking
    assert matrix[0, 9] == 1  # and last in the reversed one
    # -1 and +1 trade places in the swapped ranking and in the reversed one
    assert matrix[4, 5] == 2 and matrix[5, 4] == 2
    assert matrix[4, 4] == 1 and matrix[5, 5] == 1
    normalized = confusion_matrix([PERFECT, PERFECT[::-1], PERFECT], normalize=True)
    assert normalized.sum(axis=1) == pytest.approx(np.ones(10))
    assert normalized[0, 0] == pytest.approx(2 / 3)
    assert confusion_matrix([]).sum() == 0


def test_confusion_matrix_names_the_bad_ranking() -> None:
    with pytest.raises(ValueError, match=r"rankings\[1\].*duplicate labels \[4\] and missing labels \[5\]"):
        confusion_matrix([PERFECT, PERFECT[:-1] + [4]])


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("ranked_labels", "fragment"),
    [
        (PERFECT[:-1], r"missing labels \[5\]"),
        (PERFECT + [5], r"duplicate labels \[5\]"),
        ([-5, -4, -3, -2, -1, 1, 2, 3, 4, 4], r"duplicate labels \[4\] and missing labels \[5\]"),
        ([0, -4, -3, -2, -1, 1, 2, 3, 4, 5], r"ranked_labels\[0\] = 0 is an unknown label"),
        ([-5, -4, -3, -2, -1, 1, 2, 3, 4, 6], r"ranked_labels\[9\] = 6 is an unknown label"),
        (["-5", -4, -3, -2, -1, 1, 2, 3, 4, 5], r"ranked_labels\[0\] = '-5' is an unknown label"),
        ([-5, -4, -3, -2, -1, 1, 2, 3, 4, 4.5], r"ranked_labels\[9\] = 4.5 is an unknown label"),
        ([True, -4, -3, -2, -1, 1, 2, 3, 4, 5], r"ranked_labels\[0\] is a bool"),
        ("-5 -4 -3", "ranked_labels must be a sequence"),
        (None, "ranked_labels must be a sequence"),
        (np.array([PERFECT]), "ranked_labels must be 1-D"),
    ],
)
def test_bad_rankings_raise_naming_the_argument(ranked_labels: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        causal_consistency(ranked_labels)  # type: ignore[arg-type]


def test_numpy_integer_labels_are_accepted() -> None:
    assert causal_consistency(np.array(PERFECT, dtype=np.int64))["tau_all"] == 1.0


@pytest.mark.parametrize("polarities", [[1] * 10, [1, 2, 3, 1], []])
def test_igc_needs_exactly_two_groups(polarities: list[int]) -> None:
    with pytest.raises(ValueError, match="polarities must contain exactly two distinct group labels"):
        intra_group_clustering(polarities)
    with pytest.raises(ValueError, match="polarities must contain exactly two distinct group labels"):
        intra_group_clustering_density(polarities)


def test_public_exports() -> None:
    for name in ("causal_consistency", "confusion_matrix", "intra_group_clustering", "intra_group_clustering_density"):
        assert name in metrics.__all__ and callable(getattr(metrics, name))
    assert metrics.CAUSAL_LABELS == (-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)


def test_kendall_tau_agrees_with_scipy() -> None:
    """The exact eq. 2 count equals scipy.stats.kendalltau (tau-b) on distinct values, up to rounding."""
    from scipy import stats

    from logic_consistency.metrics.causal import kendall_tau

    rng = np.random.default_rng(0)
    for n in (2, 5, 10):
        for _ in range(50):
            values = rng.permutation(n)
            assert kendall_tau(values) == pytest.approx(stats.kendalltau(np.arange(n), values).statistic, abs=1e-12)


def test_row_fractions_of_no_rankings_are_undefined() -> None:
    with pytest.raises(ValueError, match="rankings is empty"):
        confusion_matrix([], normalize=True)
