"""Correlation and spread summaries for the paper's model-level figures (Liu et al., "Aligning
with Logic", Figure 4: transitivity vs self-agreement; Figure 5: commutativity vs human agreement
across paraphrased prompts)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._validation import UndefinedMetricError


def correlation(x: ArrayLike, y: ArrayLike) -> dict[str, float | int]:
    """Pearson and Spearman correlation of paired values, with two-sided p-values and n.

    Uses ``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr``. The paper reports the
    correlations in figures without stating the coefficient; both are given.

    Args:
        x: 1-D finite values (e.g. one consistency metric per model or per prompt template).
        y: 1-D finite values of the same length.

    Returns:
        ``{"pearson", "pearson_p", "spearman", "spearman_p", "n"}``.

    Raises:
        ValueError: shapes differ or values are not finite.
        UndefinedMetricError: fewer than 3 points, or either side constant.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"x and y must be 1-D of equal length, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must be finite")
    if a.size < 3:
        raise UndefinedMetricError(f"a correlation needs at least 3 points, got {a.size}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise UndefinedMetricError("a correlation is undefined when one side is constant")
    pearson = stats.pearsonr(a, b)
    spearman = stats.spearmanr(a, b)
    return {
        "pearson": float(pearson.statistic),
        "pearson_p": float(pearson.pvalue),
        "spearman": float(spearman.statistic),
        "spearman_p": float(spearman.pvalue),
        "n": int(a.size),
    }


def spread(values: ArrayLike) -> dict[str, float | int]:
    """Min, max, mean and sample standard deviation (ddof = 1) of a metric over prompt templates.

    Returns:
        ``{"min", "max", "mean", "std", "n"}``; ``std`` is NaN for a single value (undefined).

    Raises:
        ValueError: not 1-D / not finite.
        UndefinedMetricError: no value at all.
    """
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1 or not np.isfinite(a).all():
        raise ValueError("values must be a 1-D array of finite numbers")
    if a.size == 0:
        raise UndefinedMetricError("spread of no values is undefined")
    return {
        "min": float(a.min()),
        "max": float(a.max()),
        "mean": float(a.mean()),
        "std": float(a.std(ddof=1)) if a.size > 1 else float("nan"),
        "n": int(a.size),
    }
