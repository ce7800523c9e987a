"""Ties (P(option A) == 0.5 exactly) are won by neither option: metrics/_ties.py and the metrics that use it."""

from __future__ import annotations

import numpy as np
import pytest

from logic_consistency.metrics import (
    UndefinedMetricError,
    commutativity,
    count_ties,
    human_agreement,
    pairwise_consistency,
)

NAN = np.nan


def test_human_agreement_leaves_out_tied_judgements_under_both_rules() -> None:
    scores = [1.0, 1.0, 2.0]
    prefs = np.array([[0.0, 0.9, 0.5], [0.8, 0.0, 0.1], [0.9, 0.9, 0.0]])  # (0, 2) tied
    assert human_agreement(prefs, scores) == 1.0  # 3 untied decided ordered pairs, all right
    assert human_agreement(prefs, scores, ties="half") == pytest.approx(4 / 5)  # (3 + 2 x 1/2) / 5
    with pytest.raises(UndefinedMetricError, match="missing or tied"):
        human_agreement(np.full((3, 3), 0.5), scores)
    with pytest.raises(UndefinedMetricError, match="missing or tied"):
        human_agreement(np.full((3, 3), 0.5), scores, ties="half")


def test_a_judge_whose_every_reading_ties_has_undefined_metrics_not_zero_or_one() -> None:
    """e.g. a chat judge read with top_logprobs=1: every P(A) is 0.5 whatever it says."""
    ties = np.full((4, 4), 0.5)
    result = pairwise_consistency(ties, ties, [1.0, 2.0, 3.0, 4.0], ks=(3,), nan_policy="omit")
    assert result["s_comm"] is None and result["s_neg"] is None and result["human_agreement"] is None
    assert result["s_tran_3"] is None  # a tie draws no edge: no relation graph at all
    assert count_ties(ties) == 12
    with pytest.raises(UndefinedMetricError):
        pairwise_consistency(ties, ks=(3,))  # nan_policy="raise": undefined raises


def test_near_ties_are_decided() -> None:
    eps = np.nextafter(0.5, 1.0)
    prefs = np.array([[NAN, eps], [np.nextafter(0.5, 0.0), NAN]])  # item 0 wins both orders, barely
    assert commutativity(prefs) == 1.0 and count_ties(prefs) == 0


def test_count_ties_ignores_diagonal_and_missing() -> None:
    prefs = np.array([[0.5, 0.5, NAN], [0.2, 0.5, 0.5], [0.5, NAN, 0.5]])
    assert count_ties(prefs) == 3
    with pytest.raises(ValueError, match="square"):
        count_ties(np.zeros((2, 3)))
