"""Liu et al. Appendix N's worked examples, for each of Table 7's rank estimation methods.

Each example is run twice: through the estimator (``metrics/ranking.py``) and through REPAIR
(``repair``), whose refined comparisons are what a study trains on. Where the suite departs from
the appendix's account (Bradley-Terry's near-equal strengths), the test states the suite's rule and
the documentation says why (docs/improving.md, "Rank estimation (Table 7, Appendix N)").
"""

from __future__ import annotations

import numpy as np
import pytest

from logic_consistency.metrics.ranking import BT_DECIMALS, elo_ratings, rank_scores
from logic_consistency.tasks.pairwise.repair import Comparison, Instance, instance_scores, repair

A, B, C, D = "A", "B", "C", "D"


def _instance(*wins: tuple[str, str]) -> Instance:
    """An instance whose comparisons are played in the given order, the winner shown first."""
    items = sorted({item for pair in wins for item in pair})
    return Instance(
        texts={item: f"text {item}" for item in items}, comparisons=[Comparison(win, lose, win) for win, lose in wins]
    )


def _order(instance: Instance, method: str) -> list[list[str]]:
    """The ranking REPAIR estimates: groups of tied items, best first (ties kept as groups)."""
    scores = instance_scores(instance, method)
    levels = sorted({round(s, 9) for s in scores.values()}, reverse=True)
    return [sorted(item for item, s in scores.items() if round(s, 9) == level) for level in levels]


def _refined_wins(instance: Instance, method: str) -> set[tuple[str, str]]:
    """(winner, loser) pairs of the REPAIR-ed set; each pair stands in both presentation orders."""
    refined = repair({"x": instance}, method=method)["x"].comparisons
    pairs = {(c.winner, c.loser) for c in refined}
    assert len(refined) == 2 * len(pairs), "every refined pair is shown in both orders"
    return pairs


# {A > B, A > C}: "The win-loss rate does not infer a relationship between B and C, correctly
# predicting A > B = C." Elo "predicts A > C > B"; "if the order is reversed to {A > C, A > B}, Elo
# instead predicts A > B > C". B-T "predicts A > B ~ C, where B and C receive slightly different
# scores": the suite keeps them tied (see test_bradley_terry_keeps_the_symmetric_pair_tied).
FORK = [(A, B), (A, C)]
FORK_EXPECTED = {
    "win_loss": [[A], [B, C]],
    "elo": [[A], [C], [B]],
    "bradley_terry": [[A], [B, C]],
}
# {A > B, B > C, C > D}: "an ideal ranking should yield A > B > C > D. However, the win-loss rate
# produces A > B = C > D"; Elo and B-T "incorporate transitive information".
CHAIN = [(A, B), (B, C), (C, D)]
CHAIN_EXPECTED = {
    "win_loss": [[A], [B, C], [D]],
    "elo": [[A], [B], [C], [D]],
    "bradley_terry": [[A], [B], [C], [D]],
}


@pytest.mark.parametrize("method", sorted(FORK_EXPECTED))
def test_the_fork_example(method: str) -> None:
    assert _order(_instance(*FORK), method) == FORK_EXPECTED[method]


@pytest.mark.parametrize("method", sorted(CHAIN_EXPECTED))
def test_the_chain_example(method: str) -> None:
    assert _order(_instance(*CHAIN), method) == CHAIN_EXPECTED[method]


def test_elo_reverses_with_the_order_of_the_fork() -> None:
    assert _order(_instance((A, C), (A, B)), "elo") == [[A], [B], [C]]


def test_elo_plays_each_comparison_once_with_the_documented_constants() -> None:
    # K = 32, start 1000, scale 400: after A > B both move by 16; then A (1016) > C (1000):
    # E_A = 1 / (1 + 10 ** (-16 / 400)), A gains 32 (1 - E_A) and C loses as much.
    ratings = elo_ratings([0, 0], [1, 2], 3)
    gain = 32 * (1 - 1 / (1 + 10 ** (-16 / 400)))
    np.testing.assert_allclose(ratings, [1016 + gain, 984, 1000 - gain])
    assert gain < 16  # the second win counts less: C ends above B, the appendix's A > C > B


def test_bradley_terry_keeps_the_symmetric_pair_tied() -> None:
    # B and C are symmetric in {A > B, A > C}: their maximum-likelihood strengths are equal, and the
    # fit returns them equal up to its stopping tolerance; rounded to BT_DECIMALS they tie exactly.
    strengths = rank_scores(np.array([0, 0]), np.array([1, 2]), 3, method="bradley_terry")
    assert strengths[1] == strengths[2] and strengths[0] > strengths[1]
    assert BT_DECIMALS == 6


@pytest.mark.parametrize(
    ("method", "wins", "expected"),
    [
        # win-loss: B and C stay uncompared (a partial order), as the appendix's "Pros" says
        ("win_loss", FORK, {(A, B), (A, C)}),
        ("elo", FORK, {(A, B), (A, C), (C, B)}),
        ("bradley_terry", FORK, {(A, B), (A, C)}),
        ("win_loss", CHAIN, {(A, B), (A, C), (A, D), (B, D), (C, D)}),
        ("elo", CHAIN, {(A, B), (A, C), (A, D), (B, C), (B, D), (C, D)}),
        ("bradley_terry", CHAIN, {(A, B), (A, C), (A, D), (B, C), (B, D), (C, D)}),
    ],
)
def test_repair_trains_on_the_estimated_order(method: str, wins: list[tuple[str, str]], expected: set) -> None:
    assert _refined_wins(_instance(*wins), method) == expected
