import numpy as np
import pytest

from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.self_agreement import (
    count_single_sample_rows,
    majority_choice,
    majority_shares,
    self_agreement,
)

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


def test_a_single_parsed_sample_is_counted_not_scored_one():
    samples = np.array(
        [
            [1, 0, 0, 0],  # 3 of 4: 0.75
            [1, nan, nan, nan],  # one parsed sample: it agrees with itself, no share
            [0, 0, nan, nan],  # 2 of 2: 1.0
            [nan, 0, nan, nan],  # one parsed sample
            [nan] * 4,  # none parsed
        ],
        dtype=float,
    )
    np.testing.assert_allclose(majority_shares(samples), [0.75, nan, 1.0, nan, nan])
    assert self_agreement(samples) == pytest.approx((0.75 + 1.0) / 2)  # not (0.75 + 1 + 1 + 1) / 4
    assert count_single_sample_rows(samples) == 2
    # the lone sample is still the judgement's majority choice (it is a parsed judgement)
    np.testing.assert_array_equal(majority_choice(samples), [0.0, 1.0, 0.0, 0.0, nan])
    # one sample per judgement: nothing to agree with, undefined (never 1.0)
    with pytest.raises(UndefinedMetricError, match="2 parsed samples"):
        self_agreement(np.array([[1.0], [0.0]]))
    assert count_single_sample_rows(np.array([[1.0], [0.0]])) == 2


def test_undefined_and_invalid():
    with pytest.raises(UndefinedMetricError):
        self_agreement(np.full((2, 3), nan))
    with pytest.raises(ValueError, match="0.0"):
        self_agreement(np.array([[0.3, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        self_agreement(np.array([1.0, 0.0]))
