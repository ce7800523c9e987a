import numpy as np
import pytest

from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.self_agreement import majority_choice, majority_shares, self_agreement

nan = np.nan


def test_hand_made_sample_set():
    samples = np.array(
        [
            [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # unanimous A: 1.0
            [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],  # 7 B of 10: 0.7
            [1, 0, 1, 0, 1, 0, 1, 0, 1, 0],  # tie: 0.5, no majority judgement
            [1, 1, 0, nan, nan, nan, nan, nan, nan, nan],  # 2 of 3 parsed: 2/3
            [nan] * 10,  # nothing parsed: left out
        ],
        dtype=float,
    )
    np.testing.assert_allclose(majority_shares(samples), [1.0, 0.7, 0.5, 2 / 3, nan])
    assert self_agreement(samples) == pytest.approx((1.0 + 0.7 + 0.5 + 2 / 3) / 4)
    np.testing.assert_array_equal(majority_choice(samples), [1.0, 0.0, nan, 1.0, nan])


def test_single_sample_is_fully_self_consistent():
    assert self_agreement(np.array([[1.0], [0.0]])) == 1.0


def test_undefined_and_invalid():
    with pytest.raises(UndefinedMetricError):
        self_agreement(np.full((2, 3), nan))
    with pytest.raises(ValueError, match="0.0"):
        self_agreement(np.array([[0.3, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        self_agreement(np.array([1.0, 0.0]))
