"""Causal epistemic consistency (Cui et al., "Nuance Matters: Probing Epistemic Consistency in
Causal Reasoning", section 3).

``ranked_labels`` is the model's ranking of its ten intermediates, written as their generation
labels (-5 strongest defeater ... +5 strongest supporter, eq. 1); a consistent model returns
``[-5, ..., -1, 1, ..., 5]``. Metrics (1 = consistent): ``tau_defeaters`` / ``tau_supporters`` /
``tau_all``, Kendall tau (eq. 2) = (concordant - discordant) / (k (k - 1) / 2); ``cgp`` (eq. 3)
= 1 - #{supporter ranked before a defeater} / 25; ``igc``, the paper's definition (mean silhouette
under the polarity-change distance, eqs. 4-8 and 12); ``igc_density``, the density score of the
authors' code, which reproduces the IGC numbers the paper reports (Tables 1 and 4): compare with
published IGC numbers through it only. Under a random ranking: tau_all sd 0.2485, CGP 0.5 ± 0.1915,
igc_density 0.4689 ± 0.0812, igc 0.3605 ± 0.1593 (exact).
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

__all__ = [
    "CAUSAL_LABELS",
    "DEFEATER_LABELS",
    "SUPPORTER_LABELS",
    "causal_consistency",
    "confusion_matrix",
    "cross_group_position",
    "intra_group_clustering",
    "intra_group_clustering_density",
    "kendall_tau",
    "polarity_change_distances",
    "validate_ranked_labels",
]

#: Generation-phase intensity labels in the generation order (paper Figure 2 / eq. 1).
DEFEATER_LABELS: tuple[int, ...] = (-5, -4, -3, -2, -1)
SUPPORTER_LABELS: tuple[int, ...] = (1, 2, 3, 4, 5)
CAUSAL_LABELS: tuple[int, ...] = DEFEATER_LABELS + SUPPORTER_LABELS


def _as_label(value: Any, name: str, position: int) -> int:
    # bool is an int subclass, but True as an intensity label is a caller bug.
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}[{position}] is a bool ({value!r}), not an intensity label")
    try:
        label = operator.index(value)
    except TypeError:
        raise ValueError(
            f"{name}[{position}] = {value!r} is an unknown label: labels are the integers {list(CAUSAL_LABELS)}"
        ) from None
    if label not in CAUSAL_LABELS:
        raise ValueError(
            f"{name}[{position}] = {label} is an unknown label: labels are the integers {list(CAUSAL_LABELS)}"
        )
    return int(label)


def validate_ranked_labels(ranked_labels: Any, name: str = "ranked_labels") -> list[int]:
    """Check that ``ranked_labels`` is a permutation of :data:`CAUSAL_LABELS`.

    Args:
        ranked_labels: Sequence of ten integer labels (-5..-1, +1..+5) in ranked order.
        name: Argument name used in error messages.

    Returns:
        The labels as a list of Python ints.

    Raises:
        ValueError: Not a sequence, an unknown label, a repeated label, or a missing label; the
            message names ``name`` and says which labels are wrong.
    """
    if isinstance(ranked_labels, (str, bytes)) or not isinstance(ranked_labels, (Sequence, np.ndarray)):
        raise ValueError(
            f"{name} must be a sequence of the 10 labels {list(CAUSAL_LABELS)}, got {type(ranked_labels).__name__}"
        )
    if isinstance(ranked_labels, np.ndarray) and ranked_labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {ranked_labels.shape}")
    labels = [_as_label(value, name, position) for position, value in enumerate(ranked_labels)]
    problems = _permutation_problems(labels)
    if problems:
        raise ValueError(
            f"{name} must be a permutation of {list(CAUSAL_LABELS)} (each label exactly once); "
            f"got {len(labels)} labels with {' and '.join(problems)}"
        )
    return labels


def _permutation_problems(labels: list[int]) -> list[str]:
    """What keeps ``labels`` from being a permutation of :data:`CAUSAL_LABELS`: labels repeated, labels missing."""
    repeated = sorted(label for label, count in Counter(labels).items() if count > 1)
    missing = sorted(set(CAUSAL_LABELS) - set(labels))
    problems = []
    if repeated:
        problems.append(f"duplicate labels {repeated}")
    if missing:
        problems.append(f"missing labels {missing}")
    return problems


def kendall_tau(sequence: Sequence[float]) -> float:
    """Kendall tau (paper eq. 2) between ``sequence`` and its sorted (generation) order.

    tau = (C - D) / (k (k - 1) / 2), where a pair of positions i < j is concordant (C) when
    ``sequence[i] < sequence[j]`` and discordant (D) when ``sequence[i] > sequence[j]``. For
    distinct values this is Kendall's tau-a (= tau-b).

    Args:
        sequence: At least two distinct values (e.g. intensity labels) in ranked order.

    Returns:
        tau in [-1, 1]: 1 = same order as sorted, -1 = reversed.

    Raises:
        ValueError: fewer than two values, or repeated values (ties are not defined here).
    """
    values = [float(value) for value in sequence]
    if len(values) < 2:
        raise ValueError(f"sequence must hold at least 2 values, got {len(values)}")
    if len(set(values)) != len(values):
        raise ValueError("sequence must not repeat a value (Kendall tau without ties)")
    # Not scipy.stats.kendalltau, on purpose: it computes tau-b as (C - D) / sqrt(n0 n0) in floating
    # point, which returns 0.9999999999999999 (not 1.0) for a perfect ten-item ranking, so a
    # consistent model would not score exactly 1 as eq. 2 says. The exact count below agrees with
    # scipy to 1e-12 on every permutation tested (tests/metrics/test_causal.py), and for ten items
    # plain Python is faster than building numpy index arrays.
    n = len(values)
    balance = sum(1 if values[i] < values[j] else -1 for i in range(n) for j in range(i + 1, n))
    return balance / (n * (n - 1) / 2)


def _two_groups(polarities: Iterable[Hashable], name: str) -> NDArray[np.bool_]:
    """Encode a sequence over exactly two group labels as booleans (True = the first label seen)."""
    values = list(polarities)
    groups = list(dict.fromkeys(values))
    if len(groups) != 2:
        raise ValueError(f"{name} must contain exactly two distinct group labels, got {len(groups)}: {groups[:5]!r}")
    return np.array([value == groups[0] for value in values], dtype=bool)


def cross_group_position(ranked_labels: Sequence[int]) -> float:
    """Cross-group position CGP (paper eq. 3).

    CGP = 1 - sum_{a in A} sum_{d in D} 1[index(a) < index(d)] / (|A| |D|): the fraction of
    (supporter, defeater) pairs in which the defeater is ranked before the supporter.

    Args:
        ranked_labels: Intensity labels in ranked order; negative = defeater (D), positive =
            supporter (A). Both groups must be present.

    Returns:
        CGP in [0, 1]; 1 = every defeater ranked before every supporter.

    Raises:
        ValueError: a label is 0 or one group is empty.
    """
    signs = np.sign(np.asarray(ranked_labels, dtype=np.float64))
    if signs.ndim != 1 or (signs == 0).any():
        raise ValueError("ranked_labels must be a 1-D sequence of non-zero labels")
    supporters, defeaters = signs > 0, signs < 0
    if not supporters.any() or not defeaters.any():
        raise ValueError("ranked_labels must contain both supporters (> 0) and defeaters (< 0)")
    # supporters_before[i] = number of supporters strictly before position i
    supporters_before: NDArray[np.int_] = np.cumsum(supporters) - supporters
    violations = int(supporters_before[defeaters].sum())
    return 1.0 - violations / (int(supporters.sum()) * int(defeaters.sum()))


def polarity_change_distances(polarities: Iterable[Hashable]) -> NDArray[np.float64]:
    """The sequence clustering distance of paper eq. 4 for every pair of positions.

    d(i, j) = sum_{k=i}^{j-1} 1[L_k != L_{k+1} and L_{k+1} != L_i] for i < j (polarity changes
    from i to j, not counting returns to i's own polarity), and d(j, i) = d(i, j).

    Args:
        polarities: Group label of each position of the ranked sequence (two distinct labels).

    Returns:
        Symmetric n x n matrix with a zero diagonal.
    """
    labels = _two_groups(polarities, "polarities")
    n = labels.size
    distances = np.zeros((n, n), dtype=np.float64)
    changes = labels[1:] != labels[:-1]  # changes[k]: position k -> k + 1
    for i in range(n):
        counted = changes & (labels[1:] != labels[i])
        # distance from i to j > i counts the changes k = i .. j - 1
        distances[i, i + 1 :] = np.cumsum(counted[i:])
    upper = np.triu(distances, k=1)
    out: npt.NDArray[np.float64] = upper + upper.T
    return out


def intra_group_clustering(polarities: Iterable[Hashable]) -> float:
    """Intra-group clustering IGC as the paper defines it (eqs. 4-8 with eq. 12).

    With d the polarity-change distance (:func:`polarity_change_distances`), for each position i:
    a(i) = mean d(i, j) over the other members of i's group (eq. 6), b(i) = mean d(i, j) over the
    other group (eq. 7), s(i) = (b(i) - a(i)) / max(a(i), b(i)) (eq. 5), except s(i) = 1 when i is
    the only member of its group (eq. 12). IGC = mean_i s(i) (eq. 8).

    This is the **published definition**; the paper's reported IGC *numbers* come from
    :func:`intra_group_clustering_density` instead. The worked example of Appendix C.1 (sequence
    A A B A A B B B A B) gives 0.387 here, as printed; its last per-element value is printed as
    -0.432, but the printed formula (2.2 - 1.25) / 2.2 is +0.432, which is also what makes the
    printed mean 0.387.

    Args:
        polarities: Group label of each ranked position; exactly two distinct labels (e.g. the
            signs of the intensity labels).

    Returns:
        IGC in [-1, 1]; 1 = both groups contiguous.

    Raises:
        ValueError: the sequence does not hold exactly two distinct labels.
    """
    return _silhouette(tuple(_two_groups(polarities, "polarities").tolist()))


@functools.lru_cache(maxsize=4096)
def _silhouette(pattern: tuple[bool, ...]) -> float:
    # Cached: the value depends only on the polarity pattern (252 patterns for 5 + 5 items).
    labels = np.array(pattern, dtype=bool)
    distances = polarity_change_distances(labels)
    scores = np.empty(labels.size, dtype=np.float64)
    for i in range(labels.size):
        same = labels == labels[i]
        same[i] = False
        if not same.any():
            scores[i] = 1.0  # eq. 12: alone in its cluster
            continue
        intra = distances[i, same].mean()
        nearest = distances[i, labels != labels[i]].mean()
        # nearest >= 1 always (reaching the other group takes at least one counted change)
        scores[i] = (nearest - intra) / max(intra, nearest)
    return float(scores.mean())


def intra_group_clustering_density(polarities: Iterable[Hashable]) -> float:
    """Density-based intra-group clustering: the score behind the paper's reported IGC numbers.

    For each of the two groups, with its sorted positions p_1 < ... < p_m:
    span = p_m - p_1 + 1, density = m / span, max_gap = max_k (p_{k+1} - p_k) - 1, and
    score = density if max_gap == 0 else density * (1 - max_gap / span); a group of one scores 1.
    The result is the mean of the two group scores.

    This reproduces every IGC value of the paper's Table 4 (0.694, 0.510, 0.502, 0.543, 0.543)
    and its Random row (exact mean 0.4689, sd 0.0812 over the 252 equally likely polarity
    patterns; printed 0.467 +- 0.077), and is what the authors' public code computes; it is
    **not** the silhouette definition of the paper's section 3.3 (see
    :func:`intra_group_clustering`). ``polarities`` and the error are as there.

    Returns:
        A score in (0, 1]; 1 = both groups contiguous.
    """
    return _density(tuple(_two_groups(polarities, "polarities").tolist()))


@functools.lru_cache(maxsize=4096)
def _density(pattern: tuple[bool, ...]) -> float:
    labels = np.array(pattern, dtype=bool)
    scores = []
    for member in (True, False):
        positions = np.flatnonzero(labels == member)
        if positions.size < 2:
            scores.append(1.0)
            continue
        span = int(positions[-1] - positions[0] + 1)
        density = positions.size / span
        max_gap = int(np.diff(positions).max()) - 1
        scores.append(density if max_gap == 0 else density * (1.0 - max_gap / span))
    return float(np.mean(scores))


def causal_consistency(ranked_labels: Sequence[int]) -> dict[str, float]:
    """All causal epistemic consistency metrics of one ranking (paper section 3).

    Args:
        ranked_labels: The ten generation-phase labels (-5..-1, +1..+5) in the model's ranked
            order, from the most weakening to the most strengthening intermediate.

    Returns:
        ``{"tau_supporters", "tau_defeaters", "tau_all", "cgp", "igc", "igc_density"}`` (see the
        module docstring; ``igc`` is the published silhouette definition, ``igc_density`` the
        score that reproduces the published numbers).

    Raises:
        ValueError: ``ranked_labels`` is not a permutation of the ten labels (the message says
            which labels are unknown, repeated or missing).

    Example:
        >>> causal_consistency([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5])["tau_all"]
        1.0
    """
    labels = validate_ranked_labels(ranked_labels)
    signs = [label > 0 for label in labels]
    return {
        "tau_supporters": kendall_tau([label for label in labels if label > 0]),
        "tau_defeaters": kendall_tau([label for label in labels if label < 0]),
        "tau_all": kendall_tau(labels),
        "cgp": cross_group_position(labels),
        "igc": intra_group_clustering(signs),
        "igc_density": intra_group_clustering_density(signs),
    }


def confusion_matrix(rankings: Iterable[Sequence[int]], *, normalize: bool = False) -> NDArray[np.float64]:
    """Generation label vs ranked position over many rankings (paper Figure 4).

    Entry (r, c) counts the rankings in which the intermediate generated with label
    ``CAUSAL_LABELS[r]`` was ranked at position c (0-based; position c is where label
    ``CAUSAL_LABELS[c]`` belongs), so a consistent model fills the diagonal.

    Args:
        rankings: Iterable of ``ranked_labels`` lists (each a permutation of the ten labels).
        normalize: If true, divide each row by its total (each row sums to 1; Figure 4 shows these
            fractions as percentages). Row fractions of no rankings are undefined (0 / 0), so an
            empty input raises rather than returning zeros.

    Returns:
        10 x 10 float array: counts (all zero for an empty input: nothing was counted), or row fractions.

    Raises:
        ValueError: a ranking is not a permutation of the ten labels (the message names its index), or
            ``normalize`` is true and ``rankings`` is empty.
    """
    if isinstance(rankings, (str, bytes)):
        raise ValueError("rankings must be an iterable of ranked label lists, got a string")
    index = {label: row for row, label in enumerate(CAUSAL_LABELS)}
    matrix = np.zeros((len(CAUSAL_LABELS), len(CAUSAL_LABELS)), dtype=np.float64)
    for number, ranking in enumerate(rankings):
        labels = validate_ranked_labels(ranking, name=f"rankings[{number}]")
        for position, label in enumerate(labels):
            matrix[index[label], position] += 1.0
    if normalize:
        if not matrix.any():
            raise ValueError("rankings is empty: row fractions (normalize=True) of no rankings are undefined")
        totals = matrix.sum(axis=1, keepdims=True)
        matrix = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
    return matrix
