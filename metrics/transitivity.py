"""Transitivity s_tran(K) (Liu et al., "Aligning with Logic", section 2.1, eq. 1; Appendix A)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike, NDArray

from . import _graph
from ._ties import decided, first_wins
from ._validation import (
    NanPolicy,
    check_int,
    check_k,
    check_nan_policy,
    validate_prefs,
    validate_wins,
)

#: Most units of work (subsets, or recursive calls for a tournament) the exact computation may
#: take before :func:`transitivity` refuses and asks for ``samples=``. At the limit the
#: pure-Python enumeration of a dense partial graph takes up to about 10 s.
EXACT_WORK_LIMIT = 5_000_000


def relation_graph(prefs: ArrayLike, *, nan_policy: NanPolicy = "raise") -> NDArray[np.bool_]:
    """Build the preference relation graph from pairwise judgements (paper Algorithm 1).

    For every pair i < j (upper triangle only, as in the paper): edge i -> j if
    ``prefs[i, j] > 0.5``, edge j -> i if ``prefs[i, j] < 0.5``. A tie (``prefs[i, j] == 0.5``)
    gets no edge, like a missing judgement: the paper's ">= 1/2" would draw i -> j for it, a win for
    the first-shown item the judge never gave (:mod:`~logic_consistency.metrics._ties`). So a
    K-subset containing a tied pair is tested as a partial graph: acyclic unless its decided pairs
    form a cycle. The lower triangle (the swapped presentation order) is
    not read, so the graph of a non-commutative judge depends on the item order; calibrate
    first (see :func:`~logic_consistency.metrics.pairwise_consistency`) to use both orders.

    Args:
        prefs: N x N array, ``prefs[i, j]`` = P(item i beats item j) with i shown as option A.
            Diagonal ignored.
        nan_policy: ``"raise"``: any off-diagonal NaN raises ValueError. ``"omit"``: a pair
            whose ``prefs[i, j]`` (i < j) is NaN gets no edge, leaving a partial graph. A tie
            gets no edge under either policy.

    Returns:
        N x N boolean matrix ``wins`` with ``wins[i, j]`` = i beats j, for :func:`transitivity`.

    Raises:
        ValueError: invalid ``prefs`` or ``nan_policy``.
    """
    check_nan_policy(nan_policy)
    matrix = validate_prefs(prefs, "prefs", nan_policy)
    upper = np.triu(np.ones(matrix.shape, dtype=bool), k=1) & decided(matrix)
    i_wins = upper & first_wins(matrix)
    j_wins = upper & ~first_wins(matrix)
    out: npt.NDArray[np.bool_] = i_wins | j_wins.T
    return out


def transitivity(
    wins: ArrayLike, k: int = 3, *, samples: int | None = None, seed: int = 0, replace: bool = False
) -> float:
    """Transitivity s_tran(K): the fraction of K-item subsets whose relation graph is acyclic.

    Paper eq. 1: s_tran(K) = (1/M) * sum_{i=1}^{M} 1_acyclic(S_i^K), with S_i^K a K-subset of
    the items and 1_acyclic = 1 when its induced subgraph has no directed cycle (a DAG, i.e.
    the judgements on it are transitive).

    By default (``samples=None``) the value is EXACT, i.e. the average over all C(N, K)
    subsets, which is what the paper's M = 1000 random draws estimate (Appendix I):

    * complete tournament (exactly one edge per pair), K = 3: closed form. A triple is
      transitive iff one item beats the other two, so s_tran(3) = sum_i C(s_i, 2) / C(N, 3)
      with s_i the out-degrees; equivalently 1 - (#3-cycles) / C(N, 3) with
      #3-cycles = C(N, 3) - sum_i C(s_i, 2) (Kendall & Babington Smith).
    * complete tournament, K > 3: a sub-tournament is acyclic iff transitive, and a transitive
      one has a unique source, giving the exact count
      T(S, k) = sum_{v in S} T(out(v) ∩ S, k - 1), T(S, 1) = |S|, on integer bitmasks.
    * partial graphs (pairs without an edge) or 2-cycles (both directions): every K-subset is
      tested for acyclicity by a pruned bitmask depth-first enumeration.

    The cheaper exact method is used; if even that needs more than :data:`EXACT_WORK_LIMIT`
    (5,000,000) units of work (C(N, K) subsets, or sum_{d <= K-2} C(N, d) recursive calls for
    a tournament), a ValueError asks for ``samples=``.

    With ``samples=M`` the paper's estimator is used instead (eq. 1 with Appendix A's Algorithm 2
    as the acyclicity test): min(M, C(N, K)) *distinct* K-subsets drawn uniformly at random
    without replacement from ``numpy.random.default_rng(seed)``, each checked with Algorithm 2
    (DFS cycle search). The paper caps the number of sampled sub-graphs (M = 1000); capping it
    also at C(N, K) and never drawing a subset twice means that a small item set is enumerated
    completely (the estimate equals the exact value) instead of being over-sampled with repeats.
    Its standard error is at most the binomial sqrt(p(1 - p) / M) (smaller by the finite
    population factor sqrt((C(N, K) - M) / (C(N, K) - 1))). ``replace=True`` keeps the earlier
    reading of eq. 1 for comparison: M independent uniform draws (a subset may repeat, M is not
    capped), binomial standard error sqrt(p(1 - p) / M).

    Args:
        wins: N x N boolean matrix, ``wins[i, j]`` = item i beats item j (0/1 numbers
            accepted). Diagonal must be False. A pair may have no edge (missing judgement);
            both directions set is a 2-cycle. Build it from probabilities with
            :func:`relation_graph`.
        k: subset size K, 3 <= K <= N.
        samples: None for the exact value, or the number M >= 1 of random subsets.
        seed: seed (>= 0) for ``numpy.random.default_rng``; only used when ``samples`` is
            given, but validated always.
        replace: with ``samples``, draw with replacement (uncapped M) instead of the default
            distinct subsets.

    Returns:
        s_tran(K) in [0, 1]; 1 means every K-subset is transitive.

    Raises:
        ValueError: ``wins`` not square / not 2-D / not boolean / True on the diagonal; ``k``
            not an integer in 3..N; ``samples`` not a positive integer; ``seed`` not a
            non-negative integer; exact computation over :data:`EXACT_WORK_LIMIT`.
        UndefinedMetricError: ``wins`` has no edge at all (a ValueError subclass).
    """
    graph = validate_wins(wins)
    n_items = graph.shape[0]
    k = check_k(k, n_items)
    if samples is not None:
        samples = check_int(samples, "samples", minimum=1)
    seed = check_int(seed, "seed", minimum=0)  # checked even when unused: a bad seed is a bug
    if not isinstance(replace, bool):
        raise ValueError(f"replace must be True or False, got {replace!r}")

    if samples is not None:
        rng = np.random.default_rng(seed)
        if replace:
            return _graph.count_acyclic_samples(graph, k, samples, rng) / samples
        acyclic, drawn = _graph.count_acyclic_distinct_samples(graph, k, samples, rng)
        return acyclic / drawn

    total = math.comb(n_items, k)
    out_masks, in_masks = _graph.bitmasks(graph)
    if _graph.is_tournament(graph):
        if k == 3:
            return _graph.count_transitive_triples(graph.sum(axis=1)) / total
        recursion_calls = sum(math.comb(n_items, d) for d in range(k - 1))
        if recursion_calls <= min(total, EXACT_WORK_LIMIT):
            return _graph.count_transitive_subsets(out_masks, k) / total
    if total > EXACT_WORK_LIMIT:
        raise ValueError(
            f"exact transitivity needs C({n_items}, {k}) = {total:,} subsets, over the limit of "
            f"{EXACT_WORK_LIMIT:,}; pass samples=1000 (the paper's M) for the sampled estimate"
        )
    return _graph.count_acyclic_subsets(out_masks, in_masks, k) / total
