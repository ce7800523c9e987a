"""PairS ranking (Liu et al. 2024, "Aligning with Human Judgement: The Role of Pairwise Preference
in Large Language Model Evaluators"; used in Liu et al., "Aligning with Logic", section 5 and
Table 4): R merge sorts (:mod:`logic_consistency.metrics.pairs_sort`) from random initial orders,
scored against human scores.

"Average Spearman correlations over 100 runs": each run sorts from an order drawn from
``numpy.random.default_rng(seed)``; runs share one memo of answers, each ordered pair asked at most
once (exact for a deterministic judge, as PairS assumes). Comparisons per run are counted as the
authors' ``api_call`` (greedy: at most n ceil(log2 n) - 2^ceil(log2 n) + 1, against n (n - 1) for
the full matrix). An item's final position (0 = worst) is its score; Spearman's rho with the human
scores is averaged over runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import UndefinedMetricError, check_int
from .pairs_sort import GREEDY, Comparisons, PairsSearch, comparison, merge_sort_steps
from .ranking import ranking_spearman

#: ``ask(pairs)`` answers ordered pairs (a, b) with P(item a is better | a shown as option A).
BatchJudge = Callable[[Sequence[tuple[int, int]]], Sequence[float]]


def _human_scores(human_scores: ArrayLike, n_items: int) -> NDArray[np.float64]:
    """``human_scores`` as ``n_items`` finite numbers that are not all equal (Spearman's rho needs that).

    Raises:
        ValueError: ``n_items`` is not an integer >= 2, or the scores are not ``n_items`` finite numbers.
        UndefinedMetricError: The scores are all equal.
    """
    human = np.asarray(human_scores, dtype=np.float64)
    if human.shape != (check_int(n_items, "n_items", minimum=2),) or not np.isfinite(human).all():
        raise ValueError(f"human_scores must be {n_items} finite numbers, got shape {human.shape}")
    if np.ptp(human) == 0:
        raise UndefinedMetricError("human_scores are all equal; Spearman's rho is undefined")
    return human


@dataclass(frozen=True)
class PairsResult:
    """Outcome of :func:`pairs_rank` over R runs."""

    spearman: float  #: mean Spearman rho over runs
    spearman_std: float  #: standard deviation of rho over runs (ddof=0)
    comparisons: float  #: mean comparisons per run (greedy: merge steps; beam: pairs asked)
    model_calls: int  #: distinct ordered pairs asked over all runs (shared memo)
    rounds: int  #: batched calls to the judge
    all_pairs: int  #: n (n - 1), the cost of the full pairwise matrix
    orders: list[list[int]]  #: final order of each run, best first
    rhos: list[float]  #: Spearman rho of each run


class PairsSorter:
    """R PairS merge sorts (greedy or beam, :func:`merge_sort_steps`) of one item set advanced
    together, step by step.

    ``wanted()`` lets every unfinished run go as far as the shared ``memo`` of answers allows and
    returns the ordered pairs (a, b) still needed (none asked before); the caller asks the judge
    for all of them in one batch and stores P(a better | a as option A) with :meth:`feed`. When
    ``wanted()`` returns nothing, every run is finished and :meth:`result` scores them. Several
    sorters (e.g. raw and calibrated) may share one memo.

    Args:
        n_items: number of items N >= 2.
        calibrated: judge each comparison from both presentation orders (module docstring).
        runs: number R >= 1 of sorts from random initial orders (the paper: 100).
        seed: seed of ``numpy.random.default_rng`` for the initial orders.
        memo: optional dict of known answers {(a, b): P}, updated in place (share it between the
            raw and the calibrated ranking to avoid asking a pair twice).
        search: the merge (:class:`~.pairs_sort.PairsSearch`); greedy is the default.
    """

    def __init__(
        self,
        n_items: int,
        *,
        calibrated: bool = False,
        runs: int = 100,
        seed: int = 0,
        memo: dict[tuple[int, int], float] | None = None,
        search: PairsSearch = GREEDY,
    ) -> None:
        self.n_items = check_int(n_items, "n_items", minimum=2)
        self.runs = check_int(runs, "runs", minimum=1)
        seed = check_int(seed, "seed", minimum=0)
        self.calibrated = bool(calibrated)
        self.memo: dict[tuple[int, int], float] = {} if memo is None else memo
        rng = np.random.default_rng(seed)
        orders = [rng.permutation(self.n_items).tolist() for _ in range(self.runs)]
        self._sorts = [merge_sort_steps(order, search) for order in orders]
        self._pending: list[Comparisons | None] = [None] * self.runs
        self._results: list[list[int] | None] = [None] * self.runs
        self.counts = [0] * self.runs
        for r in range(self.runs):
            self._advance(r, None)

    def _needed(self, a: int, b: int) -> list[tuple[int, int]]:
        return [(a, b), (b, a)] if self.calibrated else [(a, b)]

    def _advance(self, r: int, answers: list[float] | None) -> None:
        try:
            self._pending[r] = next(self._sorts[r]) if answers is None else self._sorts[r].send(answers)
        except StopIteration as stop:
            self._pending[r], self._results[r] = None, stop.value

    def _judgements(self, batch: Comparisons) -> list[tuple[int, int]]:
        """The ordered pairs the judge is asked for to answer ``batch`` (both orders when calibrated)."""
        return [p for pair in batch for p in self._needed(*pair)]

    def _advance_from_memo(self, r: int) -> None:
        """Advance run ``r`` while the memo holds every judgement its next comparisons need."""
        while (batch := self._pending[r]) is not None and all(p in self.memo for p in self._judgements(batch)):
            self.counts[r] += len(batch)
            self._advance(
                r, [comparison(lambda a, b: self.memo[(a, b)], a, b, calibrated=self.calibrated) for a, b in batch]
            )

    def wanted(self) -> list[tuple[int, int]]:
        """Advance every run as far as the memo allows; the pairs needed next (sorted)."""
        for r in range(self.runs):
            self._advance_from_memo(r)
        return sorted(
            {p for batch in self._pending if batch is not None for p in self._judgements(batch)} - self.memo.keys()
        )

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
        human = _human_scores(human_scores, self.n_items)
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
    search: PairsSearch = GREEDY,
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
        calibrated, runs, seed, memo, search: as :class:`PairsSorter`.

    Returns:
        :class:`PairsResult` (``model_calls`` counts the pairs this call asked the judge).

    Raises:
        ValueError: invalid arguments, or the judge returned a wrong number of answers or a value
            outside [0, 1].
        UndefinedMetricError: human scores constant (Spearman undefined).
    """
    human = _human_scores(human_scores, n_items)  # before any judge call
    sorter = PairsSorter(n_items, calibrated=calibrated, runs=runs, seed=seed, memo=memo, search=search)
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
