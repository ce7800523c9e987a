"""Selection bias (RStd, pick rates, accuracy by gold position), PriDe, negation and self-validation metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from invariance_judges import K, content_at, cyclic_perms, swap_gold_perms

import logic_consistency.metrics as m
from logic_consistency.metrics import UndefinedMetricError


def pride_simple(observed: np.ndarray, rotations: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """The authors' per-question estimate (chujiezheng/LLM-MCQ-Bias, ``code/debias_utils.py``, ``simple``),
    reimplemented as the reference: ``observed[v, d]`` probabilities under rotation v (normalised to
    sum 1); returns (permutation-averaged content probabilities, prior = softmax(mean_v log observed))."""
    observed = observed / observed.sum(axis=1, keepdims=True)
    gathered: list[list[float]] = [[] for _ in range(observed.shape[1])]
    for v, indices in enumerate(rotations):
        for d, original in enumerate(indices):
            gathered[original].append(observed[v, d])
    logits = np.log(observed).mean(axis=0)
    prior = np.exp(logits - logits.max())
    return np.array([np.mean(g) for g in gathered]), prior / prior.sum()


def biased_model(gold: np.ndarray, perms: np.ndarray, prior: np.ndarray, strength: float) -> np.ndarray:
    """Log-scores P_obs(d) ∝ prior(d) x content(o shown at d), content favouring the gold by ``strength``."""
    content = np.where(perms == gold[:, None, None], strength, 1.0)
    return np.log(prior)[None, None, :] + np.log(content)


def test_pride_per_question_prior_and_prediction_equal_the_authors_code() -> None:
    rng = np.random.default_rng(3)
    perms = cyclic_perms(20)
    scores = rng.normal(size=perms.shape)
    gold = rng.integers(0, K, size=20)
    priors = m.question_priors(scores, perms)
    correct = m.pride_debiased_accuracy(scores, perms, gold)  # every question estimates: the permutation average
    for q in range(20):
        debiased, prior = pride_simple(np.exp(scores[q]), [tuple(row) for row in perms[q]])
        np.testing.assert_allclose(priors[q], prior, rtol=1e-12)
        assert correct[q] == float(debiased.argmax() == gold[q])
    estimate = m.estimated_prior(scores, perms, n_resamples=200)
    np.testing.assert_allclose([e.value for e in estimate], priors.mean(axis=0), rtol=1e-12)
    assert all(e.low <= e.value <= e.high for e in estimate)


def test_pride_recovers_a_known_prior_and_debiases() -> None:
    n = 40
    gold = np.arange(n) % K
    perms = cyclic_perms(n)
    prior = np.array([0.7, 0.1, 0.1, 0.1])
    scores = biased_model(gold, perms, prior, strength=3.0)  # 0.7 x 1 > 0.1 x 3: "A" wins unless the gold is there
    estimate = m.estimated_prior(scores, perms, n_resamples=200)
    np.testing.assert_allclose([e.value for e in estimate], prior, rtol=1e-12)
    observed_picks = content_at(perms, scores.argmax(axis=2))
    assert m.original_accuracy(observed_picks, gold).mean() == 1 / 4
    mask = m.pride_estimation_set(scores, perms)
    assert mask.sum() == int(n * 0.05)  # PriDe's RATIO_PREFIX_SAMPLES share
    assert m.pride_debiased_accuracy(scores, perms, gold, mask).mean() == 1.0


def test_pride_missing_scores_and_unbalanced_variants() -> None:
    gold = np.arange(K)
    perms = cyclic_perms(K)
    scores = biased_model(gold, perms, np.full(K, 1 / K), 2.0)
    scores[1, 2, 0] = np.nan  # a rotation's score missing: left out of the estimation, debiased on its original order
    scores[3, 0, 1] = np.nan  # the original order's score missing: no prediction
    result = m.pride_debiased_accuracy(scores, perms, gold)
    assert result[1] == 1.0 and np.isnan(result[3]) and m.count_undefined(result) == 1
    with pytest.raises(ValueError, match="estimation question 1"):
        m.estimated_prior(scores, perms, np.array([True, True, False, False]))
    unbalanced = swap_gold_perms(gold)[:, :2]
    with pytest.raises(UndefinedMetricError, match="balanced"):
        m.pride_estimation_set(np.zeros(unbalanced.shape), unbalanced)


def test_rstd_is_pride_definition_on_the_original_order() -> None:
    rng = np.random.default_rng(11)
    gold = rng.integers(0, K, size=400)
    perms = cyclic_perms(400)
    picks = np.where(rng.random((400, K)) < 0.5, gold[:, None], rng.integers(0, K, size=(400, K)))
    recalls = [np.mean(picks[gold == p, 0] == p) * 100 for p in range(K)]  # debias_pride.py: np.std of recalls
    estimate = m.rstd(picks, gold, perms, n_resamples=300)
    assert estimate.value == pytest.approx(np.std(recalls), rel=1e-12)
    assert estimate.low < estimate.value < estimate.high
    by_position = m.accuracy_by_gold_position(picks, gold, perms, n_resamples=300)
    assert all(e is not None and 0 < e.value < 1 for e in by_position)


def test_balanced_rstd_needs_balanced_variants() -> None:
    gold = np.arange(K)
    picks = np.zeros((K, 2), dtype=int)
    with pytest.raises(ValueError, match="question 0 shows it"):
        m.rstd(picks, gold, cyclic_perms(K)[:, :2], balanced=True)
    with pytest.raises(UndefinedMetricError, match="fewer than 2"):
        m.rstd(np.zeros((3, K), dtype=int), np.zeros(3, dtype=int), cyclic_perms(3))


def test_interval_is_nan_when_a_resample_leaves_it_undefined() -> None:
    gold = np.array([0, 0, 0, 1])
    picks = np.repeat(gold[:, None], 1, axis=1)
    by_position = m.accuracy_by_gold_position(picks, gold, cyclic_perms(4)[:, :1], n_resamples=200)
    assert by_position[2] is None and by_position[3] is None
    position_one = by_position[1]
    assert position_one is not None and position_one.value == 1.0 and math.isnan(position_one.low)


def test_rstd_interval_is_nan_when_a_resample_shows_every_gold_at_one_position() -> None:
    # golds at B, C, D, B, B on the original order: a resample of the B questions alone has one position
    gold = np.array([1, 2, 3, 1, 1])
    picks = np.repeat(gold[:, None], K, axis=1)
    estimate = m.rstd(picks, gold, cyclic_perms(5), n_resamples=500)
    assert estimate.value == 0.0
    assert math.isnan(estimate.low) and math.isnan(estimate.high) and math.isnan(estimate.stderr)
    balanced = m.rstd(picks, gold, cyclic_perms(5), balanced=True, n_resamples=500)
    assert not math.isnan(balanced.stderr) and balanced.low <= balanced.value <= balanced.high


def test_pick_rate_is_one_position_of_pick_rates_with_its_stderr() -> None:
    rng = np.random.default_rng(5)
    picks, perms = rng.integers(0, K, size=(30, K)), cyclic_perms(30)
    rates = m.pick_rates(picks, perms, n_resamples=400, seed=2)
    for position in range(K):
        assert m.pick_rate(picks, perms, position, n_resamples=400, seed=2) == rates[position]
        assert 0 < rates[position].stderr < rates[position].high - rates[position].low


def test_estimated_prior_at_is_one_label_of_estimated_prior() -> None:
    rng = np.random.default_rng(6)
    perms = cyclic_perms(25)
    scores = rng.normal(size=perms.shape)
    prior = m.estimated_prior(scores, perms, n_resamples=300, seed=1)
    for position in range(K):
        assert m.estimated_prior_at(scores, perms, position, n_resamples=300, seed=1) == prior[position]
    assert sum(e.value for e in prior) == pytest.approx(1.0)


def test_negation() -> None:
    picks = np.array([[0, 1, 0], [2, 2, -1], [-1, -1, -1]])
    negation = np.array([[0, 0, 3], [1, 2, 2], [1, 1, 1]])
    contradiction = m.negation_contradiction(picks, negation)
    assert contradiction[:2].tolist() == [1 / 3, 1 / 2] and np.isnan(contradiction[2])
    assert m.negation_accuracy(negation, np.array([0, 2, 1])).tolist() == [1 / 3, 1 / 3, 0.0]


def test_self_validation() -> None:
    verdicts = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, np.nan], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    picks = np.array([0, 1, 3, -1])
    gold = np.array([0, 0, 2, 1])
    own = m.own_verdicts(verdicts, picks)
    assert own[:3].tolist() == [1.0, 1.0, 0.0] and np.isnan(own[3])
    assert m.gv_consistency(own)[:3].tolist() == [1.0, 1.0, 0.0]
    assert m.validator_accuracy(verdicts, m.gold_truth(gold, K)).tolist() == [1.0, 2 / 3, 1.0, 1.0]
    endorsed = m.self_endorsed_wrong(own, picks == gold)
    assert np.isnan(endorsed[0]) and endorsed[1:3].tolist() == [1.0, 0.0] and np.isnan(endorsed[3])
    # generative form: one verdict per question on its own answer, scored right or wrong by the base task
    assert m.validator_accuracy(np.array([[1.0], [0.0], [np.nan]]), np.array([[True], [True], [False]]))[
        :2
    ].tolist() == [
        1.0,
        0.0,
    ]
