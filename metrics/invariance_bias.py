"""Selection bias of a multiple-choice model over displayed positions (corpus statistics, PriDe).

Layout as in :mod:`~logic_consistency.metrics.invariance`. Corpus statistics are ratios of sums
over questions; each comes with a percentile bootstrap interval over questions
(:func:`~logic_consistency.metrics.bootstrap_summary`: resampling question indices, so the variants of
one question stay together). Reference: Zheng et al. (ICLR 2024), "Large Language Models Are Not
Robust Multiple Choice Selectors": RStd (section 2.2), PriDe (section 4, and the authors' code
``chujiezheng/LLM-MCQ-Bias``, ``code/debias_utils.py`` / ``code/debias_pride.py``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._invariance_input import UNPARSEABLE, check_gold, check_perms, check_picks
from ._validation import UndefinedMetricError, check_int
from .bootstrap import bootstrap_summary

FloatArray = NDArray[np.float64]
#: A statistic of summed per-question counts: (numerators, denominators), each (resamples x m).
SumStatistic = Callable[[FloatArray, FloatArray], FloatArray]


@dataclass(frozen=True)
class Estimate:
    """A corpus statistic, its percentile bootstrap interval over questions and its bootstrap standard error.

    ``low``, ``high`` and ``stderr`` come from the same resamples of whole questions
    (:func:`~logic_consistency.metrics.bootstrap_summary`). All three are NaN when some resample
    leaves the statistic undefined (too few questions, e.g. none with its gold at some position):
    no interval, never a made-up one.
    """

    value: float
    low: float
    high: float
    #: Sample standard deviation of the resampled statistic (lm-eval's ``bootstrap_stderr`` convention).
    stderr: float = math.nan


def displayed_positions(options: ArrayLike, perms: ArrayLike, name: str = "picks") -> NDArray[np.int64]:
    """Displayed position of original option ``options[q, v]`` under variant v (-1 stays -1).

    Args:
        options: questions x variants original option indices (``picks``, or ``gold`` broadcast).
        perms: questions x variants x k displayed orders.
        name: the argument named in an error message.
    """
    picks = check_picks(options, name)
    order = check_perms(perms, picks.shape)
    check_picks(picks, name, n_options=order.shape[2])
    hits = order == np.where(picks == UNPARSEABLE, 0, picks)[:, :, None]
    return np.where(picks == UNPARSEABLE, UNPARSEABLE, hits.argmax(axis=2))


def _one_hot(positions: NDArray[np.int64], k: int) -> FloatArray:
    """(questions x k) counts of each displayed position over the variants (-1 counts nowhere)."""
    return np.asarray((positions[:, :, None] == np.arange(k)).sum(axis=1), dtype=np.float64)


def _weights(index_rows: FloatArray, n_questions: int) -> FloatArray:
    """Resampled question indices (resamples x n) as counts per question (resamples x n)."""
    rows = np.atleast_2d(index_rows).astype(np.int64)
    offsets = (np.arange(rows.shape[0])[:, None] * n_questions + rows).ravel()
    return (
        np.bincount(offsets, minlength=rows.shape[0] * n_questions)
        .reshape(rows.shape[0], n_questions)
        .astype(np.float64)
    )


def _estimate(
    numerators: FloatArray, denominators: FloatArray, statistic: SumStatistic, ci: tuple[float, int, int]
) -> Estimate:
    """``statistic`` of the column sums, and its bootstrap interval over questions (rows)."""
    n_questions = numerators.shape[0]
    value = float(statistic(numerators.sum(axis=0)[None, :], denominators.sum(axis=0)[None, :])[0])
    if not np.isfinite(value):
        raise UndefinedMetricError("the statistic is undefined on these questions (no value to count)")
    if n_questions < 2:
        return Estimate(value, value, value, 0.0)  # every resample is this one question

    def resampled(index_rows: FloatArray, axis: int = -1) -> FloatArray:
        weights = _weights(index_rows, n_questions)
        return statistic(weights @ numerators, weights @ denominators)

    confidence, n_resamples, seed = ci
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # reported as a NaN interval below
            summary = bootstrap_summary(
                np.arange(n_questions, dtype=np.float64),
                statistic=resampled,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
    except ValueError as error:
        if "NaN" not in str(error):
            raise
        # Some resample leaves the statistic undefined (e.g. no question with its gold at p):
        # the interval cannot be computed on so few questions, and says so.
        return Estimate(value, math.nan, math.nan, math.nan)
    return Estimate(value, summary.low, summary.high, summary.stderr)


def _ratio(column: int) -> SumStatistic:
    def statistic(num: FloatArray, den: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(num[:, column] / den[:, column], dtype=np.float64)

    return statistic


def _correct_by_gold_position(
    picks: ArrayLike, gold: ArrayLike, perms: ArrayLike, variants: slice
) -> tuple[FloatArray, FloatArray]:
    """Per question and displayed gold position: (right answers, variants), over ``variants``."""
    checked = check_picks(picks)
    gold_checked = check_gold(gold, checked.shape[0])
    order = check_perms(perms, checked.shape)
    check_picks(checked, n_options=order.shape[2])
    gold_grid = np.broadcast_to(gold_checked[:, None], checked.shape)
    gold_at = displayed_positions(gold_grid, order, "gold")[:, variants]
    right = np.where(checked[:, variants] == gold_grid[:, variants], gold_at, UNPARSEABLE)
    k = order.shape[2]
    return _one_hot(right, k), _one_hot(gold_at, k)


def accuracy_by_gold_position(
    picks: ArrayLike,
    gold: ArrayLike,
    perms: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[Estimate | None]:
    """Accuracy with the gold at each displayed position, over every (question, variant).

    acc_p = #{(q, v) : gold shown at p, picks[q, v] = gold[q]} / #{(q, v) : gold shown at p};
    None for a position that never shows the gold. Under ``swap_gold`` this is PriDe's "moving the
    golden answer" experiment (Zheng et al. 2024, Figure 1). Ideal: equal at every position.

    Returns:
        One :class:`Estimate` (or None) per displayed position.
    """
    right, shown = _correct_by_gold_position(picks, gold, perms, slice(None))
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    return [_estimate(right, shown, _ratio(p), ci) if shown[:, p].sum() else None for p in range(right.shape[1])]


def _rstd_statistic(num: FloatArray, den: FloatArray) -> FloatArray:
    """100 x population standard deviation of the recalls of the positions that hold a gold; NaN for a
    row (a resample) where fewer than 2 positions hold one, as :func:`rstd` is undefined there."""
    shown = den > 0
    count = shown.sum(axis=1)
    recalls = np.where(shown, num / np.where(shown, den, 1.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = recalls.sum(axis=1) / count
        variance = np.where(shown, (recalls - mean[:, None]) ** 2, 0.0).sum(axis=1) / count
    return np.asarray(np.where(count >= 2, 100.0 * np.sqrt(variance), np.nan), dtype=np.float64)


def rstd(
    picks: ArrayLike,
    gold: ArrayLike,
    perms: ArrayLike,
    *,
    balanced: bool = False,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Estimate:
    """RStd: the standard deviation of the recall of each gold position, x 100 (PriDe's selection bias).

    recall_p = #{right answers with the gold shown at p} / #{answers with the gold shown at p};
    RStd = 100 * sqrt(1/|P| * sum_{p in P} (recall_p - mean recall)^2) over the positions P that
    show a gold (population standard deviation, ``np.std`` as in the authors' ``debias_pride.py``).
    ``balanced=False`` reads the original order only (variant 0: PriDe's definition, sensitive to
    how the dataset's golds fall over the positions); ``balanced=True`` reads every variant and
    requires each question to show its gold equally often at every position (``cyclic``,
    ``swap_gold``, all permutations), so the gold distribution of the dataset drops out. An
    always-one-letter judge scores 100 * sqrt(k - 1) / k (100 * sqrt(3) / 4 for k = 4); ideal 0.

    Raises:
        ValueError: invalid input; ``balanced=True`` on variants that are not balanced.
        UndefinedMetricError: fewer than 2 positions show a gold.
    """
    variants = slice(None) if balanced else slice(0, 1)
    right, shown = _correct_by_gold_position(picks, gold, perms, variants)
    if balanced and (shown != shown[:, :1]).any():
        q = int(np.argwhere((shown != shown[:, :1]).any(axis=1))[0, 0])
        raise ValueError(
            f"rstd(balanced=True) needs every question's gold shown equally often at every position; "
            f"question {q} shows it {shown[q].astype(int).tolist()} times (use cyclic, swap_gold or permutations)"
        )
    if (shown.sum(axis=0) > 0).sum() < 2:
        raise UndefinedMetricError("RStd is undefined: fewer than 2 displayed positions ever show a gold")
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    return _estimate(right, shown, _rstd_statistic, ci)


def _pick_counts(picks: ArrayLike, perms: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Per question: parsed picks at each displayed position, and parsed picks (repeated per position)."""
    at = _one_hot(displayed_positions(picks, perms), np.asarray(perms).shape[2])
    return at, np.repeat(at.sum(axis=1, keepdims=True), at.shape[1], axis=1)


def pick_rates(
    picks: ArrayLike, perms: ArrayLike, *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> list[Estimate]:
    """Pick rate per displayed position: the share of parsed answers that pick position p.

    rate_p = #{(q, v) : picks[q, v] shown at p} / #{(q, v) : picks[q, v] parsed}. Ideal 1/k at
    every position when each question shows its gold equally often at every position (``cyclic``);
    an always-one-letter judge scores 1 at its letter.

    Raises:
        UndefinedMetricError: no answer parsed.
    """
    at, parsed = _pick_counts(picks, perms)
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    return [_estimate(at, parsed, _ratio(p), ci) for p in range(at.shape[1])]


def pick_rate(
    picks: ArrayLike,
    perms: ArrayLike,
    position: int,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Estimate:
    """:func:`pick_rates` at one displayed ``position`` only (one bootstrap instead of k).

    Raises:
        ValueError: ``position`` outside 0..k-1.
        UndefinedMetricError: no answer parsed.
    """
    at, parsed = _pick_counts(picks, perms)
    position = check_int(position, "position", minimum=0)
    if position >= at.shape[1]:
        raise ValueError(f"position must be < {at.shape[1]} (the number of options), got {position}")
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    return _estimate(at, parsed, _ratio(position), ci)


def _kl_statistic(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = num / den
    uniform = np.full(rates.shape[1], 1.0 / rates.shape[1])
    return np.asarray(stats.entropy(rates, uniform, axis=1), dtype=np.float64)


def pick_rate_kl(
    picks: ArrayLike, perms: ArrayLike, *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> Estimate:
    """KL divergence of the pick rates from uniform, in nats: sum_p rate_p * ln(k * rate_p).

    ``scipy.stats.entropy(rates, uniform)``. 0 for uniform pick rates (ideal under ``cyclic``);
    ln k for an always-one-letter judge.

    Raises:
        UndefinedMetricError: no answer parsed.
    """
    at, parsed = _pick_counts(picks, perms)
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    return _estimate(at, parsed, _kl_statistic, ci)
