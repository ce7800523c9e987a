"""Position bias of a pairwise judge: the suite's own addition, not in Liu et al. (as reported by
AlpacaEval and MT-Bench).

A judge that prefers whichever item is shown first is not commutative (Liu et al., eq. 2) and can
still reach s_tran = 1: "A always wins" is a perfectly transitive relation on the upper triangle
that Algorithm 1 reads. These two numbers say so directly.

Conventions as in :mod:`~logic_consistency.metrics.pairwise`: ``prefs[i, j]`` is P(option A) with
item i shown as option A and item j as option B; the diagonal is ignored; NaN off the diagonal is a
missing (unparseable) judgement; ``prefs[i, j] == 0.5`` exactly is a tie, won by neither option
(:mod:`~logic_consistency.metrics._ties`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._ties import decided, first_wins
from ._validation import NanPolicy, UndefinedMetricError, check_nan_policy, validate_prefs


def _judged(prefs: ArrayLike, nan_policy: NanPolicy, *, ties: bool) -> np.ndarray:
    """The off-diagonal judgements that are not missing; ``ties=False`` also leaves ties out."""
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    keep = decided(matrix) if not ties else ~np.isnan(matrix)  # the diagonal is NaN after validation
    values = matrix[keep]
    if values.size == 0:
        what = "missing" if ties else "missing or a tie"
        raise UndefinedMetricError(f"position bias is undefined: every judgement in prefs is {what}")
    return values


def position_bias(prefs: ArrayLike, *, nan_policy: NanPolicy = "raise") -> float:
    """Share of judgements won by the first-shown option (option A).

    position_bias = 1 / |J| * sum_{(i, j) in J} 1(prefs[i, j] > 0.5), over the decided ordered
    pairs J (i != j, neither missing nor a tie). A tie (``prefs[i, j] == 0.5``) is won by neither
    option, so it is left out of J rather than counted as a win for A (Algorithm 1's ">= 1/2"
    would) or for B; this counts exactly the judgements that the other metrics read as "A wins",
    over the judgements they read at all. Undefined when every judgement is missing or tied (a
    chat judge read with ``top_logprobs=1`` ties everywhere: its position bias is unknown, not 1).

    When every pair is asked in both orders (as the pairwise tasks do), a commutative judge picks
    option A in exactly one of the two orders of each pair, so its position bias is exactly 0.5;
    1.0 means the judge always answers A, 0.0 always B. Reference: Zheng et al. (2023), "Judging
    LLM-as-a-Judge with MT-Bench and Chatbot Arena", section 3.3 (position bias).

    Args:
        prefs: N x N preference probabilities (0/1 for parsed generations).
        nan_policy: ``"raise"`` rejects missing judgements; ``"omit"`` leaves them out.

    Returns:
        Position bias in [0, 1]; 0.5 is unbiased.

    Raises:
        ValueError: invalid ``prefs`` / ``nan_policy``, or NaN with ``nan_policy="raise"``.
        UndefinedMetricError: every judgement is missing or a tie.
    """
    return float(first_wins(_judged(prefs, nan_policy, ties=False)).mean())


def p_first_mean(prefs: ArrayLike, *, nan_policy: NanPolicy = "raise") -> float:
    """Mean probability the judge gives to the first-shown option, over judged ordered pairs.

    p_first_mean = 1 / |J| * sum_{(i, j) in J} prefs[i, j]. Meaningful for log-likelihood scoring
    (prefs = softmax over the two option letters); for 0/1 parsed generations it equals
    :func:`position_bias`. A tie enters as its probability, 0.5: it is no win, and the mean of
    probabilities needs no winner (the suite's own addition, not in the papers). Since P(A | i, j) + P(A | j, i) = 1 for a judge
    whose probabilities are order-invariant, such a judge has p_first_mean = 0.5 exactly when both
    orders of every pair are judged.

    Args:
        prefs: N x N preference probabilities.
        nan_policy: ``"raise"`` rejects missing judgements; ``"omit"`` leaves them out.

    Returns:
        Mean P(option A) in [0, 1].

    Raises:
        ValueError: invalid ``prefs`` / ``nan_policy``, or NaN with ``nan_policy="raise"``.
        UndefinedMetricError: every judgement is missing.
    """
    return float(_judged(prefs, nan_policy, ties=True).mean())
