"""Tests for metrics/pairwise.py: s_comm (eq. 2), s_neg (eq. 3), H and pairwise_consistency."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_consistency.metrics import (
    UndefinedMetricError,
    commutativity,
    count_ties,
    human_agreement,
    negation_invariance,
    pairwise_consistency,
)

NAN = np.nan


def random_prefs(n: int, seed: int) -> np.ndarray:
    prefs = np.random.default_rng(seed).random((n, n))
    np.fill_diagonal(prefs, NAN)
    return prefs


# --- commutativity (eq. 2) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefs", "expected"),
    [
        ([[NAN, 0.8], [0.3, NAN]], 1.0),  # item 0 wins in both orders
        ([[NAN, 0.8], [0.7, NAN]], 0.0),  # option A always wins: position bias
        ([[NAN, 0.2], [0.9, NAN]], 1.0),  # item 1 wins in both orders
    ],
)
def test_commutativity_two_items(prefs: list[list[float]], expected: float) -> None:
    assert commutativity(np.array(prefs)) == expected


def test_commutativity_leaves_out_pairs_with_a_tie_in_either_order() -> None:
    # a tie is won by neither option: never scored as option A's win, nor as agreement
    with pytest.raises(UndefinedMetricError, match="missing or tied"):
        commutativity(np.array([[NAN, 0.5], [0.5, NAN]]))
    with pytest.raises(UndefinedMetricError, match="missing or tied"):
        commutativity(np.array([[NAN, 0.5], [0.3, NAN]]))  # tie on one side only
    prefs = np.array([[NAN, 0.9, 0.5], [0.2, NAN, 0.7], [0.5, 0.6, NAN]])
    # {0,1} agrees, {0,2} tied in both orders (left out), {1,2} A wins both orders
    assert commutativity(prefs) == pytest.approx(1 / 2)
    assert count_ties(prefs) == 2


def test_commutativity_three_items_and_diagonal_ignored() -> None:
    prefs = np.array(
        [
            [np.inf, 0.9, 0.6],  # {0,1}: 0 wins both orders; {0,2}: A wins both orders
            [0.2, -5.0, 0.1],  # {1,2}: 2 wins both orders
            [0.7, 0.8, NAN],
        ]
    )
    assert commutativity(prefs) == pytest.approx(2 / 3)


def test_commutativity_omit_renormalises() -> None:
    prefs = np.array([[NAN, 0.9, NAN], [0.2, NAN, 0.1], [0.7, 0.8, NAN]])
    # Pair {0,2} is missing in one order and dropped; {0,1} and {1,2} agree.
    assert commutativity(prefs, nan_policy="omit") == 1.0
    with pytest.raises(ValueError, match=r"prefs has 1 NaN off-diagonal.*nan_policy='omit'"):
        commutativity(prefs)
    with pytest.raises(UndefinedMetricError, match="commutativity is undefined"):
        commutativity(np.full((3, 3), NAN), nan_policy="omit")


# --- negation invariance (eq. 3) ----------------------------------------------------------------


def test_negation_invariance_hand_cases() -> None:
    prefs = np.array([[NAN, 0.8, 0.3], [0.4, NAN, 0.9], [0.6, 0.2, NAN]])
    # A consistent model picks option A as "worse" exactly when it did not pick it as "better".
    assert negation_invariance(prefs, 1.0 - prefs) == 1.0
    # Answering the negated question like the original one is always inconsistent.
    assert negation_invariance(prefs, prefs) == 0.0
    neg = 1.0 - prefs
    neg[0, 1] = 0.9  # (0,1): 0 is better AND option A (= 0) is worse: inconsistent
    neg[2, 1] = NAN
    assert negation_invariance(prefs, neg, nan_policy="omit") == pytest.approx(4 / 5)
    with pytest.raises(ValueError, match=r"neg_prefs has 1 NaN"):
        negation_invariance(prefs, neg)


def test_negation_invariance_leaves_out_ties() -> None:
    prefs = np.array([[NAN, 0.5], [0.5, NAN]])
    with pytest.raises(UndefinedMetricError, match="missing or tied"):
        negation_invariance(prefs, prefs)  # neither a flip nor a failure to flip: undefined
    decided = np.array([[NAN, 0.8], [0.3, NAN]])
    neg = np.array([[NAN, 0.5], [0.6, NAN]])  # (0,1) tied on the negated question: left out
    assert negation_invariance(decided, neg) == 1.0


def test_negation_invariance_undefined_and_shape_errors() -> None:
    prefs = random_prefs(3, 0)
    with pytest.raises(ValueError, match=r"neg_prefs must have the same shape as prefs"):
        negation_invariance(prefs, random_prefs(4, 0))
    with pytest.raises(UndefinedMetricError, match="negation invariance is undefined"):
        negation_invariance(prefs, np.full((3, 3), NAN), nan_policy="omit")


# --- human agreement ----------------------------------------------------------------------------


def test_human_agreement_excludes_ties() -> None:
    scores = np.array([3.0, 1.0, 1.0])  # items 1 and 2 tied: pairs (1,2), (2,1) excluded
    prefs = np.array(
        [
            [NAN, 0.9, 0.2],  # (0,1) correct; (0,2) wrong (says 2 beats 0)
            [0.3, NAN, 0.0],  # (1,0) correct; (1,2) tied, ignored whatever it says
            [0.1, 1.0, NAN],  # (2,0) correct; (2,1) tied
        ]
    )
    assert human_agreement(prefs, scores) == pytest.approx(3 / 4)
    prefs[1, 0] = NAN
    assert human_agreement(prefs, scores, nan_policy="omit") == pytest.approx(2 / 3)


def test_human_agreement_undefined_cases() -> None:
    prefs = random_prefs(3, 1)
    all_tied = "human_scores are all tied; human agreement is undefined"
    with pytest.raises(UndefinedMetricError, match=all_tied):
        human_agreement(prefs, [2, 2, 2])
    # Untied pairs for scores (1, 0, 1) are {0,1} and {1,2}; make all four judgements missing.
    prefs[0, 1] = prefs[1, 0] = prefs[1, 2] = prefs[2, 1] = NAN
    with pytest.raises(UndefinedMetricError, match="every pair with distinct human_scores"):
        human_agreement(prefs, [1, 0, 1], nan_policy="omit")


@pytest.mark.parametrize(
    ("scores", "match"),
    [
        ([1, 2], r"human_scores must have one score per item: length 2"),
        ([[1, 2, 3]], r"human_scores must be 1-D"),
        ([1, NAN, 3], r"human_scores must be finite"),
        (["a", "b", "c"], r"human_scores must be a real numeric array"),
    ],
)
def test_human_agreement_bad_scores(scores: list[object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        human_agreement(random_prefs(3, 0), scores)


# --- shared prefs validation --------------------------------------------------------------------

BAD_PREFS = [
    (np.zeros((2, 3)), r"prefs must be square"),
    (np.zeros((2, 2, 2)), r"prefs must be a 2-D"),
    (np.zeros((1, 1)), r"prefs must compare at least 2 items"),
    (np.array([[0, 1.5], [0.2, 0]]), r"prefs must hold probabilities in \[0, 1\].*1.5"),
    (np.array([[0, -0.1], [0.2, 0]]), r"prefs must hold probabilities in \[0, 1\]"),
    (np.array([[0, np.inf], [0.2, 0]]), r"prefs must hold probabilities in \[0, 1\]"),
    (np.array([[0, NAN], [0.2, 0]]), r"prefs has 1 NaN off-diagonal"),
    (np.array([["a", "b"], ["c", "d"]]), r"prefs must be a real numeric array"),
]


@pytest.mark.parametrize(("prefs", "match"), BAD_PREFS)
def test_bad_prefs_rejected_everywhere(prefs: np.ndarray, match: str) -> None:
    good = np.full((2, 2), 0.7)
    with pytest.raises(ValueError, match=match):
        commutativity(prefs)
    with pytest.raises(ValueError, match=match):
        negation_invariance(prefs, good)
    with pytest.raises(ValueError, match=match):
        human_agreement(prefs, [1, 0])
    with pytest.raises(ValueError, match=match):
        pairwise_consistency(prefs)
    with pytest.raises(ValueError, match=match.replace("prefs", "neg_prefs", 1)):
        negation_invariance(good, prefs)


@pytest.mark.parametrize("policy", ["ignore", "propagate", None])
def test_bad_nan_policy(policy: object) -> None:
    prefs = random_prefs(3, 0)
    for call in (
        lambda: commutativity(prefs, nan_policy=policy),  # type: ignore[arg-type]
        lambda: negation_invariance(prefs, prefs, nan_policy=policy),  # type: ignore[arg-type]
        lambda: human_agreement(prefs, [1, 2, 3], nan_policy=policy),  # type: ignore[arg-type]
        lambda: pairwise_consistency(prefs, ks=(3,), nan_policy=policy),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError, match=r"nan_policy must be 'raise' or 'omit'"):
            call()


# --- relabelling invariance (properties) --------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(n=st.integers(2, 9), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_relabelling_invariance(n: int, seed: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    prefs = rng.random((n, n))
    neg = rng.random((n, n))
    scores = rng.integers(0, 3, size=n).astype(float)
    scores[0] = 5.0  # at least one untied pair
    perm = np.array(data.draw(st.permutations(range(n)), label="perm"))

    def relabel(matrix: np.ndarray) -> np.ndarray:
        return matrix[np.ix_(perm, perm)]

    assert commutativity(relabel(prefs)) == commutativity(prefs)
    assert negation_invariance(relabel(prefs), relabel(neg)) == negation_invariance(prefs, neg)
    assert human_agreement(relabel(prefs), scores[perm]) == human_agreement(prefs, scores)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
def test_match_literal_paper_formulas(n: int, seed: int) -> None:
    """Vectorised code == eq. 2 and eq. 3 written as plain loops over the paper's sums."""
    rng = np.random.default_rng(seed)
    # Coarse grid so that exact 0.5 ties (won by neither option) occur often.
    prefs = rng.integers(0, 5, size=(n, n)) / 4
    neg = rng.integers(0, 5, size=(n, n)) / 4

    def winner(i: int, j: int, matrix: np.ndarray) -> int | None:  # F(x_i, x_j): the chosen item
        return None if matrix[i, j] == 0.5 else i if matrix[i, j] > 0.5 else j  # a tie chooses none

    # the paper's sums over the pairs where F chose an item (a tie leaves its pair out)
    comm = [
        winner(i, j, prefs) == winner(j, i, prefs)
        for i in range(n)
        for j in range(i + 1, n)
        if None not in (winner(i, j, prefs), winner(j, i, prefs))
    ]
    neg_flips = [
        (winner(i, j, neg) == i) == (winner(i, j, prefs) != i)  # F_neg = not F
        for i in range(n)
        for j in range(n)
        if i != j and None not in (winner(i, j, prefs), winner(i, j, neg))
    ]
    for metric, hits in ((lambda: commutativity(prefs), comm), (lambda: negation_invariance(prefs, neg), neg_flips)):
        if hits:
            assert metric() == pytest.approx(sum(hits) / len(hits))
        else:
            with pytest.raises(UndefinedMetricError):
                metric()


