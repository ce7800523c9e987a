"""PairS: merge-sort ranking with a pairwise judge as comparator (Liu et al. 2024, "Aligning with
Human Judgement: The Role of Pairwise Preference in Large Language Model Evaluators"; used in
Liu et al., "Aligning with Logic", section 5 and Table 4).

Merge-sort details follow the authors' public code (github.com/cambridgeltl/PairS,
``scripts/sorting.py`` / ``pairs/pairs_ranking.py``, function ``merge``):

* top-down recursive merge sort over the item indices, ``mid = (left + right) // 2``;
* the list is sorted in ascending quality (worst first); merging compares the heads ``a`` of the
  left run and ``b`` of the right run with ``a`` shown as option A, and emits ``b`` first iff
  P(A better) > 0.5 (strictly; a tie P = 0.5 emits ``a`` first, i.e. treats A as not better);
* calibrated: the comparison is judged from both presentation orders,
  p = (P(a first) + 1 - P(b first)) / 2 (authors: ``(prob_A + reverse.prob_B) / 2``), the
  calibration of Zheng et al. (2023) that the paper describes;
* the paper reports "average Spearman correlations over 100 runs"; the authors' scripts shuffle
  the items before each run, so a run here is one sort from a random initial order drawn from
  ``numpy.random.default_rng(seed)``. The runs share one memo of model answers: a pair (in one
  presentation order) is asked of the model at most once over all runs. This is exact for a
  deterministic judge (greedy decoding or log-likelihood scoring), which PairS assumes.

Comparisons are counted per run as merge steps (the authors' ``api_call``: one per comparison,
also when calibrated, where a comparison needs two prompts); model calls are the distinct ordered
pairs asked over all runs. A merge sort of n items needs at most n * ceil(log2 n) - 2**ceil(log2 n)
+ 1 comparisons, against n (n - 1) ordered pairs for the full matrix.

Scoring: the final position of an item (0 = worst) is its score; Spearman's rho against the human
scores (:func:`~logic_consistency.metrics.ranking.ranking_spearman`) is averaged over runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import UndefinedMetricError, check_int
from .ranking import ranking_spearman

#: ``ask(pairs)`` answers ordered pairs (a, b) with P(item a is better | a shown as option A).
BatchJudge = Callable[[Sequence[tuple[int, int]]], Sequence[float]]

# A sort is a generator that yields the comparison (a, b) it needs and is sent back
# P(a better than b), then returns the sorted list (ascending quality).
_Sort = Generator[tuple[int, int], float, list[int]]


def _merge_sort(indices: list[int], left: int, right: int) -> Generator[tuple[int, int], float, None]:
    if right - left > 1:
        mid = (left + right) // 2
        yield from _merge_sort(indices, left, mid)
        yield from _merge_sort(indices, mid, right)
        left_run, right_run = indices[left:mid], indices[mid:right]
        i = j = 0
        k = left
        while i < len(left_run) and j < len(right_run):
            p_left_better = yield (left_run[i], right_run[j])
            if p_left_better > 0.5:  # left is better: the (worse) right item goes first
                indices[k] = right_run[j]
                j += 1
            else:
                indices[k] = left_run[i]
                i += 1
            k += 1
        rest = left_run[i:] + right_run[j:]
        indices[k : k + len(rest)] = rest


def merge_sort_steps(initial_order: Sequence[int]) -> _Sort:
    """A resumable PairS merge sort: yields each comparison (a, b), receives P(a better than b).

    Returns (as the generator's ``StopIteration.value``) the items in ascending quality.
    """
    indices = list(initial_order)
    yield from _merge_sort(indices, 0, len(indices))
    return indices


def merge_sort_bound(n_items: int) -> int:
    """Worst-case comparisons of a top-down merge sort of n items: n ceil(log2 n) - 2^ceil(log2 n) + 1."""
    if n_items < 2:
        return 0
    depth = math.ceil(math.log2(n_items))
    return n_items * depth - 2**depth + 1


@dataclass(frozen=True)
class PairsResult:
    """Outcome of :func:`pairs_rank` over R runs."""

    spearman: float  #: mean Spearman rho over runs
    spearman_std: float  #: standard deviation of rho over runs (ddof=0)
    comparisons: float  #: mean comparisons (merge steps) per run
    model_calls: int  #: distinct ordered pairs asked over all runs (shared memo)
    rounds: int  #: batched calls to the judge
    all_pairs: int  #: n (n - 1), the cost of the full pairwise matrix
    orders: list[list[int]]  #: final order of each run, best first
    rhos: list[float]  #: Spearman rho of each run


class PairsSorter:
    """R PairS merge sorts of one item set advanced together, step by step.

    ``wanted()`` lets every unfinished run go as far as the shared ``memo`` of answers allows and
    returns the ordered pairs (a, b) still needed (none asked before); the caller asks the judge
    for all of them in one batch and stores P(a better | a as option A) with :meth:`feed`. When
    ``wanted()`` returns nothing, every run is finished and :meth:`result` scores them. Several
    sorters (e.g. raw and calibrated) may share one memo.
    """

    def __init__(
        self,
        n_items: int,
        *,
        calibrated: bool = False,
        runs: int = 100,
        seed: int = 0,
        memo: dict[tuple[int, int], float] | None = None,
    ) -> None:
        self.n_items = check_int(n_items, "n_items", minimum=2)
        self.runs = check_int(runs, "runs", minimum=1)
        seed = check_int(seed, "seed", minimum=0)
        self.calibrated = bool(calibrated)
        self.memo: dict[tuple[int, int], float] = {} if memo is None else memo
        rng = np.random.default_rng(seed)
        self._sorts = [merge_sort_steps(rng.permutation(self.n_items).tolist()) for _ in range(self.runs)]
        self._pending: list[tuple[int, int] | None] = [None] * self.runs
        self._results: list[list[int] | None] = [None] * self.runs
        self.counts = [0] * self.runs
        for r in range(self.runs):
            self._advance(r, None)

    def _needed(self, a: int, b: int) -> list[tuple[int, int]]:
        return [(a, b), (b, a)] if self.calibrated else [(a, b)]

    def _probability(self, a: int, b: int) -> float:
        if self.calibrated:
            return (self.memo[(a, b)] + 1.0 - self.memo[(b, a)]) / 2.0
        return self.memo[(a, b)]

    def _advance(self, r: int, answer: float | None) -> None:
        try:
            self._pending[r] = next(self._sorts[r]) if answer is None else self._sorts[r].send(answer)
        except StopIteration as stop:
            self._pending[r], self._results[r] = None, stop.value

    def wanted(self) -> list[tuple[int, int]]:
        """Advance every run as far as the memo allows; the pairs needed next (sorted)."""
        for r in range(self.runs):
            while (pair := self._pending[r]) is not None and all(p in self.memo for p in self._needed(*pair)):
                self.counts[r] += 1
                self._advance(r, self._probability(*pair))
        return sorted({p for q in self._pending if q is not None for p in self._needed(*q) if p not in self.memo})

    def feed(self, pairs: Sequence[tuple[int, int]], answers: Sequence[float]) -> None:
        """Store the judge's answers P(a better | a as option A) for ``pairs`` in the memo."""
        if len(answers) != len(pairs):
            raise ValueError(f"judge returned {len(answers)} answers for {len(pairs)} pairs")
        for pair, answer in zip(pairs, answers, strict=True):
            value = float(answer)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"judge returned {answer!r} for pair {pair}; expected a probability in [0, 1]")
            self.memo[pair] = value

    def result(self, human_scores: ArrayLike, *, model_calls: int, rounds: int) -> PairsResult:
        """Spearman rho of every finished run against ``human_scores``, and the costs."""
        human = np.asarray(human_scores, dtype=np.float64)
        if human.shape != (self.n_items,) or not np.isfinite(human).all():
            raise ValueError(f"human_scores must be {self.n_items} finite numbers, got shape {human.shape}")
        if np.ptp(human) == 0:
            raise UndefinedMetricError("human_scores are all equal; Spearman's rho is undefined")
        if any(order is None for order in self._results):
            raise RuntimeError("result() called before every run finished; call wanted() until it is empty")
        rhos: list[float] = []
        orders: list[list[int]] = []
        for order in self._results:
            assert order is not None
            position = np.empty(self.n_items)
            position[order] = np.arange(self.n_items)
            rhos.append(ranking_spearman(position, human))
            orders.append(order[::-1])
        return PairsResult(
            spearman=float(np.mean(rhos)),
            spearman_std=float(np.std(rhos)),
            comparisons=float(np.mean(self.counts)),
            model_calls=model_calls,
            rounds=rounds,
            all_pairs=self.n_items * (self.n_items - 1),
            orders=orders,
            rhos=rhos,
        )


