"""PriDe: the prior of a multiple-choice model over option IDs, and its debiased predictions.

Zheng et al. (ICLR 2024), "Large Language Models Are Not Robust Multiple Choice Selectors",
section 4: the observed probability of displayed ID d factorises as prior(d) x content(o), so on
a few estimation questions shown under a balanced set of permutations (every option at every
position equally often, e.g. ``cyclic``) prior_q = softmax(mean_v log P_obs(d | variant v)); the
global prior is the mean of prior_q; any other question is debiased on its original order as
argmax_d log P_obs(d) - log prior(d). Checked against the authors' ``code/debias_utils.py``
(``simple``) and ``code/debias_pride.py`` (chujiezheng/LLM-MCQ-Bias). Layout as in
:mod:`~logic_consistency.metrics.invariance`; ``scores[q, v, p]`` is the log-score of displayed
label p (normalised per variant by a softmax, as the authors normalise probabilities to sum 1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._invariance_input import check_gold, check_perms, check_scores
from ._validation import UndefinedMetricError, check_int
from .invariance_bias import Estimate, _estimate, _ratio

FloatArray = NDArray[np.float64]

#: PriDe's share of estimation questions (``RATIO_PREFIX_SAMPLES`` in the authors' code).
PRIDE_SHARE = 0.05


def _inputs(scores: ArrayLike, perms: ArrayLike) -> tuple[FloatArray, NDArray[np.int64]]:
    order = np.asarray(perms)
    if order.ndim != 3:
        raise ValueError(f"perms must be 3-D (questions x variants x options), got shape {order.shape}")
    checked = check_perms(order, (order.shape[0], order.shape[1]))
    return check_scores(scores, checked.shape), checked


def _balanced(order: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per question: every original option shown equally often at every displayed position."""
    k = order.shape[2]
    counts = (order[:, :, :, None] == np.arange(k)).sum(axis=1)  # questions x position x option
    return np.asarray((counts == counts[:, :1, :1]).all(axis=(1, 2)))


def pride_estimation_set(
    scores: ArrayLike, perms: ArrayLike, share: float = PRIDE_SHARE, seed: int = 0
) -> NDArray[np.bool_]:
    """PriDe's estimation questions: a seeded random ``share`` of the eligible questions (at least one).

    Eligible: every score present and the variants balanced. The count is int(n * share) as in the
    authors' code, at least 1; drawn by ``numpy.random.default_rng(seed)``.

    Raises:
        ValueError: ``share`` outside (0, 1].
        UndefinedMetricError: no question is eligible.
    """
    values, order = _inputs(scores, perms)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < float(share) <= 1.0:
        raise ValueError(f"share must be a number in (0, 1], got {share!r}")
    eligible = np.flatnonzero(~np.isnan(values).any(axis=(1, 2)) & _balanced(order))
    if eligible.size == 0:
        raise UndefinedMetricError("PriDe has no estimation question: none has every score and balanced variants")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    chosen = rng.permutation(eligible)[: max(1, int(values.shape[0] * float(share)))]
    mask = np.zeros(values.shape[0], dtype=bool)
    mask[chosen] = True
    return mask


def _mask(estimation: ArrayLike | None, values: FloatArray, order: NDArray[np.int64]) -> NDArray[np.bool_]:
    mask = np.ones(values.shape[0], dtype=bool) if estimation is None else np.asarray(estimation)
    if mask.dtype.kind != "b" or mask.shape != (values.shape[0],):
        raise ValueError(
            f"estimation must be a boolean mask of shape ({values.shape[0]},), got {mask.dtype} {mask.shape}"
        )
    bad = mask & (np.isnan(values).any(axis=(1, 2)) | ~_balanced(order))
    if estimation is not None and bad.any():
        q = int(np.flatnonzero(bad)[0])
        raise ValueError(f"estimation question {q} lacks a score or its variants are not balanced (use cyclic)")
    mask = mask & ~bad
    if not mask.any():
        raise UndefinedMetricError("PriDe has no estimation question with every score and balanced variants")
    return mask


