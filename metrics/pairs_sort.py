"""PairS merge sort: one ranking of items with a pairwise judge as comparator (Liu et al. 2024,
"Aligning with Human Judgement: The Role of Pairwise Preference in Large Language Model
Evaluators"; used in Liu et al., "Aligning with Logic", section 5 and Table 4).

As the authors' code (github.com/cambridgeltl/PairS, commit 55ad950, ``pairs/pairs_ranking.py``):
a top-down merge sort, worst first, comparing the heads a, b of two runs with p = P(a better than b).
``greedy`` (``PairsGreedy``, the default) emits b first iff p > 0.5; ``beam`` (``PairsBeam``) keeps
the ``beam_size`` merge paths with the best running mean of log(p + 1e-9) / log(1 - p + 1e-9) and
prunes a decision against a judgement further than ``prob_gap`` from 0.5 (so beam size 1 is not
greedy). Calibrated: p = (P(a first) + 1 - P(b first)) / 2 (Zheng et al. 2023).
:func:`merge_sort_steps` is one resumable sort, :func:`pairs_order` one sort of a preference matrix.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_int, validate_prefs

__all__ = [
    "GREEDY",
    "METHODS",
    "Comparisons",
    "Method",
    "PairsSearch",
    "SortSteps",
    "comparison",
    "merge_sort_bound",
    "merge_sort_steps",
    "pairs_order",
]

Method = Literal["greedy", "beam"]
METHODS: tuple[str, ...] = get_args(Method)


# A sort (or one merge) is a generator that yields the comparisons (a, b) it needs next, all at
# once, and is sent back P(a better than b) for each, in order; it returns the items in ascending
# quality.
Comparisons = tuple[tuple[int, int], ...]
SortSteps = Generator[Comparisons, list[float], list[int]]
_Merge = Callable[[list[int], list[int]], SortSteps]


def _greedy_merge(left_run: list[int], right_run: list[int]) -> SortSteps:
    merged: list[int] = []
    i = j = 0
    while i < len(left_run) and j < len(right_run):
        (p_left_better,) = yield ((left_run[i], right_run[j]),)
        if p_left_better > 0.5:  # left is better: the (worse) right item goes first
            merged.append(right_run[j])
            j += 1
        else:
            merged.append(left_run[i])
            i += 1
    return merged + left_run[i:] + right_run[j:]


@dataclass(frozen=True)
class _Path:
    """A partial merge: ``n_left`` / ``n_right`` items emitted from each run, in ``emitted``."""

    score: float  # running mean of the log-probabilities of the path's decisions
    n_left: int
    n_right: int
    emitted: tuple[int, ...]


def _log(p: float) -> float:
    return float(np.log(p + 1e-9))  # the authors' smoothing, and numpy's log as theirs


def _beam_merge(left_run: list[int], right_run: list[int], *, beam_size: int, prob_gap: float) -> SortSteps:
    probs: dict[tuple[int, int], float] = {}  # (i, j) -> P(left_run[i] better than right_run[j])

    def ask(positions: list[tuple[int, int]]) -> Generator[Comparisons, list[float], None]:
        new = [pos for pos in dict.fromkeys(positions) if pos not in probs]
        if new:
            answers = yield tuple((left_run[i], right_run[j]) for i, j in new)
            probs.update(zip(new, answers, strict=True))

    yield from ask([(0, 0)])
    beam = _first_beam(probs[(0, 0)], left_run, right_run, prob_gap)
    for step in range(1, len(left_run) + len(right_run)):
        is_open = [path.n_left < len(left_run) and path.n_right < len(right_run) for path in beam]
        yield from ask([(path.n_left, path.n_right) for path, open_ in zip(beam, is_open, strict=True) if open_])
        candidates = [
            extended
            for path, open_ in zip(beam, is_open, strict=True)
            for extended in _extensions(path, probs if open_ else None, step, left_run, right_run, prob_gap)
        ]
        candidates.sort(key=lambda path: path.score, reverse=True)  # stable, as the authors' list.sort
        beam = candidates[:beam_size]
    return list(beam[0].emitted)


def _first_beam(p: float, left_run: list[int], right_run: list[int], prob_gap: float) -> list[_Path]:
    """The paths after the first judgement ``p`` of the runs' heads: the right head first, the left, or both."""
    take_right = _Path(_log(p), 0, 1, (right_run[0],))
    take_left = _Path(_log(1 - p), 1, 0, (left_run[0],))
    return [take_right] if p > 0.5 + prob_gap else [take_left] if p < 0.5 - prob_gap else [take_right, take_left]