# --- pairwise_consistency -----------------------------------------------------------------------


def transitive_prefs(n: int) -> np.ndarray:
    """Consistent judge: item i beats j iff i < j, in both orders."""
    rows, cols = np.indices((n, n))
    prefs = np.where(rows < cols, 0.9, 0.1)
    np.fill_diagonal(prefs, NAN)
    return prefs


def test_pairwise_consistency_perfect_judge() -> None:
    prefs = transitive_prefs(5)
    result = pairwise_consistency(prefs, 1 - prefs, np.arange(5)[::-1].astype(float))
    assert result == {
        "n_items": 5,
        "s_tran_3": 1.0,
        "s_tran_5": 1.0,
        "s_comm": 1.0,
        "s_neg": 1.0,
        "human_agreement": 1.0,
    }


def test_pairwise_consistency_optional_keys_and_upper_triangle() -> None:
    prefs = np.array(
        [
            [NAN, 0.9, 0.1],  # upper triangle: 0 > 1, 2 > 0 ...
            [0.9, NAN, 0.9],  # ... 1 > 2: a 3-cycle. Lower triangle says "A wins" always.
            [0.9, 0.9, NAN],
        ]
    )
    result = pairwise_consistency(prefs, ks=(3,))
    assert set(result) == {"n_items", "s_tran_3", "s_comm"}
    assert result["s_tran_3"] == 0.0
    assert result["s_comm"] == pytest.approx(1 / 3)  # {0,1}, {1,2} flip; {0,2}: 2 wins twice


