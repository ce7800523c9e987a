import math

import numpy as np
import pytest

from logic_consistency.metrics.pairs import (
    judge_from_prefs,
    merge_sort_bound,
    merge_sort_steps,
    pairs_rank,
)


def perfect_prefs(human: np.ndarray) -> np.ndarray:
    return (human[:, None] > human[None, :]).astype(float)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 16])
def test_perfect_comparator_sorts_exactly(n):
    human = np.random.default_rng(n).permutation(n).astype(float)
    result = pairs_rank(n, judge_from_prefs(perfect_prefs(human)), human, runs=20, seed=1)
    assert result.spearman == pytest.approx(1.0) and result.spearman_std == pytest.approx(0.0, abs=1e-12)
    assert all(order == list(np.argsort(-human)) for order in result.orders)
    assert result.comparisons <= merge_sort_bound(n) <= n * math.ceil(math.log2(n))
    assert result.model_calls <= result.all_pairs == n * (n - 1)


def test_runs_share_the_memo_of_answers():
    n = 10
    human = np.arange(n, dtype=float)
    asked: list[tuple[int, int]] = []
    inner = judge_from_prefs(perfect_prefs(human))

    def judge(pairs):
        asked.extend(pairs)
        return inner(pairs)

    result = pairs_rank(n, judge, human, runs=100, seed=0)
    assert len(asked) == len(set(asked)) == result.model_calls
    assert result.model_calls < 100 * result.comparisons  # far fewer than 100 separate sorts
    assert result.model_calls <= n * (n - 1)
    assert 1 <= result.rounds <= result.comparisons


def test_calibration_beats_raw_for_a_position_biased_judge():
    n = 8
    human = np.random.default_rng(3).permutation(n).astype(float)
    diff = human[:, None] - human[None, :]
    prefs = 1 / (1 + np.exp(-(diff + 4.0)))  # strong bias toward option A, plus the true signal
    raw = pairs_rank(n, judge_from_prefs(prefs), human, runs=50, seed=2)
    calibrated = pairs_rank(n, judge_from_prefs(prefs), human, runs=50, seed=2, calibrated=True)
    assert calibrated.spearman == pytest.approx(1.0)  # the bias cancels exactly when both orders are averaged
    assert calibrated.spearman >= raw.spearman
    assert raw.spearman < 0.99


def test_merge_follows_authors_tie_rule_and_order():
    # P = 0.5 everywhere: the left item is never "better", so the initial order is kept.
    sort = merge_sort_steps([2, 0, 1])
    next(sort)
    steps = 0
    try:
        while True:
            steps += 1
            sort.send(0.5)
    except StopIteration as stop:
        assert stop.value == [2, 0, 1]
    assert steps == 2


def test_bad_judge_answers_are_errors():
    with pytest.raises(ValueError, match="probability"):
        pairs_rank(3, lambda pairs: [2.0] * len(pairs), [1.0, 2.0, 3.0], runs=1)
    with pytest.raises(ValueError, match="answers"):
        pairs_rank(3, lambda pairs: [], [1.0, 2.0, 3.0], runs=1)
    with pytest.raises(ValueError, match="human_scores"):
        pairs_rank(3, lambda pairs: [1.0] * len(pairs), [1.0, 2.0], runs=1)