def _extensions(
    path: _Path,
    probs: dict[tuple[int, int], float] | None,
    step: int,
    left_run: list[int],
    right_run: list[int],
    prob_gap: float,
) -> list[_Path]:
    """``path`` extended by the left run's next item, then by the right's (:func:`_extend`), those not pruned."""
    extended = (_extend(path, from_left, probs, step, left_run, right_run, prob_gap) for from_left in (True, False))
    return [candidate for candidate in extended if candidate is not None]


def _extend(
    path: _Path,
    from_left: bool,
    probs: dict[tuple[int, int], float] | None,
    step: int,
    left_run: list[int],
    right_run: list[int],
    prob_gap: float,
) -> _Path | None:
    """``path`` with the next item of the left (or right) run, its score the running mean of the log
    judgements (``probs`` ``None``: one run is used up, no judgement); ``None`` when pruned (against a
    confident judgement) or when that run is used up."""
    score = _running_score(path, from_left, probs, step, prob_gap)
    if score is None:
        return None
    if from_left and path.n_left < len(left_run):
        return _Path(score, path.n_left + 1, path.n_right, (*path.emitted, left_run[path.n_left]))
    if not from_left and path.n_right < len(right_run):
        return _Path(score, path.n_left, path.n_right + 1, (*path.emitted, right_run[path.n_right]))
    return None


def _running_score(
    path: _Path, from_left: bool, probs: dict[tuple[int, int], float] | None, step: int, prob_gap: float
) -> float | None:
    """``path``'s score with the next decision (from the left run or the right): the running mean of the log
    judgements (``probs`` ``None``: no judgement, the score as it is); ``None`` when the decision goes against
    a confident judgement (pruned)."""
    if probs is None:
        return path.score
    p = probs[(path.n_left, path.n_right)]
    if (from_left and p > 0.5 + prob_gap) or (not from_left and 1 - p > 0.5 + prob_gap):
        return None  # pruned: against a confident judgement
    return path.score * step / (step + 1) + _log(1 - p if from_left else p) / (step + 1)


def _merge_sort(indices: list[int], left: int, right: int, merge: _Merge) -> Generator[Comparisons, list[float], None]:
    if right - left > 1:
        mid = (left + right) // 2
        yield from _merge_sort(indices, left, mid, merge)
        yield from _merge_sort(indices, mid, right, merge)
        indices[left:right] = yield from merge(indices[left:mid], indices[mid:right])


def _check_search(method: object, beam_size: object, prob_gap: object) -> tuple[str, int, float]:
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    size = check_int(beam_size, "beam_size", minimum=1)
    if isinstance(prob_gap, (bool, np.bool_)) or not isinstance(prob_gap, (int, float, np.integer, np.floating)):
        raise ValueError(f"prob_gap must be a number in [0, 0.5], got {prob_gap!r}")
    if not 0.0 <= float(prob_gap) <= 0.5:  # NaN fails too; above 0.5 nothing more is pruned
        raise ValueError(f"prob_gap must be in [0, 0.5], got {prob_gap!r}")
    return str(method), size, float(prob_gap)


@dataclass(frozen=True)
class PairsSearch:
    """The PairS search settings, checked when built (every sort, sorter and task takes this one value).

    Attributes:
        method: ``"greedy"`` (the authors' and the paper's default) or ``"beam"``.
        beam_size: paths kept per beam step, an integer >= 1 (beam only).
        prob_gap: uncertainty tolerance of the beam's pruning, in [0, 0.5] (beam only; the authors'
            example uses 0.1).

    Raises:
        ValueError: A setting out of its range, naming it.
    """

    method: Method = "greedy"
    beam_size: int = 1
    prob_gap: float = 0.1

    def __post_init__(self) -> None:
        _, size, gap = _check_search(self.method, self.beam_size, self.prob_gap)
        object.__setattr__(self, "beam_size", size)  # numpy integers and ints as floats become plain numbers
        object.__setattr__(self, "prob_gap", gap)