def pairs_rank(
    n_items: int,
    judge: BatchJudge,
    human_scores: ArrayLike,
    *,
    calibrated: bool = False,
    runs: int = 100,
    seed: int = 0,
    memo: dict[tuple[int, int], float] | None = None,
) -> PairsResult:
    """Rank n items R times by PairS merge sort and correlate each ranking with human scores.

    All runs advance together (:class:`PairsSorter`): in each round every unfinished run proceeds
    until it needs a comparison that no run has asked before, the needed ordered pairs of all runs
    are sent to ``judge`` in one batch, and the answers go into the shared memo. The number of
    rounds is what an evaluation harness pays in sequential batched model calls.

    Args:
        n_items: number of items N >= 2.
        judge: batched comparator; ``judge([(a, b), ...])`` returns P(a better | a as option A)
            for each pair, each in [0, 1].
        human_scores: length-N human scores (higher = better) for Spearman's rho.
        calibrated: judge each comparison from both presentation orders (module docstring).
        runs: number R >= 1 of sorts from random initial orders (the paper: 100).
        seed: seed of ``numpy.random.default_rng`` for the initial orders.
        memo: optional dict of known answers {(a, b): P}, updated in place (share it between the
            raw and the calibrated ranking to avoid asking a pair twice).

    Returns:
        :class:`PairsResult` (``model_calls`` counts the pairs this call asked the judge).

    Raises:
        ValueError: invalid arguments, or the judge returned a wrong number of answers or a value
            outside [0, 1].
        UndefinedMetricError: human scores constant (Spearman undefined).
    """
    human = np.asarray(human_scores, dtype=np.float64)
    if human.shape != (check_int(n_items, "n_items", minimum=2),) or not np.isfinite(human).all():
        raise ValueError(f"human_scores must be {n_items} finite numbers, got shape {human.shape}")
    if np.ptp(human) == 0:
        raise UndefinedMetricError("human_scores are all equal; Spearman's rho is undefined")
    sorter = PairsSorter(n_items, calibrated=calibrated, runs=runs, seed=seed, memo=memo)
    rounds = asked = 0
    while wanted := sorter.wanted():
        sorter.feed(wanted, list(judge(wanted)))
        rounds += 1
        asked += len(wanted)
    return sorter.result(human, model_calls=asked, rounds=rounds)


def judge_from_prefs(prefs: ArrayLike) -> BatchJudge:
    """A batched judge that answers from a precomputed N x N preference matrix (for tests and for
    re-ranking a pairwise task's full matrix without model calls).

    Raises ValueError (naming the pair) when an asked entry is NaN (missing judgement).
    """
    matrix: NDArray[np.float64] = np.asarray(prefs, dtype=np.float64)

    def judge(pairs: Sequence[tuple[int, int]]) -> list[float]:
        out = []
        for a, b in pairs:
            value = matrix[a, b]
            if np.isnan(value):
                raise ValueError(f"no judgement for pair ({a}, {b}) in prefs")
            out.append(float(value))
        return out

    return judge
