"""Invariance metrics: the reference judges of issue 55 for k = 4 under ``cyclic``, the peers'
definitions (OpenCompass CircularEval, lm-eval SCORE) reimplemented here as the references, and
invariance properties."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariance_judges import LETTERS, K, content_at, cyclic_perms, swap_gold_perms

import logic_consistency.metrics as m

# Four questions, one gold at each position, as the table assumes.
GOLD = np.arange(K)
PERMS = cyclic_perms(K)


def test_always_one_letter_judge() -> None:
    for letter in range(K):
        picks = content_at(PERMS, np.full((K, K), letter))
        assert m.mean_accuracy(picks, GOLD).mean() == 1 / 4
        assert m.circular_accuracy(picks, GOLD).mean() == 0.0
        assert m.content_consistency(picks).mean() == 0.0
        assert m.pairwise_agreement(picks).mean() == 0.0
        rates = [e.value for e in m.pick_rates(picks, PERMS, n_resamples=50)]
        assert rates == [float(p == letter) for p in range(K)]
        for balanced in (False, True):
            assert m.rstd(picks, GOLD, PERMS, balanced=balanced, n_resamples=50).value == pytest.approx(
                100 * math.sqrt(3) / 4, abs=1e-12
            )
        assert m.pick_rate_kl(picks, PERMS, n_resamples=50).value == pytest.approx(math.log(K))


def test_content_oracle() -> None:
    picks = np.repeat(GOLD[:, None], K, axis=1)
    for metric in (m.original_accuracy, m.mean_accuracy, m.circular_accuracy, m.any_correct, m.majority_vote_accuracy):
        assert metric(picks, GOLD).tolist() == [1.0] * K
    assert m.content_consistency(picks).tolist() == [1.0] * K
    assert m.pairwise_agreement(picks).tolist() == [1.0] * K
    assert m.order_sensitive(picks, GOLD).tolist() == [0.0] * K
    assert m.rstd(picks, GOLD, PERMS, n_resamples=50).value == 0.0
    assert m.rstd(picks, GOLD, PERMS, balanced=True, n_resamples=50).value == 0.0
    assert [e.value for e in m.pick_rates(picks, PERMS, n_resamples=50)] == [1 / 4] * K
    assert m.pick_rate_kl(picks, PERMS, n_resamples=50).value == 0.0


def test_always_the_same_wrong_content() -> None:
    picks = np.repeat(((GOLD + 1) % K)[:, None], K, axis=1)
    assert m.content_consistency(picks).tolist() == [1.0] * K
    assert m.pairwise_agreement(picks).tolist() == [1.0] * K
    for metric in (m.original_accuracy, m.mean_accuracy, m.circular_accuracy, m.any_correct, m.majority_vote_accuracy):
        assert metric(picks, GOLD).tolist() == [0.0] * K


def opencompass_circular_scores(picks: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """OpenCompass's ``CircularEvaluator.score`` (``opencompass/datasets/circular.py``), reimplemented as the reference.

    Items are built as ``make_circular_items`` does: under pattern ``pattern`` the displayed letter
    ``pattern[i]`` shows original option i and the answer becomes ``pattern[gold]``; a prediction
    is the displayed letter of the option the model picked ("" when unparseable).
    """
    keys = list(LETTERS)
    patterns = [tuple((keys + keys)[i : i + K]) for i in range(K)]  # get_circular_patterns
    items = []
    for q in range(len(gold)):
        for v, pattern in enumerate(patterns):
            pred = pattern[picks[q, v]] if picks[q, v] >= 0 else ""
            items.append((q, pattern, pred, pattern[gold[q]]))
    origin = [(q, pred, ref) for q, pattern, pred, ref in items if pattern == patterns[0]]
    metrics = {
        "acc_origin": sum(pred == ref for _, pred, ref in origin) / len(origin) * 100,
        "acc_circular": sum(pred == ref for _, _, pred, ref in items) / len(items) * 100,
    }
    per_question: dict[int, int] = {}
    for q, _, pred, ref in items:
        per_question[q] = per_question.get(q, 0) + (pred == ref)
    for j in range(1, K + 1):
        share = sum(n >= j for n in per_question.values()) / len(per_question) * 100
        metrics["perf_circular" if j == K else f"more_{j}_circular"] = share
    return metrics


def test_accuracy_metrics_equal_opencompass_circular_evaluator() -> None:
    rng = np.random.default_rng(55)
    gold = rng.integers(0, K, size=300)
    # Each variant picks the gold with probability 0.6, else a random option or (5 %) nothing.
    picks = np.where(rng.random((300, K)) < 0.6, gold[:, None], rng.integers(0, K, size=(300, K)))
    picks[rng.random((300, K)) < 0.05] = -1
    reference = opencompass_circular_scores(picks, gold)
    assert m.original_accuracy(picks, gold).mean() * 100 == pytest.approx(reference["acc_origin"])
    assert m.mean_accuracy(picks, gold).mean() * 100 == pytest.approx(reference["acc_circular"])
    assert m.circular_accuracy(picks, gold).mean() * 100 == pytest.approx(reference["perf_circular"])
    assert m.any_correct(picks, gold).mean() * 100 == pytest.approx(reference["more_1_circular"])
    assert (m.any_correct(picks, gold) - m.circular_accuracy(picks, gold)).tolist() == m.order_sensitive(
        picks, gold
    ).tolist()
    assert 0 < reference["perf_circular"] < reference["acc_circular"] < reference["more_1_circular"] < 100


def score_options_consistency_rate(answers: list[list[str]], gold: np.ndarray, *, fixed: bool) -> float:
    """lm-eval SCORE's ``options_consistency_rate`` + ``calculate_consistency_rate``
    (``lm_eval/tasks/score/utils.py``, lm-eval 0.4.13), reimplemented as the reference.

    ``answers[q][j]`` is the letter answered under the variant that swapped the gold with letter j
    (``always_same_option`` = LETTERS[j]). ``fixed=False`` keeps SCORE's two ``if``s, the second
    undoing the first; ``fixed=True`` makes the second an ``elif`` (the swap it means to undo).
    """
    similar = pairs = 0
    for q, row in enumerate(answers):
        mapped = []
        for j, final_answer in enumerate(row):
            always_same_option, gold_label = LETTERS[j], LETTERS[gold[q]]
            if final_answer == gold_label:
                final_answer = always_same_option
                if fixed:
                    mapped.append(final_answer)
                    continue
            if final_answer == always_same_option:
                final_answer = gold_label
            mapped.append(final_answer)
        pairs += len(mapped) * (len(mapped) - 1) // 2
        similar += sum(a == b for a, b in combinations(mapped, 2))
    return similar / pairs


def test_swap_gold_always_one_letter_against_score() -> None:
    perms = swap_gold_perms(GOLD)
    picks = content_at(perms, np.zeros((K, K), dtype=int))  # always "A"
    assert m.pairwise_agreement(picks).mean() == 0.375
    answers = [["A"] * K for _ in GOLD]
    assert score_options_consistency_rate(answers, GOLD, fixed=False) == 0.625
    assert score_options_consistency_rate(answers, GOLD, fixed=True) == 0.375


def test_pairwise_agreement_equals_score_rate_without_its_defect() -> None:
    rng = np.random.default_rng(7)
    gold = rng.integers(0, K, size=200)
    perms = swap_gold_perms(gold)
    displayed = rng.integers(0, K, size=(200, K))
    picks = content_at(perms, displayed)
    answers = [[LETTERS[p] for p in row] for row in displayed]
    ours = m.pairwise_agreement(picks).mean()
    assert ours == pytest.approx(score_options_consistency_rate(answers, gold, fixed=True))
    assert ours != pytest.approx(score_options_consistency_rate(answers, gold, fixed=False))


def test_unparseable_answers_are_counted_never_guessed() -> None:
    picks = np.array([[0, 0, -1, 0], [-1, -1, -1, 1], [-1, -1, -1, -1]])
    gold = np.array([0, 1, 2])
    assert m.count_unparseable(picks) == 8
    assert m.content_consistency(picks)[0] == 0.0  # the unparseable answer agrees with nothing
    assert m.pairwise_agreement(picks)[0] == 3 / 6
    assert np.isnan(m.content_consistency(picks)[1:]).all()
    assert m.mean_accuracy(picks, gold).tolist() == [3 / 4, 1 / 4, 0.0]
    majority = m.majority_vote_accuracy(picks, gold)
    assert majority[:2].tolist() == [1.0, 1.0] and np.isnan(majority[2])
    assert m.count_undefined(majority) == 1


def test_majority_tie_is_undefined() -> None:
    picks = np.array([[0, 0, 1, 1], [0, 1, 2, 3], [2, 2, 2, 1]])
    assert m.majority_vote_accuracy(picks, np.array([0, 0, 2])).tolist()[2] == 1.0
    assert np.isnan(m.majority_vote_accuracy(picks, np.array([0, 0, 2]))[:2]).all()


def test_label_set_consistency_pairs_only_variants_with_the_same_order() -> None:
    # variants: (original, A/B/C/D), (original, 1/2/3/4), (rotated, A/B/C/D), (rotated, 1/2/3/4)
    order = cyclic_perms(1)[0]
    perms = np.array([[order[0], order[0], order[1], order[1]]] * 3)
    label_set = np.array([0, 1, 0, 1])
    picks = np.array([[2, 2, 3, 3], [2, 1, 3, 3], [2, 2, -1, -1]])
    assert m.label_set_consistency(picks, perms, label_set).tolist() == [1.0, 0.0, 0.0]
    assert np.isnan(m.label_set_consistency(picks, perms, np.zeros(4, dtype=int))).all()


options_per_question = st.integers(min_value=2, max_value=5)


@st.composite
def answered(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = draw(options_per_question)
    n = draw(st.integers(min_value=1, max_value=6))
    gold = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    picks = np.array(draw(st.lists(st.lists(st.integers(-1, k - 1), min_size=k, max_size=k), min_size=n, max_size=n)))
    return picks, gold, cyclic_perms(n, k)


CONTENT_METRICS = (m.content_consistency, m.pairwise_agreement)
ACCURACY_METRICS = (m.mean_accuracy, m.circular_accuracy, m.any_correct, m.order_sensitive, m.majority_vote_accuracy)


@settings(max_examples=60, deadline=None)
@given(answered(), st.randoms(use_true_random=False))
def test_relabelling_the_options_leaves_the_metrics_unchanged(data: tuple, random: object) -> None:
    picks, gold, perms = data
    k = perms.shape[2]
    relabel = np.array([random.sample(range(k), k) for _ in gold])  # type: ignore[attr-defined]
    new_picks = np.where(picks >= 0, np.take_along_axis(relabel, np.maximum(picks, 0), axis=1), -1)
    new_gold = relabel[np.arange(len(gold)), gold]
    for metric in CONTENT_METRICS:
        np.testing.assert_array_equal(metric(new_picks), metric(picks))
    for metric in ACCURACY_METRICS:
        np.testing.assert_array_equal(metric(new_picks, new_gold), metric(picks, gold))


@settings(max_examples=60, deadline=None)
@given(answered(), st.randoms(use_true_random=False))
def test_reordering_the_variants_leaves_the_metrics_unchanged(data: tuple, random: object) -> None:
    picks, gold, _ = data
    order = [0, *random.sample(range(1, picks.shape[1]), picks.shape[1] - 1)]  # type: ignore[attr-defined]
    for metric in CONTENT_METRICS:
        np.testing.assert_array_equal(metric(picks[:, order]), metric(picks))
    for metric in ACCURACY_METRICS:
        np.testing.assert_array_equal(metric(picks[:, order], gold), metric(picks, gold))
    consistent = m.content_consistency(picks)
    circular = m.circular_accuracy(picks, gold)
    assert (circular[~np.isnan(consistent)] <= consistent[~np.isnan(consistent)]).all()


@settings(max_examples=30, deadline=None)
@given(answered(), st.randoms(use_true_random=False))
def test_relabelling_leaves_the_displayed_position_statistics_unchanged(data: tuple, random: object) -> None:
    picks, gold, perms = data
    k = perms.shape[2]
    relabel = np.array([random.sample(range(k), k) for _ in gold])  # type: ignore[attr-defined]
    new_picks = np.where(picks >= 0, np.take_along_axis(relabel, np.maximum(picks, 0), axis=1), -1)
    new_gold = relabel[np.arange(len(gold)), gold]
    new_perms = np.take_along_axis(relabel[:, None, :], perms, axis=2)  # the same content at the same place
    np.testing.assert_array_equal(m.displayed_positions(new_picks, new_perms), m.displayed_positions(picks, perms))
    if (picks >= 0).any():
        old_rates = [e.value for e in m.pick_rates(picks, perms, n_resamples=20)]
        assert [e.value for e in m.pick_rates(new_picks, new_perms, n_resamples=20)] == old_rates
    old = m.accuracy_by_gold_position(picks, gold, perms, n_resamples=20)
    new = m.accuracy_by_gold_position(new_picks, new_gold, new_perms, n_resamples=20)
    assert [e and e.value for e in new] == [e and e.value for e in old]
