"""Tests for metrics/bootstrap.py."""

from __future__ import annotations

import numpy as np
import pytest

from logic_consistency.metrics import bootstrap_ci, bootstrap_summary


def test_deterministic_for_a_seed_and_seed_matters() -> None:
    values = np.random.default_rng(0).random(50)
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) != bootstrap_ci(values, seed=4)


def test_contains_mean_and_has_plausible_width() -> None:
    values = np.random.default_rng(1).normal(loc=0.7, scale=0.1, size=200)
    low, high = bootstrap_ci(values)
    assert low < values.mean() < high
    # Percentile CI of the mean ~ mean +- 1.96 * sd / sqrt(n).
    half_width = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert (high - low) / 2 == pytest.approx(half_width, rel=0.15)


def test_higher_confidence_gives_wider_interval() -> None:
    values = np.random.default_rng(2).random(40)
    low90, high90 = bootstrap_ci(values, confidence=0.90)
    low99, high99 = bootstrap_ci(values, confidence=0.99)
    assert low99 < low90 < high90 < high99


def test_other_statistic_and_constant_values() -> None:
    values = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5])
    low, high = bootstrap_ci(values, statistic=np.median, n_resamples=2000)
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert bootstrap_ci([0.4, 0.4, 0.4]) == pytest.approx((0.4, 0.4))


def test_summary_is_the_interval_and_the_standard_error_of_the_same_resamples() -> None:
    values = np.random.default_rng(4).normal(loc=0.3, scale=0.2, size=300)
    summary = bootstrap_summary(values, n_resamples=4000, seed=1)
    assert (summary.low, summary.high) == bootstrap_ci(values, n_resamples=4000, seed=1)
    # the bootstrap standard error of a mean ~ the plug-in sd / sqrt(n)
    assert summary.stderr == pytest.approx(values.std() / np.sqrt(values.size), rel=0.1)
    assert bootstrap_summary([0.4, 0.4, 0.4]).stderr == 0.0
    assert np.isnan(bootstrap_summary(values, n_resamples=1).stderr)  # one resample has no spread


def test_large_sample_is_processed_in_blocks() -> None:
    # 10,000 resamples x 5,000 values would be 400 MB at once; blocks keep memory bounded.
    values = np.random.default_rng(3).random(5000)
    low, high = bootstrap_ci(values, n_resamples=2000)
    assert low < values.mean() < high


@pytest.mark.parametrize(
    ("values", "options", "match"),
    [
        ([0.5], {}, r"values must hold at least 2 values"),
        ([], {}, r"values must hold at least 2 values"),
        ([0.1, np.nan, 0.3], {}, r"values contains NaN"),
        ([0.1, np.inf, 0.3], {}, r"values contains inf"),
        ([[0.1, 0.2], [0.3, 0.4]], {}, r"values must be 1-D"),
        (["a", "b"], {}, r"values must be a real numeric array"),
        ([0.1, 0.2], {"confidence": 0.0}, r"confidence must be strictly between 0 and 1"),
        ([0.1, 0.2], {"confidence": 1.0}, r"confidence must be strictly between 0 and 1"),
        ([0.1, 0.2], {"confidence": 95}, r"confidence must be strictly between 0 and 1"),
        ([0.1, 0.2], {"confidence": "0.95"}, r"confidence must be a number"),
        ([0.1, 0.2], {"n_resamples": 0}, r"n_resamples must be >= 1"),
        ([0.1, 0.2], {"n_resamples": 100.0}, r"n_resamples must be an integer"),
        ([0.1, 0.2], {"seed": -1}, r"seed must be >= 0"),
        ([0.1, 0.2], {"statistic": "mean"}, r"statistic must be callable"),
        ([0.1, 0.2], {"statistic": lambda x: float(np.mean(x))}, r"statistic must accept an axis"),
        (
            [0.1, 0.2],
            {"statistic": lambda x, axis: np.mean(x)},
            r"statistic\(x, axis=1\) must return one value",
        ),
    ],
)
def test_bad_input(values: object, options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bootstrap_ci(values, **options)  # type: ignore[arg-type]
