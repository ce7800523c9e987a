"""Rank aggregation from pairwise comparisons (Liu et al., "Aligning with Logic", section 4.1 and
Appendix N): win-loss rate, Elo rating and Bradley-Terry, plus Spearman correlation with human
scores (the measure of section 5 / Table 4).

Input convention: a list of comparisons given as two equal-length integer arrays, ``winners[c]``
beat ``losers[c]`` in comparison c, over items ``0 .. n_items - 1``. Comparisons may be sparse
(most pairs never compared), repeated and contradictory. :func:`comparisons_from_prefs` turns a
pairwise task's preference matrix into this form (every judged ordered pair is one comparison).

Every estimator returns one score per item (higher = better) and NaN for an item that takes part
in no comparison: it has no estimate, and is neither ranked first nor last.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._ties import decided, first_wins
from ._validation import NanPolicy, UndefinedMetricError, check_int, check_nan_policy, validate_prefs


def _validate_comparisons(
    winners: ArrayLike, losers: ArrayLike, n_items: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    n_items = check_int(n_items, "n_items", minimum=1)
    arrays = []
    for name, value in (("winners", winners), ("losers", losers)):
        array = np.asarray(value)
        if array.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
        if array.size and array.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integer item indices, got dtype {array.dtype}")
        array = array.astype(np.int64)
        if array.size and (array.min() < 0 or array.max() >= n_items):
            raise ValueError(f"{name} must hold item indices in 0..{n_items - 1}")
        arrays.append(array)
    win, lose = arrays
    if win.shape != lose.shape:
        raise ValueError(f"winners and losers must have the same length: {win.size} vs {lose.size}")
    if (win == lose).any():
        raise ValueError(f"an item cannot beat itself (comparison {int(np.argmax(win == lose))})")
    return win, lose


def comparisons_from_prefs(
    prefs: ArrayLike, *, nan_policy: NanPolicy = "raise"
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every judged ordered pair (i, j), i != j, of a preference matrix as one comparison.

    ``prefs[i, j] > 0.5`` means i beat j, ``< 0.5`` that j beat i; a tie (``== 0.5``) is no
    comparison, like a missing judgement (the paper's Algorithm 1 writes ">= 1/2", which would
    score a tie as a win for the first-shown item; see :mod:`~logic_consistency.metrics._ties`).
    Both presentation
    orders count, so a pair judged in both orders contributes two comparisons (possibly
    contradicting each other, for a judge that is not commutative).

    Args:
        prefs: N x N preference probabilities (see :mod:`~logic_consistency.metrics.pairwise`).
        nan_policy: ``"omit"`` skips missing (NaN) judgements.

    Returns:
        ``(winners, losers)`` index arrays, in row-major order of (i, j).
    """
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    rows, cols = np.nonzero(decided(matrix))  # diagonal is NaN after validation
    i_wins = first_wins(matrix[rows, cols])
    return np.where(i_wins, rows, cols), np.where(i_wins, cols, rows)


def win_loss_rate(winners: ArrayLike, losers: ArrayLike, n_items: int) -> NDArray[np.float64]:
    """Win-loss rate per item: (wins - losses) / comparisons taken part in (paper section 4.1).

    The paper's REPAIR default: independent of the order of the comparisons and usable with
    sparse data, but blind to indirect (transitive) evidence: from {A > B, B > C, C > D} it gives
    A > B = C > D (Appendix N). Equal rates are ties (see the REPAIR tool for how ties are used).

    Args:
        winners: winner index of each comparison.
        losers: loser index of each comparison.
        n_items: number of items N.

    Returns:
        Length-N array in [-1, 1]; NaN for items in no comparison.

    Raises:
        ValueError: mismatched lengths, indices out of range, or an item beating itself.
    """
    win, lose = _validate_comparisons(winners, losers, n_items)
    wins = np.bincount(win, minlength=n_items).astype(np.float64)
    losses = np.bincount(lose, minlength=n_items).astype(np.float64)
    played = wins + losses
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(played > 0, (wins - losses) / played, np.nan)


def elo_ratings(
    winners: ArrayLike,
    losers: ArrayLike,
    n_items: int,
    *,
    k_factor: float = 32.0,
    initial: float = 1000.0,
    scale: float = 400.0,
) -> NDArray[np.float64]:
    """Elo ratings after playing the comparisons once, in the given order (Elo & Sloan, 1978).

    For each comparison (w beats l): E_w = 1 / (1 + 10 ** ((R_l - R_w) / scale)),
    R_w += k_factor * (1 - E_w), R_l -= k_factor * (1 - E_w). The paper does not state its
    constants; these are the usual chess values (K = 32, start 1000, scale 400). As Appendix N
    notes, the result depends on the order of the comparisons.

    Args:
        winners: winner index of each comparison, in playing order.
        losers: loser index of each comparison.
        n_items: number of items N.
        k_factor: update step K > 0.
        initial: starting rating of every item.
        scale: logistic scale > 0.

    Returns:
        Length-N ratings; NaN for items in no comparison.

    Raises:
        ValueError: invalid comparisons or non-positive ``k_factor`` / ``scale``.
    """
    win, lose = _validate_comparisons(winners, losers, n_items)
    if not k_factor > 0 or not scale > 0:
        raise ValueError(f"k_factor and scale must be > 0, got {k_factor!r} and {scale!r}")
    ratings = np.full(n_items, float(initial))
    for winner, loser in zip(win.tolist(), lose.tolist(), strict=True):
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[loser] - ratings[winner]) / scale))
        ratings[winner] += k_factor * (1.0 - expected)
        ratings[loser] -= k_factor * (1.0 - expected)
    seen = np.bincount(np.concatenate([win, lose]), minlength=n_items) > 0
    return np.where(seen, ratings, np.nan)


