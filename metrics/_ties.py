"""Which option a pairwise judgement picks, and what a tie is (shared by the pairwise metrics).

A judgement ``p = prefs[i, j]`` (P(option A), item i shown as option A) is a win for option A when
``p > 0.5``, a win for option B when ``p < 0.5``, a **tie** when ``p == 0.5`` exactly, and missing
when ``p`` is NaN (an unparseable answer).

Liu et al.'s Algorithm 1 writes "i wins if P(x_i > x_j) >= 1/2", which makes every tie a win for
option A (an all-ties judge would score position_bias = 1 and s_comm = 0); the paper's F, however,
returns one of the two items, and a tie returns neither. So a tie is a judgement without a winner:
it is left out like a missing judgement, counted (:func:`count_ties`; tasks report ``n_ties``),
and a metric with nothing left is undefined (:class:`UndefinedMetricError`), never 0 or 1. PairS
(cambridgeltl/PairS) instead resolves P = 0.5 by keeping the left run's item first, as
:mod:`~logic_consistency.metrics.pairs_sort` does: a sort must place every item. See
docs/studies.md, "Ties".
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import validate_prefs

#: P(option A) of a tie: neither option wins.
TIE = 0.5


def decided(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where a judgement picks an option: neither missing (NaN) nor a tie (exactly 0.5)."""
    out: NDArray[np.bool_] = ~np.isnan(values) & (values != TIE)
    return out


def first_wins(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where option A wins (``p > 0.5``); read it only where :func:`decided` holds."""
    out: NDArray[np.bool_] = values > TIE
    return out


def count_ties(prefs: ArrayLike) -> int:
    """Number of off-diagonal judgements of ``prefs`` that are exact ties (``p == 0.5``).

    Args:
        prefs: N x N preference probabilities; NaN (missing) entries are allowed and not counted.

    Raises:
        ValueError: invalid ``prefs``.
    """
    matrix = validate_prefs(prefs, "prefs", "omit")
    off_diagonal = ~np.eye(matrix.shape[0], dtype=bool)
    return int((off_diagonal & (matrix == TIE)).sum())
