"""Self-agreement of sampled judgements (Liu et al., "Aligning with Logic", section 3.1, Figure 4).

The paper samples chain-of-thought judgements at temperature 0.7 and defines self-agreement as
"the percentage of outputs that agree with the majority judgment across multiple samples",
ranging from 0.5 to 1 (10 samples in Figure 4).

Input convention: ``samples`` is a 2-D array with one row per judgement (one prompt, e.g. one
ordered pair of one instance) and one column per sample; 1.0 = the sample picked option A,
0.0 = option B, NaN = the sample's answer was unparseable.

Choices the paper leaves open (documented here, used by the self-agreement tasks):

* Unparseable samples are left out of their row: the share is taken over the parsed samples of
  the row (counted separately by the caller).
* A row needs at least :data:`MIN_PARSED` = 2 parsed samples: a single parsed sample agrees with
  itself, so its share would be 1.0 by construction and say nothing about stability. A row with
  fewer has no self-agreement and is left out of the mean; the rows with exactly one parsed sample
  are counted (:func:`count_single_sample_rows`, reported as ``n_single_sample``). If no row is
  left the metric is undefined (raises).
* Majority ties (e.g. 5 A and 5 B out of 10): the share of the majority choice is 0.5 whichever
  side is called the majority, so self-agreement needs no tie rule. The *majority judgement*
  (:func:`majority_choice`, used to score s_tran / s_comm / s_neg / H of the majority) has no
  winner on a tie and is returned as missing (NaN), like an unparseable answer, rather than
  guessed; callers count such ties.
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