def test_pairwise_consistency_calibrated() -> None:
    # Position-biased judge: option A always favoured, but less so when the better item is B.
    prefs = np.array([[NAN, 0.9, 0.8], [0.6, NAN, 0.9], [0.7, 0.55, NAN]])
    raw = pairwise_consistency(prefs, ks=(3,))
    calibrated = pairwise_consistency(prefs, ks=(3,), calibrated=True)
    assert raw["s_comm"] == 0.0
    assert calibrated["s_comm"] == 1.0
    # Calibrated: p01 = (0.9 + 1 - 0.6)/2 = 0.65, p02 = 0.55, p12 = 0.675: 0 > 1 > 2, 0 > 2.
    assert calibrated["s_tran_3"] == 1.0
    neg = 1 - prefs
    assert pairwise_consistency(prefs, neg, ks=(3,), calibrated=True)["s_neg"] == 1.0


def test_pairwise_consistency_calibration_formula() -> None:
    from logic_consistency.metrics.pairwise import _calibrate

    prefs = random_prefs(5, 7)
    calibrated = _calibrate(prefs)
    rows, cols = np.triu_indices(5, 1)
    expected = (prefs[rows, cols] + 1 - prefs[cols, rows]) / 2
    np.testing.assert_allclose(calibrated[rows, cols], expected)
    np.testing.assert_allclose(calibrated + calibrated.T, np.where(np.eye(5, dtype=bool), NAN, 1.0))