def question_priors(scores: ArrayLike, perms: ArrayLike) -> FloatArray:
    """Per question, prior_q(d) = softmax_d(1/V * sum_v log softmax(scores[q, v])(d)); NaN rows where a score is missing."""
    values, _ = _inputs(scores, perms)
    return np.asarray(special.softmax(special.log_softmax(values, axis=2).mean(axis=1), axis=1), dtype=np.float64)


def estimated_prior(
    scores: ArrayLike,
    perms: ArrayLike,
    estimation: ArrayLike | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[Estimate]:
    """PriDe's estimated prior over displayed option IDs: the mean of the per-question priors.

    prior(d) = 1/|E| * sum_{q in E} prior_q(d), E the estimation questions (``estimation`` mask;
    None: every question with all scores and balanced variants). Uniform (1/k) for a model without
    ID preference; one per label, each with a bootstrap interval over the questions of E.

    Raises:
        ValueError: invalid input; a masked question lacking scores or balance.
        UndefinedMetricError: no estimation question.
    """
    values, order = _inputs(scores, perms)
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    priors = question_priors(values, order)[_mask(estimation, values, order)]
    return [_estimate(priors, np.ones_like(priors), _ratio(d), ci) for d in range(priors.shape[1])]


def estimated_prior_at(
    scores: ArrayLike,
    perms: ArrayLike,
    position: int,
    estimation: ArrayLike | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Estimate:
    """:func:`estimated_prior` of one displayed ID ``position`` only (one bootstrap instead of k).

    Raises:
        ValueError: as :func:`estimated_prior`; ``position`` outside 0..k-1.
        UndefinedMetricError: no estimation question.
    """
    values, order = _inputs(scores, perms)
    position = check_int(position, "position", minimum=0)
    if position >= order.shape[2]:
        raise ValueError(f"position must be < {order.shape[2]} (the number of options), got {position}")
    ci = (confidence, check_int(n_resamples, "n_resamples", minimum=1), seed)
    priors = question_priors(values, order)[_mask(estimation, values, order)]
    return _estimate(priors, np.ones_like(priors), _ratio(position), ci)


def pride_debiased_accuracy(
    scores: ArrayLike, perms: ArrayLike, gold: ArrayLike, estimation: ArrayLike | None = None
) -> FloatArray:
    """Per question, 1 if PriDe's debiased prediction is the gold (NaN where the scores are missing).

    An estimation question q in E is predicted by its permutation-averaged content probability,
    argmax_o 1/V * sum_v P_obs(position of o under v); any other question on its original order by
    argmax_d log P_obs(d | variant 0) - log prior(d), mapped to the option shown at d. The mean over
    questions is PriDe's debiased accuracy. ``estimation`` (mask): default every eligible question
    (the permutation average everywhere); :func:`pride_estimation_set` draws PriDe's 5 %. Ideal 1.
    """
    values, order = _inputs(scores, perms)
    gold_checked = check_gold(gold, values.shape[0], order.shape[2])
    mask = _mask(estimation, values, order)
    observed = special.softmax(values, axis=2)
    prior = question_priors(values, order)[mask].mean(axis=0)
    content = np.zeros(observed.shape[0:1] + observed.shape[2:3])
    np.add.at(content, (np.arange(order.shape[0])[:, None, None], order), observed)
    debiased_position = (np.log(observed[:, 0, :]) - np.log(prior)).argmax(axis=1)
    prediction = np.where(mask, content.argmax(axis=1), order[np.arange(order.shape[0]), 0, debiased_position])
    missing = np.isnan(values[:, 0, :]).any(axis=1) | (mask & np.isnan(values).any(axis=(1, 2)))
    return np.where(missing, np.nan, (prediction == gold_checked).astype(np.float64))
