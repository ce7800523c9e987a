import numpy as np
import pytest

from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.ranking import (
    bradley_terry,
    comparisons_from_prefs,
    elo_ratings,
    rank_scores,
    ranking_spearman,
    win_loss_rate,
)


def test_win_loss_rate_appendix_n_examples():
    # {A > B, A > C}: A first, B = C (no indirect evidence); D never compared -> NaN
    rates = win_loss_rate([0, 0], [1, 2], 4)
    np.testing.assert_array_equal(rates, [1.0, -1.0, -1.0, np.nan])
    # {A > B, B > C, C > D}: A > B = C > D
    rates = win_loss_rate([0, 1, 2], [1, 2, 3], 4)
    np.testing.assert_array_equal(rates, [1.0, 0.0, 0.0, -1.0])


def test_elo_depends_on_order_as_appendix_n_says():
    first = elo_ratings([0, 0], [1, 2], 3)
    second = elo_ratings([0, 0], [2, 1], 3)
    assert first[2] > first[1]  # {A > B, A > C} -> A > C > B
    assert second[1] > second[2]  # {A > C, A > B} -> A > B > C
    assert first[0] > 1000 and np.nansum(first - 1000) == pytest.approx(0)


def test_bradley_terry_recovers_the_order_of_a_transitive_chain():
    winners = [0, 1, 2, 0, 1, 0]
    losers = [1, 2, 3, 2, 3, 3]
    strengths = bradley_terry(winners, losers, 5)
    assert np.isnan(strengths[4])
    assert list(np.argsort(-strengths[:4])) == [0, 1, 2, 3]


def test_comparisons_from_prefs_reads_both_orders():
    prefs = np.array([[np.nan, 1.0, 0.2], [1.0, np.nan, np.nan], [0.9, 0.0, np.nan]])
    winners, losers = comparisons_from_prefs(prefs, nan_policy="omit")
    assert sorted(zip(winners.tolist(), losers.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 0), (2, 0)]


def test_spearman_of_all_methods_on_a_consistent_full_matrix():
    human = np.array([3.0, 1.0, 4.0, 2.0, 5.0])
    prefs = (human[:, None] > human[None, :]).astype(float)
    winners, losers = comparisons_from_prefs(prefs)
    for method in ("win_loss", "elo", "bradley_terry"):
        scores = rank_scores(winners, losers, 5, method=method)
        assert ranking_spearman(scores, human) == pytest.approx(1.0), method
    with pytest.raises(ValueError, match="method"):
        rank_scores(winners, losers, 5, method="borda")


def test_spearman_errors():
    with pytest.raises(UndefinedMetricError):
        ranking_spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN"):
        ranking_spearman([1.0, np.nan, 3.0], [1.0, 2.0, 3.0])
    assert ranking_spearman([1.0, np.nan, 3.0], [1.0, 2.0, 3.0], nan_policy="omit") == pytest.approx(1.0)


def test_invalid_comparisons():
    with pytest.raises(ValueError, match="itself"):
        win_loss_rate([1], [1], 3)
    with pytest.raises(ValueError, match="0..2"):
        win_loss_rate([3], [1], 3)
    with pytest.raises(ValueError, match="same length"):
        win_loss_rate([0, 1], [1], 3)


def test_bradley_terry_leaves_balanced_items_tied():
    # an always-"A" judge asked both orders: every item wins as often as it loses
    n = 5
    prefs = np.ones((n, n))
    winners, losers = comparisons_from_prefs(prefs)
    strengths = bradley_terry(winners, losers, n)
    assert np.ptp(strengths) == 0
    with pytest.raises(UndefinedMetricError):
        ranking_spearman(strengths, np.arange(n, dtype=float))


def test_tied_judgements_are_no_comparison():
    # (0, 1) tied: neither a win for the first-shown item 0 nor for 1
    prefs = np.array([[np.nan, 0.5, 0.9], [0.2, np.nan, 0.5], [0.1, 0.3, np.nan]])
    winners, losers = comparisons_from_prefs(prefs)
    assert list(zip(winners.tolist(), losers.tolist(), strict=True)) == [(0, 2), (0, 1), (0, 2), (1, 2)]
