"""Graph algorithms behind s_tran(K): the paper's cycle search and exact subset counting.

Liu et al., "Aligning with Logic" (ICML), Appendix A. Vertices are ``0..N-1``; a graph is either
an adjacency list (``adjacency[v]`` = the vertices ``v`` points to, as in the paper) or a set of
integer bitmasks (bit ``u`` of ``out_masks[v]`` set when ``v -> u``), which makes set
intersection a single ``&`` in the exact counters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_k, validate_wins


def has_cycle(adjacency: Sequence[Iterable[int]]) -> bool:
    """Return True if a directed graph contains a cycle (paper, Appendix A, Algorithm 2).

    Depth-first search keeping a ``visited`` set and a recursion stack ``recStack``: meeting a
    vertex that is still on the recursion stack closes a cycle. The paper's recursive
    ``CycleUtil`` is run here with an explicit stack (same visiting order) so that long paths
    cannot hit Python's recursion limit.

    Args:
        adjacency: adjacency list; ``adjacency[v]`` holds the vertices ``v`` points to, each an
            integer in ``[0, len(adjacency))``. A self-loop counts as a cycle; ``u`` listed in
            ``adjacency[v]`` and ``v`` in ``adjacency[u]`` is a 2-cycle.

    Returns:
        Whether any directed cycle exists.

    Raises:
        ValueError: ``adjacency`` is not a sequence of iterables, or a neighbour is not an
            integer vertex index in range.
    """
    try:
        neighbours = [list(targets) for targets in adjacency]
    except TypeError:
        raise ValueError(
            "adjacency must be a sequence of neighbour lists (adjacency[v] = vertices v points to)"
        ) from None
    n_vertices = len(neighbours)
    for v, targets in enumerate(neighbours):
        for u in targets:
            if isinstance(u, (bool, np.bool_)) or not isinstance(u, (int, np.integer)):
                raise ValueError(f"adjacency[{v}] must hold integer vertex indices, got {u!r}")
            if not 0 <= u < n_vertices:
                raise ValueError(f"adjacency[{v}] points to {u}, outside 0..{n_vertices - 1}")
    return _dfs_has_cycle(neighbours)


def _dfs_has_cycle(neighbours: Sequence[Sequence[int]]) -> bool:
    """Algorithm 2 on an adjacency list already known to be valid (no per-call checks)."""
    n_vertices = len(neighbours)
    visited = [False] * n_vertices
    on_stack = [False] * n_vertices  # the paper's recStack
    for root in range(n_vertices):
        if visited[root]:
            continue
        visited[root] = on_stack[root] = True
        # Each frame is (vertex, iterator over its remaining neighbours) = one CycleUtil call.
        frames = [(root, iter(neighbours[root]))]
        while frames:
            v, remaining = frames[-1]
            for u in remaining:
                if not visited[u]:
                    visited[u] = on_stack[u] = True
                    frames.append((u, iter(neighbours[u])))
                    break
                if on_stack[u]:
                    return True
            else:  # all neighbours explored: CycleUtil(v) returns False
                on_stack[v] = False
                frames.pop()
    return False


def induced_adjacency(rows: Sequence[Sequence[bool]], subset: Sequence[int]) -> list[list[int]]:
    """Adjacency list of the subgraph induced by ``subset`` (vertices renumbered 0..K-1)."""
    return [[b for b, u in enumerate(subset) if rows[v][u]] for v in subset]


def bitmasks(wins: NDArray[np.bool_]) -> tuple[list[int], list[int]]:
    """Out- and in-neighbourhoods of every vertex as Python-int bitmasks."""
    weights = [1 << j for j in range(wins.shape[0])]

    def to_masks(matrix: NDArray[np.bool_]) -> list[int]:
        return [sum(w for w, edge in zip(weights, row) if edge) for row in matrix.tolist()]

    return to_masks(wins), to_masks(wins.T)


def is_tournament(wins: NDArray[np.bool_]) -> bool:
    """True if every pair of distinct vertices has exactly one edge between them."""
    exactly_one = wins ^ wins.T
    np.fill_diagonal(exactly_one, True)
    return bool(exactly_one.all())


def count_transitive_triples(out_degrees: ArrayLike) -> int:
    """Number of transitive 3-subsets of a tournament: sum_i C(s_i, 2).

    Each transitive triple has exactly one vertex beating the other two, and every pair of
    out-neighbours of a vertex forms such a triple with it.
    """
    degrees = np.asarray(out_degrees, dtype=np.int64)
    return int((degrees * (degrees - 1) // 2).sum())


def count_three_cycles(out_degrees: ArrayLike) -> int:
    """Number of cyclic triples of a tournament: C(n, 3) - sum_i C(s_i, 2).

    Kendall & Babington Smith (1940); ``out_degrees`` are the score sequence s_1..s_n.
    """
    n_vertices = len(np.asarray(out_degrees))
    return math.comb(n_vertices, 3) - count_transitive_triples(out_degrees)


def count_transitive_subsets(out_masks: Sequence[int], k: int) -> int:
    """Exact number of K-subsets of a *tournament* that induce a transitive sub-tournament.

    A tournament is acyclic iff transitive, and a transitive tournament has a unique source
    that beats all the others, so with T(S, 1) = |S| and T(S, 2) = C(|S|, 2):

        T(S, k) = sum_{v in S} T(out(v) ∩ S, k - 1).

    Every recursive call corresponds to one transitive subset of size <= k - 2 (its vertices in
    source-first order), so the work is at most sum_{d <= k-2} C(N, d) calls.

    Args:
        out_masks: out-neighbourhood bitmask of each vertex; must describe a tournament.
        k: subset size, k >= 1.
    """

    def count(subset: int, size_wanted: int) -> int:
        size = subset.bit_count()
        if size < size_wanted:
            return 0
        if size_wanted == 1:
            return size
        if size_wanted == 2:
            return size * (size - 1) // 2  # in a tournament every pair is one edge
        total = 0
        rest = subset
        while rest:
            lowest = rest & -rest
            rest ^= lowest
            total += count(out_masks[lowest.bit_length() - 1] & subset, size_wanted - 1)
        return total

    return count((1 << len(out_masks)) - 1, k)


def count_acyclic_subsets(out_masks: Sequence[int], in_masks: Sequence[int], k: int) -> int:
    """Exact number of K-subsets inducing an acyclic subgraph, for any directed graph.

    Enumerates subsets by adding vertices in increasing index order (depth-first, explicit
    stack). Acyclicity is hereditary, so a prefix that already closes a cycle prunes its whole
    branch (all its supersets are cyclic and are simply not counted). For an acyclic prefix W
    it keeps ``down[u]`` = the vertices of W reachable from u (u included); adding v closes a
    cycle iff some out-neighbour of v in W reaches an in-neighbour of v. Visits at most
    K * C(N, K) prefixes.

    Args:
        out_masks: out-neighbourhood bitmask of each vertex.
        in_masks: in-neighbourhood bitmask of each vertex (transpose of ``out_masks``).
        k: subset size, 1 <= k <= N.
    """
    n_vertices = len(out_masks)
    acyclic = 0
    # Frame: (members of W, down-masks aligned with members, bitmask of W, next vertex to try).
    frames: list[tuple[tuple[int, ...], tuple[int, ...], int, int]] = [((), (), 0, 0)]
    while frames:
        members, down, w_mask, start = frames.pop()
        slots_left = k - len(members)
        for v in range(start, n_vertices - slots_left + 1):
            out_v = out_masks[v] & w_mask
            in_v = in_masks[v] & w_mask
            reached = 0  # vertices of W that v reaches through W
            if out_v:
                for u, reach_u in zip(members, down):
                    if out_v >> u & 1:
                        reached |= reach_u
            if reached & in_v:
                continue  # v closes a cycle, and so would every superset
            if slots_left == 1:
                acyclic += 1
                continue
            down_v = reached | (1 << v)
            # Whoever reaches an in-neighbour of v now also reaches v and all v reaches.
            new_down = tuple(r | down_v if r & in_v else r for r in down) + (down_v,)
            frames.append((members + (v,), new_down, w_mask | (1 << v), v + 1))
    return acyclic


def unrank_combination(index: int, n: int, k: int) -> list[int]:
    """The ``index``-th K-subset of ``range(n)`` in lexicographic order (combinatorial number system).

    ``unrank_combination(i, n, k)`` for i in range(C(n, k)) lists the subsets in the order of
    :func:`itertools.combinations` (used to draw distinct subsets when C(n, k) is small; a loop
    over :func:`itertools.combinations` would cost C(n, k) steps per draw).
    """
    subset: list[int] = []
    low = 0
    for remaining in range(k, 0, -1):
        # smallest next element e >= low such that index falls in the block starting at e
        element = low
        while True:
            block = math.comb(n - element - 1, remaining - 1)
            if index < block:
                break
            index -= block
            element += 1
        subset.append(element)
        low = element + 1
    return subset


def sample_distinct_subsets(n: int, k: int, m: int, rng: np.random.Generator) -> list[list[int]]:
    """``m`` distinct K-subsets of ``range(n)``, uniformly at random without replacement.

    ``m`` must not exceed C(n, k). When C(n, k) <= 4m (or at most 10^6), ``m`` distinct ranks are
    drawn with ``rng.choice(..., replace=False)`` and unranked; otherwise uniform subsets (the k
    smallest of n i.i.d. uniform keys) are drawn and repeats rejected, which needs fewer than
    4/3 m draws on average because fewer than a quarter of all subsets can already be taken.
    """
    total = math.comb(n, k)
    if m > total:
        raise ValueError(f"cannot draw {m} distinct subsets out of C({n}, {k}) = {total}")
    if total <= max(4 * m, 1_000_000):
        ranks = rng.choice(total, size=m, replace=False)
        return [unrank_combination(int(rank), n, k) for rank in ranks]
    seen: set[tuple[int, ...]] = set()
    subsets: list[list[int]] = []
    chunk = max(1, min(m, (1 << 20) // n))  # keeps the key matrix around 8 MB
    while len(subsets) < m:
        keys = rng.random((chunk, n))
        for row in np.argpartition(keys, k - 1, axis=1)[:, :k].tolist():
            key = tuple(sorted(row))
            if key not in seen:
                seen.add(key)
                subsets.append(list(key))
                if len(subsets) == m:
                    break
    return subsets


def count_acyclic_distinct_samples(
    wins: NDArray[np.bool_], k: int, samples: int, rng: np.random.Generator
) -> tuple[int, int]:
    """Count the acyclic ones among M = min(samples, C(N, K)) distinct random K-subsets.

    The paper's estimator (eq. 1) averages over M sampled sub-graphs and caps M (at 1000); drawing
    the subsets without replacement and capping M at C(N, K) means that when there are no more
    than ``samples`` subsets, every one is checked once (the estimate is then the exact value),
    and no subset is counted twice. Each subset is checked with Algorithm 2 (:func:`has_cycle`).

    Returns:
        (number of acyclic subsets, M).
    """
    n_vertices = wins.shape[0]
    m = min(samples, math.comb(n_vertices, k))
    rows = wins.tolist()
    acyclic = 0
    for subset in sample_distinct_subsets(n_vertices, k, m, rng):
        acyclic += not _dfs_has_cycle(induced_adjacency(rows, subset))
    return acyclic, m


def count_acyclic_samples(wins: NDArray[np.bool_], k: int, samples: int, rng: np.random.Generator) -> int:
    """Draw ``samples`` uniform random K-subsets independently; count the acyclic ones.

    Each draw takes the K smallest of N i.i.d. uniform keys (a uniform K-subset); the draws are
    vectorised in chunks to bound memory. Each subset is checked with Algorithm 2
    (:func:`has_cycle`), as in the paper's estimator (eq. 1). With replacement: a subset can be
    drawn twice (``transitivity(..., replace=True)``).
    """
    n_vertices = wins.shape[0]
    rows = wins.tolist()
    chunk = max(1, (1 << 20) // n_vertices)  # keeps the key matrix around 8 MB
    acyclic = 0
    for first in range(0, samples, chunk):
        keys = rng.random((min(chunk, samples - first), n_vertices))
        subsets = np.argpartition(keys, k - 1, axis=1)[:, :k]
        for subset in subsets.tolist():
            acyclic += not _dfs_has_cycle(induced_adjacency(rows, subset))
    return acyclic


def transitivity_by_cycle_search(wins: ArrayLike, k: int = 3) -> float:
    """Reference s_tran(K): run the paper's Algorithm 2 on every one of the C(N, K) subsets.

    s_tran(K) = (1 / C(N, K)) * sum over all K-subsets S of 1_acyclic(S) (paper eq. 1 with the
    sample replaced by the full enumeration). Deliberately the plain definition, used to check
    :func:`~logic_consistency.metrics.transitivity` and as the benchmark baseline; it costs
    C(N, K) cycle searches, so keep N small.

    Args:
        wins: N x N boolean matrix, ``wins[i, j]`` = i beats j (False diagonal).
        k: subset size, 3 <= k <= N.

    Returns:
        The fraction of K-subsets whose induced subgraph is acyclic.

    Raises:
        ValueError: invalid ``wins`` (see :func:`~logic_consistency.metrics.transitivity`) or
            ``k`` outside 3..N.
    """
    graph = validate_wins(wins)
    n_items = graph.shape[0]
    k = check_k(k, n_items)
    rows = graph.tolist()
    acyclic = sum(
        not _dfs_has_cycle(induced_adjacency(rows, subset)) for subset in itertools.combinations(range(n_items), k)
    )
    return acyclic / math.comb(n_items, k)
