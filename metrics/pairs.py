"""PairS: merge-sort ranking with a pairwise judge as comparator (Liu et al. 2024, "Aligning with
Human Judgement: The Role of Pairwise Preference in Large Language Model Evaluators"; used in
Liu et al., "Aligning with Logic", section 5 and Table 4).

Details follow the authors' public code (github.com/cambridgeltl/PairS, commit 55ad950,
``pairs/pairs_ranking.py``): ``PairsGreedy`` (``merge``) and ``PairsBeam``
(``merge_with_confidence_beam``). Both are the same top-down recursive merge sort over the item
indices, ``mid = (left + right) // 2``, sorting in ascending quality (worst first); they differ
in the merge of two sorted runs, whose heads ``a`` (left run) and ``b`` (right run) are compared
with ``a`` shown as option A, p = P(a better than b):

* **greedy** (``method="greedy"``, the authors' default: ``scripts/eval_dataset.py`` runs
  ``PairsGreedy`` unless told otherwise, and the default of the Aligning-with-Logic paper, which
  describes PairS as a merge sort): emit ``b`` first iff p > 0.5 (strictly; a tie p = 0.5 emits
  ``a``);
* **beam** (``method="beam"``): a beam search over the merge paths. A path is scored by the
  running mean of the log-probabilities of its decisions, log(p + 1e-9) for emitting ``b`` and
  log(1 - p + 1e-9) for emitting ``a`` (the authors' ``moving_average`` with index step + 1; steps
  where one run is exhausted are forced and leave the score unchanged). A decision against a
  confident judgement is pruned: emitting ``a`` when p > 0.5 + prob_gap, emitting ``b`` when
  1 - p > 0.5 + prob_gap. After each step the ``beam_size`` best paths are kept (a stable sort;
  ties keep the order in which paths were expanded). As in the authors' code the first comparison
  may open two paths that are both expanded before the first cut, so ``beam_size=1`` is greedy
  with a one-step look-ahead at the head of every merge, not greedy itself. Within a merge, every
  comparison the beam's paths need at a step is asked together (the authors ask them one by one,
  in the same step, so the set asked is the same). The authors' path-length coefficient
  (``get_likelihood_coefficient``) is a constant 1 (a parabola through three points at height 1)
  and is left out. Their scripts use beam sizes 100 (``eval_dataset.py`` default) to 5000 and
  prob_gap 0.1 to 0.2; ``scripts/sorting.py`` averages with index step instead of step + 1 (this
  module follows the package, ``pairs/pairs_ranking.py``).

Calibrated: the comparison is judged from both presentation orders,
p = (P(a first) + 1 - P(b first)) / 2 (authors: ``(prob_A + reverse.prob_B) / 2``), the
calibration of Zheng et al. (2023) that the paper describes.

The paper reports "average Spearman correlations over 100 runs"; the authors' scripts shuffle
the items before each run, so a run here is one sort from a random initial order drawn from
``numpy.random.default_rng(seed)``. The runs share one memo of model answers: a pair (in one
presentation order) is asked of the model at most once over all runs. This is exact for a
deterministic judge (greedy decoding or log-likelihood scoring), which PairS assumes.

Comparisons are counted per run as the authors' ``api_call``: one per greedy merge step, one per
distinct pair a beam merge asks (also when calibrated, where a comparison needs two prompts);
model calls are the distinct ordered pairs asked over all runs. A greedy merge sort of n items
needs at most n * ceil(log2 n) - 2**ceil(log2 n) + 1 comparisons, against n (n - 1) ordered
pairs for the full matrix; a beam may ask up to every pair of the two runs in each merge.

Scoring: the final position of an item (0 = worst) is its score; Spearman's rho against the human
scores (:func:`~logic_consistency.metrics.ranking.ranking_spearman`) is averaged over runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import UndefinedMetricError, check_int, validate_prefs
from .ranking import ranking_spearman

#: ``ask(pairs)`` answers ordered pairs (a, b) with P(item a is better | a shown as option A).
BatchJudge = Callable[[Sequence[tuple[int, int]]], Sequence[float]]
Method = Literal["greedy", "beam"]
METHODS: tuple[str, ...] = get_args(Method)

# A sort (or one merge) is a generator that yields the comparisons (a, b) it needs next, all at
# once, and is sent back P(a better than b) for each, in order; it returns the items in ascending
# quality.
_Pairs = tuple[tuple[int, int], ...]
_Steps = Generator[_Pairs, list[float], list[int]]
_Merge = Callable[[list[int], list[int]], _Steps]


def _greedy_merge(left_run: list[int], right_run: list[int]) -> _Steps:
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


def _beam_merge(left_run: list[int], right_run: list[int], *, beam_size: int, prob_gap: float) -> _Steps:
    probs: dict[tuple[int, int], float] = {}  # (i, j) -> P(left_run[i] better than right_run[j])

    def ask(positions: list[tuple[int, int]]) -> Generator[_Pairs, list[float], None]:
        new = [pos for pos in dict.fromkeys(positions) if pos not in probs]
        if new:
            answers = yield tuple((left_run[i], right_run[j]) for i, j in new)
            probs.update(zip(new, answers, strict=True))

    yield from ask([(0, 0)])
    p = probs[(0, 0)]
    take_right = _Path(_log(p), 0, 1, (right_run[0],))
    take_left = _Path(_log(1 - p), 1, 0, (left_run[0],))
    beam = [take_right] if p > 0.5 + prob_gap else [take_left] if p < 0.5 - prob_gap else [take_right, take_left]
    for step in range(1, len(left_run) + len(right_run)):
        is_open = [path.n_left < len(left_run) and path.n_right < len(right_run) for path in beam]
        yield from ask([(path.n_left, path.n_right) for path, open_ in zip(beam, is_open, strict=True) if open_])
        candidates: list[_Path] = []
        for path, open_ in zip(beam, is_open, strict=True):
            for from_left in (True, False):
                score = path.score
                if open_:
                    p = probs[(path.n_left, path.n_right)]
                    if (from_left and p > 0.5 + prob_gap) or (not from_left and 1 - p > 0.5 + prob_gap):
                        continue  # pruned: against a confident judgement
                    score = score * step / (step + 1) + _log(1 - p if from_left else p) / (step + 1)
                if from_left and path.n_left < len(left_run):
                    candidates.append(
                        _Path(score, path.n_left + 1, path.n_right, (*path.emitted, left_run[path.n_left]))
                    )
                elif not from_left and path.n_right < len(right_run):
                    candidates.append(
                        _Path(score, path.n_left, path.n_right + 1, (*path.emitted, right_run[path.n_right]))
                    )
        candidates.sort(key=lambda path: path.score, reverse=True)  # stable, as the authors' list.sort
        beam = candidates[:beam_size]
    return list(beam[0].emitted)


def _merge_sort(indices: list[int], left: int, right: int, merge: _Merge) -> Generator[_Pairs, list[float], None]:
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


def merge_sort_steps(
    initial_order: Sequence[int], *, method: Method = "greedy", beam_size: int = 1, prob_gap: float = 0.1
) -> _Steps:
    """A resumable PairS merge sort: yields the comparisons (a, b) it needs next (a tuple; one for
    greedy, all a beam step needs for beam), receives P(a better than b) for each (a list).

    Returns (as the generator's ``StopIteration.value``) the items in ascending quality. The
    search options are validated here, before the first step.
    """
    name, size, gap = _check_search(method, beam_size, prob_gap)
    if name == "greedy":
        return _sort(list(initial_order), _greedy_merge)

    def beam_merge(left_run: list[int], right_run: list[int]) -> _Steps:
        return _beam_merge(left_run, right_run, beam_size=size, prob_gap=gap)

    return _sort(list(initial_order), beam_merge)


def _sort(indices: list[int], merge: _Merge) -> _Steps:
    yield from _merge_sort(indices, 0, len(indices), merge)
    return indices


def _comparison(lookup: Callable[[int, int], float], a: int, b: int, *, calibrated: bool) -> float:
    """P(a better than b) from P(x better | x as option A) answers; calibrated: both orders."""
    return (lookup(a, b) + 1.0 - lookup(b, a)) / 2.0 if calibrated else lookup(a, b)


def pairs_order(
    prefs: ArrayLike,
    *,
    calibrated: bool = False,
    method: Method = "greedy",
    beam_size: int = 1,
    prob_gap: float = 0.1,
    initial_order: Sequence[int] | None = None,
) -> list[int]:
    """The PairS ranking of the items of a preference matrix, worst first (as the authors' code).

    One merge sort (module docstring) of the items in ``initial_order`` with ``prefs`` as the
    comparator; equal to the authors' ``PairsGreedy`` (``method="greedy"``) and ``PairsBeam``
    (``method="beam"``) run on ``initial_order`` with a judge that answers from ``prefs``.

    Args:
        prefs: N x N matrix, ``prefs[a, b]`` = P(a better than b | a shown as option A), in
            [0, 1]; the diagonal is ignored, and NaN (a missing judgement) is allowed for pairs
            the sort never asks.
        calibrated: judge each comparison from both presentation orders,
            p = (prefs[a, b] + 1 - prefs[b, a]) / 2.
        method: ``"greedy"`` (the authors' and the paper's default) or ``"beam"``.
        beam_size: paths kept per beam step, an integer >= 1 (beam only).
        prob_gap: uncertainty tolerance of the beam's pruning, in [0, 0.5] (beam only; the
            authors' example uses 0.1).
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

    sort = merge_sort_steps(order, method=method, beam_size=beam_size, prob_gap=prob_gap)
    try:
        batch = next(sort)
        while True:
            batch = sort.send([_comparison(lookup, a, b, calibrated=bool(calibrated)) for a, b in batch])
    except StopIteration as stop:
        return list(stop.value)


def merge_sort_bound(n_items: int) -> int:
    """Worst-case comparisons of a top-down merge sort of n items: n ceil(log2 n) - 2^ceil(log2 n) + 1."""
    if n_items < 2:
        return 0
    depth = math.ceil(math.log2(n_items))
    return int(n_items * depth - 2**depth + 1)


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
    """

    def __init__(
        self,
        n_items: int,
        *,
        calibrated: bool = False,
        runs: int = 100,
        seed: int = 0,
        memo: dict[tuple[int, int], float] | None = None,
        method: Method = "greedy",
        beam_size: int = 1,
        prob_gap: float = 0.1,
    ) -> None:
        self.n_items = check_int(n_items, "n_items", minimum=2)
        self.runs = check_int(runs, "runs", minimum=1)
        seed = check_int(seed, "seed", minimum=0)
        self.calibrated = bool(calibrated)
        self.memo: dict[tuple[int, int], float] = {} if memo is None else memo
        rng = np.random.default_rng(seed)
        orders = [rng.permutation(self.n_items).tolist() for _ in range(self.runs)]
        self._sorts = [
            merge_sort_steps(order, method=method, beam_size=beam_size, prob_gap=prob_gap) for order in orders
        ]
        self._pending: list[_Pairs | None] = [None] * self.runs
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

    def wanted(self) -> list[tuple[int, int]]:
        """Advance every run as far as the memo allows; the pairs needed next (sorted)."""
        for r in range(self.runs):
            while (batch := self._pending[r]) is not None and all(
                p in self.memo for pair in batch for p in self._needed(*pair)
            ):
                self.counts[r] += len(batch)
                self._advance(
                    r, [_comparison(lambda a, b: self.memo[(a, b)], a, b, calibrated=self.calibrated) for a, b in batch]
                )
        return sorted(
            {p for batch in self._pending if batch is not None for pair in batch for p in self._needed(*pair)}
            - self.memo.keys()
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
    method: Method = "greedy",
    beam_size: int = 1,
    prob_gap: float = 0.1,
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
        method, beam_size, prob_gap: the merge (:func:`pairs_order`); greedy is the default.

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
    sorter = PairsSorter(
        n_items,
        calibrated=calibrated,
        runs=runs,
        seed=seed,
        memo=memo,
        method=method,
        beam_size=beam_size,
        prob_gap=prob_gap,
    )
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
