"""Pairwise-judge consistency metrics (Liu et al., "Aligning with Logic", section 2).

Conventions shared by every function here:

* ``prefs[i, j]`` is the model's probability that item i is better than item j when i is
  shown as option A and j as option B; the diagonal is ignored and may hold anything.
* ``prefs[i, j] > 0.5`` picks option A (item i wins), ``< 0.5`` option B; ``== 0.5`` is a **tie**,
  left out like a missing judgement and counted (:func:`count_ties`; see :mod:`._ties` for why).
* ``neg_prefs[i, j]`` is the probability that, asked the negated question ("which is
  worse?"), the model picks option A (= i).
* Missing judgements are NaN off-diagonal entries: ``nan_policy="raise"`` (default) rejects them,
  ``"omit"`` leaves out the pairs that need them. When nothing is left a metric raises
  :class:`UndefinedMetricError` (a ValueError): it is undefined, never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike, NDArray

from ._ties import TIE, count_ties, decided, first_wins
from ._validation import (
    NanPolicy,
    UndefinedMetricError,
    check_int,
    check_k,
    check_nan_policy,
    validate_human_scores,
    validate_prefs,
)
from .transitivity import relation_graph, transitivity

__all__ = [
    "HUMAN_TIES",
    "commutativity",
    "count_ties",
    "human_agreement",
    "negation_invariance",
    "pairwise_consistency",
]


def _fraction(hits: NDArray[np.bool_], valid: NDArray[np.bool_], undefined_why: str) -> float:
    """Mean of ``hits`` over the ``valid`` entries; raise if there are none."""
    if not valid.any():
        raise UndefinedMetricError(undefined_why)
    return float(hits[valid].mean())


def commutativity(prefs: ArrayLike, *, nan_policy: NanPolicy = "raise") -> float:
    """Commutativity s_comm: how often the winner survives swapping the presentation order.

    Paper eq. 2: s_comm = 2 / (N (N - 1)) * sum_{i<j} 1(F(x_i, x_j) = F(x_j, x_i)), where F
    returns the chosen item. Pair {i, j} agrees when
    ``(prefs[i, j] > 0.5) == (prefs[j, i] < 0.5)``, i.e. the same item wins in both orders.

    Ties: a pair is counted only when both orders pick an option. A tie (``== 0.5``) in either
    order means F returned no item there, so equality with the other order is undefined and the
    pair is left out of both sum and normaliser, as a missing judgement is:
    s_comm = |{i < j decided in both orders and agreeing}| / |{i < j decided in both orders}|.
    If no pair is left the metric is undefined (a judge whose every reading ties scores neither
    0 nor 1).

    Args:
        prefs: N x N preference probabilities (module conventions), N >= 2.
        nan_policy: ``"omit"`` drops pairs where ``prefs[i, j]`` or ``prefs[j, i]`` is NaN and
            normalises by the number of remaining pairs instead of N (N - 1) / 2.

    Returns:
        s_comm in [0, 1]; 1 = fully order-invariant.

    Raises:
        ValueError: invalid ``prefs`` / ``nan_policy``, or NaN with ``nan_policy="raise"``.
        UndefinedMetricError: every pair has a missing or tied judgement in one of its orders.
    """
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    rows, cols = np.triu_indices(matrix.shape[0], k=1)
    forward, backward = matrix[rows, cols], matrix[cols, rows]
    valid = decided(forward) & decided(backward)
    agree = first_wins(forward) == (backward < TIE)
    return _fraction(agree, valid, "commutativity is undefined: every pair has a missing or tied judgement in prefs")


def negation_invariance(prefs: ArrayLike, neg_prefs: ArrayLike, *, nan_policy: NanPolicy = "raise") -> float:
    """Negation invariance s_neg: how often the negated question flips the answer correctly.

    Paper eq. 3: s_neg = 1 / (N (N - 1)) * sum_{i != j} 1(F_neg(x_i, x_j) = not F(x_i, x_j)).
    The ordered pair (i, j) is consistent when the model picks option A for exactly one of
    "which is better" and "which is worse": ``(prefs[i, j] > 0.5) != (neg_prefs[i, j] > 0.5)``.

    Ties: the ordered pair is counted only when both questions pick an option; a tie
    (``== 0.5``) in either leaves it out, as a missing judgement does:
    s_neg = |{(i, j) decided in both and flipped}| / |{(i, j) decided in both}|; undefined if
    none is left.

    Args:
        prefs: N x N preference probabilities for the original question.
        neg_prefs: N x N probabilities of picking option A for the negated question, same shape.
        nan_policy: ``"omit"`` drops ordered pairs where either matrix is NaN and normalises by
            the number of remaining pairs instead of N (N - 1).

    Returns:
        s_neg in [0, 1]; 1 = the model always reverses its answer under negation.

    Raises:
        ValueError: invalid or differently shaped inputs, or NaN with ``nan_policy="raise"``.
        UndefinedMetricError: no ordered pair has both judgements decided (not missing, not tied).
    """
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    negated = validate_prefs(neg_prefs, "neg_prefs", nan_policy)
    if negated.shape != matrix.shape:
        raise ValueError(f"neg_prefs must have the same shape as prefs: {negated.shape} vs {matrix.shape}")
    valid = decided(matrix) & decided(negated)
    flipped = first_wins(matrix) != first_wins(negated)
    return _fraction(
        flipped,
        valid,
        "negation invariance is undefined: no pair has both a prefs and a neg_prefs judgement (missing or tied)",
    )


#: How :func:`human_agreement` treats pairs whose human scores are tied.
HUMAN_TIES = ("exclude", "half")


def human_agreement(
    prefs: ArrayLike, human_scores: ArrayLike, *, nan_policy: NanPolicy = "raise", ties: str = "exclude"
) -> float:
    """Human agreement H: pairwise accuracy of the model's judgements against human scores.

    The "H." column of the paper's Table 1. The paper does not say how presentation order or
    tied human scores enter H; the choices here:

    * **Presentation order: both orders count.** Every ordered pair (i, j), i != j, is one
      judgement (item i shown as option A), so
      H = sum_{(i, j) in P} 1[(prefs[i, j] > 0.5) == (s_i > s_j)] / |P|, with P the ordered
      pairs of the ``ties`` rule below whose judgement picks an option.
    * **Tied judgements** (``prefs[i, j] == 0.5``): the judge picked neither item, so the ordered
      pair is left out of P under either ``ties`` rule, as a missing judgement is (a tie is not
      half right: it is no answer). A judge that always answers "A" thus scores 0.5 on
      every untied pair, whatever the truth, rather than 1 or 0 depending on which order happened
      to be shown (the paper collects both orders for s_comm, and scoring one of them would make
      H depend on the item order of the data file). To judge each pair once from both orders
      instead, pass the PairS-calibrated matrix (``pairwise_consistency(..., calibrated=True)``).
    * **Tied human scores** (``ties``):

      - ``"exclude"`` (default): P = the ordered pairs with s_i != s_j; a tied pair has no
        correct answer for a forced-choice judge, so it says nothing about agreement. This is
        the usual pairwise accuracy (e.g. Kendall-style concordance ignores ties) and keeps H
        comparable across data sets with different tie rates (SummEval's 1-5 coherence scores
        and NovelEval's 0-3 grades tie often; CaTeRS' event orders never do).
      - ``"half"``: P = every ordered pair, a tied pair scoring 1/2 whatever the judge says
        (the expected credit of a coin flip, as in pairwise accuracy with half credit for
        ties); H then shrinks towards 1/2 as ties become frequent.

    Args:
        prefs: N x N preference probabilities.
        human_scores: length-N finite scores; higher = the item that should win.
        nan_policy: ``"omit"`` also drops pairs whose ``prefs[i, j]`` is NaN.
        ties: ``"exclude"`` or ``"half"`` (see above).

    Returns:
        H in [0, 1].

    Raises:
        ValueError: invalid inputs, unknown ``ties``, or NaN in ``prefs`` with
            ``nan_policy="raise"``.
        UndefinedMetricError: (``"exclude"``) all human scores tied, or every counted pair has
            a missing or tied judgement.
    """
    check_nan_policy(nan_policy)
    if ties not in HUMAN_TIES:
        raise ValueError(f"ties must be one of {HUMAN_TIES}, got {ties!r}")
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    scores = validate_human_scores(human_scores, matrix.shape[0])
    untied = scores[:, None] != scores[None, :]
    judged = decided(matrix)
    correct = first_wins(matrix) == (scores[:, None] > scores[None, :])
    if ties == "half":
        if not judged.any():
            raise UndefinedMetricError(
                "human agreement is undefined: every pair has a missing or tied judgement in prefs"
            )
        credit = np.where(untied, correct.astype(float), 0.5)
        return float(credit[judged].mean())
    if not untied.any():
        raise UndefinedMetricError("human_scores are all tied; human agreement is undefined")
    return _fraction(
        correct,
        untied & judged,
        "human agreement is undefined: every pair with distinct human_scores has a missing or tied judgement in prefs",
    )


def _calibrate(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """PairS calibration: average both orders, p[i, j] = (prefs[i, j] + 1 - prefs[j, i]) / 2.

    Computed as 0.5 + (prefs - prefs.T) / 2, equal in exact arithmetic: the difference is
    exactly antisymmetric in floating point, so p[i, j] and p[j, i] stay on opposite sides of
    0.5 instead of rounding onto the same side. NaN in either order gives NaN (pair missing).
    """
    out: npt.NDArray[np.float64] = 0.5 + (matrix - matrix.T) / 2.0
    return out


def _check_ks(ks: object, n_items: int) -> list[int]:
    # An empty sequence is allowed: callers drop the K > N sizes for small instances.
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise ValueError(f"ks must be a sequence of subset sizes such as (3, 5), got {ks!r}")
    return [check_k(k, n_items, name="ks") for k in ks]


def pairwise_consistency(
    prefs: ArrayLike,
    neg_prefs: ArrayLike | None = None,
    human_scores: ArrayLike | None = None,
    *,
    ks: Sequence[int] = (3, 5),
    calibrated: bool = False,
    samples: int | None = None,
    seed: int = 0,
    nan_policy: NanPolicy = "raise",
    human_ties: str = "exclude",
) -> dict[str, float | None]:
    """All of the paper's consistency metrics for ONE instance (one set of N items).

    * ``s_tran_{k}`` for each k in ``ks``: :func:`transitivity` (eq. 1) of the relation graph
      built by Algorithm 1 from the upper triangle (i < j) of ``prefs`` (:func:`relation_graph`).
    * ``s_comm``: :func:`commutativity` (eq. 2).
    * ``s_neg``: :func:`negation_invariance` (eq. 3), only when ``neg_prefs`` is given.
    * ``human_agreement``: :func:`human_agreement` (both presentation orders count; tied human
      scores as ``human_ties``), only when ``human_scores`` is given.
    * ``n_items``: N.

    With ``calibrated=True`` the PairS calibration (Liu et al., 2024; Zheng et al., 2023) is
    applied first: each pair is judged from the average of both presentation orders,
    p[i, j] = (prefs[i, j] + 1 - prefs[j, i]) / 2, and likewise for ``neg_prefs``; every
    metric is then computed from the calibrated matrices. Since p[j, i] = 1 - p[i, j],
    ``s_comm`` is then 1 by construction wherever it is defined; it measures nothing and is
    reported only for a uniform schema. A calibrated tie p[i, j] = 0.5 (prefs[i, j] == prefs[j, i]:
    the judge gave option A the same probability in both orders) is left out of every metric like
    any other tie. A pair missing in either order is missing after calibration.

    Ties (module docstring): ``s_tran`` gives a tied pair no edge (a partial graph, as for a
    missing judgement; :func:`relation_graph`), and ``s_comm``, ``s_neg`` and
    ``human_agreement`` leave out the pairs that need a tied judgement. Count them with
    :func:`count_ties`.

    Because Algorithm 1 reads only i < j, uncalibrated ``s_tran`` of a judge that is not
    commutative depends on the order of the items; the other metrics do not.

    Args:
        prefs: N x N preference probabilities (see the module docstring).
        neg_prefs: optional N x N probabilities for the negated question.
        human_scores: optional length-N human scores (higher = better).
        ks: subset sizes K for s_tran(K), each 3 <= K <= N; the paper reports K = 5. May be
            empty (no ``s_tran_*`` keys), e.g. for an instance with fewer than 3 items.
        calibrated: apply the PairS calibration first.
        samples: None for exact s_tran, or the paper's sampled estimator with M = ``samples``.
        seed: RNG seed for the sampled estimator (the same seed is used for every K).
        nan_policy: ``"raise"``: any off-diagonal NaN raises and so does every undefined metric.
            ``"omit"``: missing judgements are left out (for s_tran: no edge for that pair) and
            a metric that is undefined for this instance (e.g. every pair unparseable, or all
            human scores tied) is returned as ``None`` (never as 0 or 1), so that callers can
            drop it from an average over instances.
        human_ties: :func:`human_agreement`'s ``ties``: ``"exclude"`` (default) or ``"half"``.

    Returns:
        Dict with keys ``n_items``, ``s_tran_{k}`` for each k, ``s_comm``, and optionally
        ``s_neg`` and ``human_agreement``.

    Raises:
        ValueError: any invalid input (checked up front, before computing), including k > N;
            with ``nan_policy="raise"`` also any NaN or undefined metric.
    """
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    n_items = matrix.shape[0]
    negated = _check_negated(neg_prefs, matrix, nan_policy)
    scores = None if human_scores is None else validate_human_scores(human_scores, n_items)
    k_values = _check_ks(ks, n_items)
    _check_settings(samples, seed, human_ties, calibrated)

    if calibrated:
        matrix = _calibrate(matrix)
        negated = None if negated is None else _calibrate(negated)

    result: dict[str, float | None] = {"n_items": n_items}
    wins = relation_graph(matrix, nan_policy=nan_policy)
    for k in k_values:
        result[f"s_tran_{k}"] = _guarded(nan_policy, transitivity, wins, k, samples=samples, seed=seed)
    result["s_comm"] = _guarded(nan_policy, commutativity, matrix, nan_policy=nan_policy)
    if negated is not None:
        result["s_neg"] = _guarded(nan_policy, negation_invariance, matrix, negated, nan_policy=nan_policy)
    if scores is not None:
        result["human_agreement"] = _guarded(
            nan_policy, human_agreement, matrix, scores, nan_policy=nan_policy, ties=human_ties
        )
    return result


def _check_negated(
    neg_prefs: ArrayLike | None, matrix: NDArray[np.float64], nan_policy: NanPolicy
) -> NDArray[np.float64] | None:
    """``neg_prefs`` validated as a preference matrix of the shape of ``prefs`` (``None`` if not given)."""
    if neg_prefs is None:
        return None
    negated = validate_prefs(neg_prefs, "neg_prefs", nan_policy)
    if negated.shape != matrix.shape:
        raise ValueError(f"neg_prefs must have the same shape as prefs: {negated.shape} vs {matrix.shape}")
    return negated


def _check_settings(samples: int | None, seed: int, human_ties: str, calibrated: bool) -> None:
    """The scalar settings of :func:`pairwise_consistency`, checked before anything is computed."""
    if samples is not None:
        check_int(samples, "samples", minimum=1)
    check_int(seed, "seed", minimum=0)
    if human_ties not in HUMAN_TIES:
        raise ValueError(f"human_ties must be one of {HUMAN_TIES}, got {human_ties!r}")
    # bool("false") is True: a string here would silently turn the calibration on.
    if not isinstance(calibrated, (bool, np.bool_)):
        raise ValueError(f"calibrated must be True or False, got {calibrated!r}")


def _guarded(policy: NanPolicy, metric: Callable[..., float], /, *args: object, **kwargs: object) -> float | None:
    """``metric(*args, **kwargs)``; under the ``nan_policy`` ``policy="omit"`` a metric undefined for this
    instance is ``None``. Only "undefined for this instance" becomes ``None``; input errors were raised up front.
    """
    try:
        return metric(*args, **kwargs)
    except UndefinedMetricError:
        if policy == "raise":
            raise
        return None