def test_pairwise_consistency_omit_returns_none_for_undefined() -> None:
    prefs = np.full((4, 4), NAN)
    result = pairwise_consistency(prefs, prefs, [1, 1, 1, 1], ks=(3, 4), nan_policy="omit")
    assert result == {
        "n_items": 4,
        "s_tran_3": None,
        "s_tran_4": None,
        "s_comm": None,
        "s_neg": None,
        "human_agreement": None,
    }
    with pytest.raises(ValueError, match="prefs has 12 NaN"):
        pairwise_consistency(prefs, ks=(3,))


def test_pairwise_consistency_omit_partial_nan() -> None:
    prefs = transitive_prefs(4)
    prefs[0, 1] = prefs[2, 3] = NAN  # two upper-triangle pairs unparseable
    result = pairwise_consistency(prefs, human_scores=[1, 1, 1, 1], ks=(3, 4), nan_policy="omit")
    assert result["s_tran_3"] == 1.0 and result["s_tran_4"] == 1.0
    assert result["s_comm"] == 1.0
    assert result["human_agreement"] is None  # all tied: undefined, not 0 or 1


def test_pairwise_consistency_raise_propagates_undefined() -> None:
    with pytest.raises(ValueError, match="human_scores are all tied"):
        pairwise_consistency(transitive_prefs(3), human_scores=[2, 2, 2], ks=(3,))


def test_pairwise_consistency_sampled_is_seeded() -> None:
    prefs = random_prefs(10, 3)
    first = pairwise_consistency(prefs, ks=(3, 5), samples=1000, seed=4)
    assert first == pairwise_consistency(prefs, ks=(3, 5), samples=1000, seed=4)
    exact = pairwise_consistency(prefs, ks=(3, 5))
    assert abs(first["s_tran_5"] - exact["s_tran_5"]) < 0.08  # > 4 binomial SEs at M = 1000


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"ks": (3, 5)}, r"ks must be <= the number of items N = 4"),
        ({"ks": (2,)}, r"ks must be >= 3"),
        ({"ks": 3}, r"ks must be a sequence of subset sizes"),
        ({"ks": "35"}, r"ks must be a sequence of subset sizes"),
        ({"ks": (3, 3.5)}, r"ks must be an integer"),
        ({"ks": (3,), "samples": 0}, r"samples must be >= 1"),
        ({"ks": (3,), "seed": -2}, r"seed must be >= 0"),
        ({"ks": (3,), "neg_prefs": np.full((3, 3), 0.5)}, r"neg_prefs must have the same shape"),
        ({"ks": (3,), "human_scores": [1, 2, 3]}, r"human_scores must have one score per item"),
    ],
)
def test_pairwise_consistency_bad_options(options: dict[str, object], match: str) -> None:
    # Input errors raise even under "omit": only undefined metrics become None.
    with pytest.raises(ValueError, match=match):
        pairwise_consistency(
            transitive_prefs(4),
            nan_policy="omit",
            **options,  # type: ignore[arg-type]
        )


