import numpy as np
import pytest
from scipy import stats

from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.correlation import correlation, spread


def test_correlation_matches_scipy_and_counts_points():
    x = [0.6, 0.7, 0.8, 0.95, 0.5]
    y = [0.55, 0.6, 0.7, 0.72, 0.58]
    result = correlation(x, y)
    assert result["n"] == 5
    assert result["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert correlation([1, 2, 3], [2, 4, 7])["spearman"] == pytest.approx(1.0)


def test_correlation_undefined_cases():
    with pytest.raises(UndefinedMetricError):
        correlation([1, 2], [1, 2])
    with pytest.raises(UndefinedMetricError):
        correlation([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="equal length"):
        correlation([1, 2, 3], [1, 2])


def test_spread():
    result = spread([0.2, 0.4, 0.9])
    assert (result["min"], result["max"], result["n"]) == (0.2, 0.9, 3)
    assert result["std"] == pytest.approx(np.std([0.2, 0.4, 0.9], ddof=1))
    assert np.isnan(spread([0.5])["std"])
    with pytest.raises(UndefinedMetricError):
        spread([])
