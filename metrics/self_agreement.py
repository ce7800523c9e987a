"""Self-agreement of sampled judgements (Liu et al., "Aligning with Logic", section 3.1, Figure 4).

Self-agreement is "the percentage of outputs that agree with the majority judgment across multiple
samples" (0.5 to 1). ``samples`` has one row per judgement and one column per sample (1.0 = option
A, 0.0 = B, NaN = unparseable). Choices the paper leaves open: unparseable samples are left out of
their row; a row needs :data:`MIN_PARSED` = 2 parsed samples (one sample agrees with itself), rows
with one are counted (:func:`count_single_sample_rows`) and left out; no row left raises. A
majority tie needs no rule for the share (0.5 either way), but the majority judgement
(:func:`majority_choice`) of a tie is missing (NaN), never guessed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import UndefinedMetricError, validate_samples

#: Parsed samples a judgement needs for a self-agreement share (one sample always agrees with itself).
MIN_PARSED = 2


def majority_shares(samples: ArrayLike) -> NDArray[np.float64]:
    """Per judgement, the share of parsed samples that agree with the majority choice.

    share = max(#A, #B) / (#A + #B); NaN for a row with fewer than :data:`MIN_PARSED` parsed
    samples (none, or a single one that trivially agrees with itself).

    Args:
        samples: judgements x samples array of 1.0 / 0.0 / NaN (module conventions).

    Returns:
        1-D array of shares in [0.5, 1] (NaN where undefined).

    Raises:
        ValueError: ``samples`` not 2-D, or values other than 0, 1, NaN.
    """
    values = validate_samples(samples)
    n_a = np.nansum(values, axis=1)
    n_parsed = (~np.isnan(values)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.maximum(n_a, n_parsed - n_a) / n_parsed
    return np.where(n_parsed >= MIN_PARSED, shares, np.nan)


def count_single_sample_rows(samples: ArrayLike) -> int:
    """Judgements with exactly one parsed sample: no self-agreement share, left out of the mean.

    Args:
        samples: judgements x samples array of 1.0 / 0.0 / NaN (module conventions).

    Raises:
        ValueError: invalid ``samples``.
    """
    values = validate_samples(samples)
    return int(((~np.isnan(values)).sum(axis=1) == 1).sum())


def self_agreement(samples: ArrayLike) -> float:
    """Self-agreement: mean over judgements of the share of samples agreeing with the majority.

    self_agreement = 1 / |R| * sum_{r in R} max(#A_r, #B_r) / (#A_r + #B_r), over the rows R with
    at least :data:`MIN_PARSED` = 2 parsed samples (Liu et al., section 3.1; Figure 4 uses 10
    samples at temperature 0.7). Ranges from 0.5 (coin flip) to 1 (every sample agrees).

    Args:
        samples: judgements x samples array of 1.0 / 0.0 / NaN (module conventions).

    Returns:
        Self-agreement in [0.5, 1].

    Raises:
        ValueError: invalid ``samples``.
        UndefinedMetricError: no row has 2 parsed samples.
    """
    shares = majority_shares(samples)
    if np.isnan(shares).all():
        raise UndefinedMetricError(f"self-agreement is undefined: no judgement has {MIN_PARSED} parsed samples")
    return float(np.nanmean(shares))


def majority_choice(samples: ArrayLike) -> NDArray[np.float64]:
    """Majority judgement per row: 1.0 (A), 0.0 (B), or NaN for a tie or no parsed sample.

    Args:
        samples: judgements x samples array of 1.0 / 0.0 / NaN (module conventions).

    Returns:
        1-D array with the majority choice of each row (NaN = no majority; see the module
        docstring for why ties are not broken).

    Raises:
        ValueError: invalid ``samples``.
    """
    values = validate_samples(samples)
    n_a = np.nansum(values, axis=1)
    n_b = (~np.isnan(values)).sum(axis=1) - n_a
    return np.where(n_a > n_b, 1.0, np.where(n_b > n_a, 0.0, np.nan))
