"""Percentile bootstrap confidence intervals (and standard errors) over per-instance values (``scipy.stats.bootstrap``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._validation import check_int

#: Resampled values held in memory at once; resamples are drawn in blocks of this many values.
_BLOCK_VALUES = 1 << 22


def _checked_values(values: ArrayLike) -> NDArray[np.float64]:
    """The per-instance values as a 1-D float array of at least 2 finite values, else ``ValueError``."""
    data = np.asarray(values)
    if data.dtype.kind not in "biuf":
        raise ValueError(f"values must be a real numeric array, got dtype {data.dtype}")
    if data.ndim != 1:
        raise ValueError(f"values must be 1-D (one value per instance), got shape {data.shape}")
    if data.shape[0] < 2:
        raise ValueError(f"values must hold at least 2 values to resample, got {data.shape[0]}")
    checked: NDArray[np.float64] = data.astype(np.float64)
    if np.isnan(checked).any():
        raise ValueError("values contains NaN; drop undefined instances before bootstrapping")
    if not np.isfinite(checked).all():
        raise ValueError("values contains inf")
    return checked


def _check_confidence(confidence: Any) -> None:
    is_number = isinstance(confidence, (int, float, np.number))
    if isinstance(confidence, (bool, np.bool_)) or not is_number:
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _probe(statistic: Any, data: NDArray[np.float64]) -> NDArray[np.float64]:
    """One call on the data itself: checks the statistic's interface before scipy resamples with it."""
    if not callable(statistic):
        raise ValueError(f"statistic must be callable, got {statistic!r}")
    try:
        probe = np.asarray(statistic(data[None, :], axis=1), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"statistic must accept an axis keyword like numpy.mean; calling it with axis=1 failed: {error}"
        ) from error
    if probe.shape != (1,):
        raise ValueError(
            f"statistic(x, axis=1) must return one value per resample (shape (1,)), got shape {probe.shape}"
        )
    return probe


class BootstrapSummary(NamedTuple):
    """A percentile bootstrap interval and the bootstrap standard error, from the same resamples."""

    low: float
    high: float
    #: Sample standard deviation (ddof = 1) of the resampled statistics: lm-eval's ``bootstrap_stderr``.
    stderr: float


def bootstrap_ci(
    values: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    statistic: Callable[..., NDArray[np.float64]] = np.mean,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``statistic`` over instances.

    :func:`scipy.stats.bootstrap` with ``method="percentile"``: ``n_resamples`` resamples of the n
    values with replacement drawn from ``numpy.random.default_rng(seed)``, the statistic evaluated
    on each (vectorised, in batches of resamples so that memory stays bounded for large n), and the
    (1 - c)/2 and (1 + c)/2 quantiles of the resampled statistics returned (Efron's percentile
    interval, c = ``confidence``; Efron & Tibshirani 1993, ch. 13). Use it to put error bars on the
    paper-style averages of s_tran / s_comm / s_neg / H over instances.

    Args:
        values: 1-D array of per-instance values (e.g. one s_tran(5) per instance); drop
            ``None`` results of :func:`pairwise_consistency` first.
        confidence: confidence level c, strictly between 0 and 1.
        n_resamples: number of bootstrap resamples, >= 1.
        seed: seed for ``numpy.random.default_rng``.
        statistic: reduction accepting an ``axis`` keyword, like ``numpy.mean`` or
            ``numpy.median``; called on a 2-D block with ``axis=1``.

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: ``values`` not 1-D, non-numeric, containing NaN or inf, or with fewer than 2
            values; ``confidence`` outside (0, 1); ``n_resamples`` or ``seed`` not valid
            integers; ``statistic`` not callable, failing on ``axis=1``, or giving non-finite or
            wrongly shaped output.
    """
    summary = bootstrap_summary(values, confidence=confidence, n_resamples=n_resamples, seed=seed, statistic=statistic)
    return summary.low, summary.high


def bootstrap_summary(
    values: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    statistic: Callable[..., NDArray[np.float64]] = np.mean,
) -> BootstrapSummary:
    """:func:`bootstrap_ci`'s interval and, from the same resamples, the bootstrap standard error.

    stderr = sqrt(1/(B - 1) * sum_b (theta_b - mean_b theta_b)^2) over the B = ``n_resamples``
    resampled statistics theta_b (scipy's ``standard_error``), the convention of lm-eval's own
    ``bootstrap_stderr`` (``sample_stddev`` of its replicates). 0 when every value is equal; NaN
    for a single resample.
    Arguments and errors as :func:`bootstrap_ci`.
    """
    data = _checked_values(values)
    _check_confidence(confidence)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    probe = _probe(statistic, data)
    n_values = data.shape[0]
    if np.ptp(data) == 0.0:
        # Every resample equals the data: the interval is the point (scipy would warn of degenerate data).
        value = float(probe[0])
        return BootstrapSummary(value, value, 0.0)
    with warnings.catch_warnings():
        if n_resamples < 2:  # scipy's standard error of one resample (ddof = 1) warns; reported as NaN below
            warnings.filterwarnings("ignore", "Degrees of freedom <= 0", RuntimeWarning)
            warnings.filterwarnings("ignore", "invalid value encountered in scalar divide", RuntimeWarning)
        result = stats.bootstrap(
            (data,),
            lambda sample, axis=-1: statistic(sample, axis=axis),
            n_resamples=n_resamples,
            batch=max(1, _BLOCK_VALUES // n_values),  # bounds memory for large n
            vectorized=True,
            confidence_level=float(confidence),
            method="percentile",
            rng=rng,
        )
    low, high = result.confidence_interval
    # NaN for a single resample (no spread to measure); any resample's NaN shows in the quantiles.
    stderr = float(result.standard_error) if n_resamples > 1 else math.nan
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("statistic returned NaN or inf on some resamples")
    if statistic is np.mean:
        # A resampled mean lies in [min, max]; scipy's summation can land one ulp outside it.
        low, high = max(low, data.min()), min(high, data.max())
    return BootstrapSummary(float(low), float(high), stderr)
