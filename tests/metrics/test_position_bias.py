import numpy as np
import pytest

from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.position_bias import p_first_mean, position_bias


def always_a(n: int) -> np.ndarray:
    prefs = np.ones((n, n))
    np.fill_diagonal(prefs, np.nan)
    return prefs


def test_always_a_judge_has_position_bias_one():
    assert position_bias(always_a(5)) == 1.0
    assert p_first_mean(always_a(5)) == 1.0


def test_always_b_judge_has_position_bias_zero():
    assert position_bias(1 - always_a(4)) == 0.0


def test_commutative_judge_is_unbiased():
    # item i better than j iff i < j, judged the same way in both orders
    n = 6
    prefs = np.array([[1.0 if i < j else 0.0 for j in range(n)] for i in range(n)])
    assert position_bias(prefs) == 0.5
    soft = 1 / (1 + np.exp(-(np.arange(n)[None, :] - np.arange(n)[:, None]) / 2.0))
    assert p_first_mean(soft) == pytest.approx(0.5)


def test_ties_are_won_by_neither_option():
    # Algorithm 1's ">= 1/2" would score every tie as option A's win (position bias 1.0)
    prefs = np.full((3, 3), 0.5)
    with pytest.raises(UndefinedMetricError, match="missing or a tie"):
        position_bias(prefs)
    assert p_first_mean(prefs) == 0.5  # a mean of probabilities: a tie enters as 0.5
    prefs = always_a(3)
    prefs[0, 1] = prefs[1, 0] = 0.5  # two ties among six judgements: left out, not won by A
    assert position_bias(prefs) == 1.0
    prefs[2, 0] = 0.0
    assert position_bias(prefs) == pytest.approx(3 / 4)  # 4 decided judgements, 3 won by A


def test_missing_judgements():
    prefs = always_a(3)
    prefs[0, 1] = np.nan
    prefs[1, 0] = 0.0
    with pytest.raises(ValueError, match="NaN"):
        position_bias(prefs)
    assert position_bias(prefs, nan_policy="omit") == pytest.approx(4 / 5)
    with pytest.raises(UndefinedMetricError):
        position_bias(np.full((3, 3), np.nan), nan_policy="omit")


def test_rejects_bad_input():
    with pytest.raises(ValueError, match="prefs"):
        position_bias(np.ones((2, 3)))
    with pytest.raises(ValueError, match="nan_policy"):
        p_first_mean(always_a(3), nan_policy="drop")