#: Decimals kept of the Bradley-Terry log-strengths (see :func:`bradley_terry`).
BT_DECIMALS = 6


def bradley_terry(winners: ArrayLike, losers: ArrayLike, n_items: int, *, alpha: float = 0.01) -> NDArray[np.float64]:
    """Bradley-Terry log-strengths by maximum likelihood (Bradley & Terry, 1952).

    Model: P(i beats j) = exp(theta_i) / (exp(theta_i) + exp(theta_j)). Fitted with the
    maintained ``choix`` library (``choix.ilsr_pairwise``, iterative Luce spectral ranking). The
    plain ML estimate does not exist when the comparison graph is not strongly connected (e.g. an
    item that never loses, common with sparse data), so a small regularisation ``alpha`` (choix's
    transition-rate prior) is used by default; ``alpha=0`` gives the unregularised estimate when
    it exists. Appendix N says B-T gives B and C "slightly different scores" for {A > B, A > C};
    B and C are symmetric there, so their ML (and regularised) strengths are equal and any
    difference is convergence noise, which is rounded away here (they stay tied).

    Args:
        winners: winner index of each comparison.
        losers: loser index of each comparison.
        n_items: number of items N.
        alpha: regularisation >= 0.

    Returns:
        Length-N log-strengths (centred); NaN for items in no comparison.

    Raises:
        ValueError: invalid comparisons or negative ``alpha``; no comparison at all.
        RuntimeError: the fit did not converge (from choix).
    """
    import choix  # imported here: only this estimator needs it

    win, lose = _validate_comparisons(winners, losers, n_items)
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    if win.size == 0:
        raise UndefinedMetricError("Bradley-Terry needs at least one comparison")
    data = list(zip(win.tolist(), lose.tolist(), strict=True))
    params = np.asarray(choix.ilsr_pairwise(n_items, data, alpha=alpha), dtype=np.float64)
    # choix stops at an L1 change of 1e-8, so strengths that the data leave equal (e.g. every
    # item winning as often as it loses) come back differing in the last digits; such noise is not
    # evidence and must not become a ranking, so strengths are rounded to BT_DECIMALS decimals.
    params = np.round(params, BT_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    seen = np.bincount(np.concatenate([win, lose]), minlength=n_items) > 0
    return np.where(seen, params, np.nan)


RANKING_METHODS = ("win_loss", "elo", "bradley_terry")


def rank_scores(
    winners: ArrayLike, losers: ArrayLike, n_items: int, *, method: str = "win_loss"
) -> NDArray[np.float64]:
    """Scores by one of :data:`RANKING_METHODS` (``win_loss`` default, as in the paper)."""
    if method == "win_loss":
        return win_loss_rate(winners, losers, n_items)
    if method == "elo":
        return elo_ratings(winners, losers, n_items)
    if method == "bradley_terry":
        return bradley_terry(winners, losers, n_items)
    raise ValueError(f"method must be one of {RANKING_METHODS}, got {method!r}")


def ranking_spearman(scores: ArrayLike, human_scores: ArrayLike, *, nan_policy: NanPolicy = "raise") -> float:
    """Spearman's rank correlation between estimated scores and human scores (scipy.stats).

    rho = Pearson correlation of the (average-tie) ranks, as ``scipy.stats.spearmanr``; the
    measure of PairS (Liu et al. 2024) and of the paper's Table 4.

    Args:
        scores: length-N estimated scores (higher = better); NaN = item without an estimate.
        human_scores: length-N finite human scores.
        nan_policy: ``"omit"`` leaves out items whose score is NaN.

    Returns:
        rho in [-1, 1].

    Raises:
        ValueError: shapes differ, non-finite human scores, or NaN scores with ``"raise"``.
        UndefinedMetricError: fewer than 2 items left, or either side constant (rho undefined).
    """
    check_nan_policy(nan_policy)
    estimate = np.asarray(scores, dtype=np.float64)
    human = np.asarray(human_scores, dtype=np.float64)
    if estimate.ndim != 1 or estimate.shape != human.shape:
        raise ValueError(f"scores and human_scores must be 1-D of equal length, got {estimate.shape} and {human.shape}")
    if not np.isfinite(human).all():
        raise ValueError("human_scores must be finite")
    keep = ~np.isnan(estimate)
    if not keep.all() and nan_policy == "raise":
        raise ValueError(f"scores has {int((~keep).sum())} NaN entries; pass nan_policy='omit'")
    estimate, human = estimate[keep], human[keep]
    if estimate.size < 2 or np.ptp(estimate) == 0 or np.ptp(human) == 0:
        raise UndefinedMetricError(
            "Spearman correlation is undefined: fewer than 2 items, or constant scores or human scores"
        )
    return float(stats.spearmanr(estimate, human).statistic)