def test_pairwise_consistency_empty_ks_for_two_items() -> None:
    prefs = np.array([[NAN, 0.8], [0.3, NAN]])
    result = pairwise_consistency(prefs, 1 - prefs, [1.0, 0.0], ks=())
    assert result == {"n_items": 2, "s_comm": 1.0, "s_neg": 1.0, "human_agreement": 1.0}
    with pytest.raises(ValueError, match=r"ks must be <= the number of items N = 2"):
        pairwise_consistency(prefs)  # default ks=(3, 5) needs at least 5 items


def test_pairwise_consistency_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        pairwise_consistency(transitive_prefs(4), None, None, (3,))  # type: ignore[misc]


# ----------------------------------------------------------------------------- H: ties and presentation order
def test_human_agreement_counts_both_presentation_orders() -> None:
    """A judge that always picks option A is right in one order of every pair and wrong in the other."""
    always_a = np.full((4, 4), 0.9)
    assert human_agreement(always_a, [1.0, 2.0, 3.0, 4.0]) == 0.5
    # the PairS-calibrated matrix judges each pair once from both orders: always-A becomes 0.5
    # everywhere, a tie won by neither item, so H is undefined (not 0.5 from A winning both orders)
    calibrated = pairwise_consistency(
        always_a, human_scores=[1.0, 2.0, 3.0, 4.0], ks=(3,), calibrated=True, nan_policy="omit"
    )
    assert calibrated["human_agreement"] is None
    assert calibrated["s_comm"] is None
    assert calibrated["s_tran_3"] is None  # a tie draws no edge: no relation graph at all


def test_human_agreement_ties_exclude_or_half() -> None:
    # items 0 and 1 tied; a perfect judge on the untied pairs, arbitrary on the tied one
    scores = [1.0, 1.0, 2.0]
    prefs = np.array([[0.0, 0.9, 0.1], [0.8, 0.0, 0.1], [0.9, 0.9, 0.0]])
    assert human_agreement(prefs, scores) == 1.0  # 4 untied ordered pairs, all right
    assert human_agreement(prefs, scores, ties="exclude") == 1.0
    # "half": 6 ordered pairs, the 2 tied ones score 1/2 each: (4 + 1) / 6
    assert human_agreement(prefs, scores, ties="half") == pytest.approx(5 / 6)
    assert pairwise_consistency(prefs, human_scores=scores, ks=(), human_ties="half")[
        "human_agreement"
    ] == pytest.approx(5 / 6)
    # all tied: undefined when excluded, 1/2 with half credit
    with pytest.raises(UndefinedMetricError):
        human_agreement(prefs, [2.0, 2.0, 2.0])
    assert human_agreement(prefs, [2.0, 2.0, 2.0], ties="half") == 0.5
    with pytest.raises(ValueError, match="ties"):
        human_agreement(prefs, scores, ties="ignore")
    with pytest.raises(ValueError, match="human_ties"):
        pairwise_consistency(prefs, human_scores=scores, ks=(), human_ties="both")


def test_human_agreement_half_ties_omits_missing_judgements() -> None:
    scores = [1.0, 1.0, 2.0]
    prefs = np.array([[0.0, np.nan, 0.1], [0.8, 0.0, 0.1], [0.9, 0.9, 0.0]])
    # 5 judged ordered pairs: 4 untied right + 1 tied at 1/2
    assert human_agreement(prefs, scores, ties="half", nan_policy="omit") == pytest.approx(4.5 / 5)
    with pytest.raises(ValueError):
        human_agreement(prefs, scores, ties="half")