#: The default search: the authors' and the paper's greedy merge.
GREEDY = PairsSearch()


def merge_sort_steps(initial_order: Sequence[int], search: PairsSearch = GREEDY) -> SortSteps:
    """A resumable PairS merge sort: yields the comparisons (a, b) it needs next (a tuple; one for
    greedy, all a beam step needs for beam), receives P(a better than b) for each (a list).

    Returns (as the generator's ``StopIteration.value``) the items in ascending quality.
    """
    if search.method == "greedy":
        return _sort(list(initial_order), _greedy_merge)

    def beam_merge(left_run: list[int], right_run: list[int]) -> SortSteps:
        return _beam_merge(left_run, right_run, beam_size=search.beam_size, prob_gap=search.prob_gap)

    return _sort(list(initial_order), beam_merge)


def _sort(indices: list[int], merge: _Merge) -> SortSteps:
    yield from _merge_sort(indices, 0, len(indices), merge)
    return indices


def comparison(lookup: Callable[[int, int], float], a: int, b: int, *, calibrated: bool) -> float:
    """P(a better than b) from P(x better | x as option A) answers; calibrated: both orders."""
    return (lookup(a, b) + 1.0 - lookup(b, a)) / 2.0 if calibrated else lookup(a, b)


def pairs_order(
    prefs: ArrayLike,
    *,
    calibrated: bool = False,
    search: PairsSearch = GREEDY,
    initial_order: Sequence[int] | None = None,
) -> list[int]:
    """The PairS ranking of the items of a preference matrix, worst first (as the authors' code).

    One merge sort (module docstring) of the items in ``initial_order`` with ``prefs`` as the
    comparator; equal to the authors' ``PairsGreedy`` (the default search) and ``PairsBeam``
    (``PairsSearch("beam", ...)``) run on ``initial_order`` with a judge that answers from ``prefs``.

    Args:
        prefs: N x N matrix, ``prefs[a, b]`` = P(a better than b | a shown as option A), in
            [0, 1]; the diagonal is ignored, and NaN (a missing judgement) is allowed for pairs
            the sort never asks.
        calibrated: judge each comparison from both presentation orders,
            p = (prefs[a, b] + 1 - prefs[b, a]) / 2.
        search: the merge: greedy (the default) or beam, with its settings.
        initial_order: the order of the items before sorting, a permutation of 0..N-1; default
            0..N-1 (the authors sort the list as given; their scripts shuffle it first).

    Returns:
        The item indices in ascending quality (worst first).

    Raises:
        ValueError: invalid arguments; a NaN entry the sort needs (naming the pair).
    """
    matrix = validate_prefs(prefs, "prefs", "omit")
    n_items = matrix.shape[0]
    if not isinstance(calibrated, (bool, np.bool_)):
        raise ValueError(f"calibrated must be True or False, got {calibrated!r}")
    order = list(range(n_items))
    if initial_order is not None:
        given = np.asarray(initial_order)
        if given.ndim != 1 or given.dtype.kind not in "iu" or sorted(given.tolist()) != order:
            raise ValueError(
                f"initial_order must be a permutation of 0..{n_items - 1} (prefs has N = {n_items} "
                f"items), got {initial_order!r}"
            )
        order = given.tolist()

    def lookup(a: int, b: int) -> float:
        if np.isnan(matrix[a, b]):
            raise ValueError(f"prefs has no judgement (NaN) for pair ({a}, {b}), which the sort needs")
        return float(matrix[a, b])

    sort = merge_sort_steps(order, search)
    try:
        batch = next(sort)
        while True:
            batch = sort.send([comparison(lookup, a, b, calibrated=bool(calibrated)) for a, b in batch])
    except StopIteration as stop:
        return list(stop.value)


def merge_sort_bound(n_items: int) -> int:
    """Worst-case comparisons of a top-down merge sort of n items: n ceil(log2 n) - 2^ceil(log2 n) + 1."""
    if n_items < 2:
        return 0
    depth = math.ceil(math.log2(n_items))
    return int(n_items * depth - 2**depth + 1)
