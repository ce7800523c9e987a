"""Negation and self-validation of a multiple-choice (or generative) model, per question.

Negation: the same question asked as "which option is incorrect?"; ``negation_picks`` has the
layout of ``picks`` (:mod:`~logic_consistency.metrics.invariance`) and holds the ORIGINAL index of
the option picked as incorrect. Self-validation (generator-validator consistency, Li et al., ICLR
2024, "Benchmarking and Improving Generator-Validator Consistency of LMs"): the model is asked
Yes/No whether an answer is right; a verdict is 1.0 (Yes), 0.0 (No) or NaN (unparseable or not
asked). Every function returns one float per question, NaN where undefined.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._invariance_input import UNPARSEABLE, check_gold, check_picks, check_same_shape, check_verdicts
from ._validation import check_int

FloatArray = NDArray[np.float64]


def negation_contradiction(picks: ArrayLike, negation_picks: ArrayLike) -> FloatArray:
    """Negation contradiction: the share of variants where the option picked as correct is also picked as incorrect.

    contra(q) = #{v : picks[q, v] = negation_picks[q, v], both parsed} / #{v : both parsed}; NaN
    when no variant has both answers parsed. Content-level (original indices), so it does not
    matter where the option was shown. Ideal value 0. Reference: the negation-invariance idea of
    Liu et al. (ICML 2025), "Aligning with Logic", eq. 3, applied to multiple choice.
    """
    affirmed = check_picks(picks)
    negated = check_picks(negation_picks, "negation_picks")
    check_same_shape(affirmed, negated, ("picks", "negation_picks"))
    both = (affirmed != UNPARSEABLE) & (negated != UNPARSEABLE)
    n_both = both.sum(axis=1)
    same = ((affirmed == negated) & both).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_both > 0, same / n_both, np.nan)


def negation_accuracy(negation_picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Accuracy under negation: the share of parsed variants whose option picked as incorrect is not the gold.

    neg_acc(q) = #{v : negation_picks[q, v] parsed, != gold[q]} / #{v : parsed}; NaN when none
    parsed. Ideal value 1; a random pick among k options scores (k - 1) / k.
    """
    negated = check_picks(negation_picks, "negation_picks")
    gold_checked = check_gold(gold, negated.shape[0])
    parsed = negated != UNPARSEABLE
    right = (parsed & (negated != gold_checked[:, None])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(parsed.sum(axis=1) > 0, right / parsed.sum(axis=1), np.nan)


def own_verdicts(verdicts: ArrayLike, picks: ArrayLike) -> FloatArray:
    """The validator's verdict on the generator's own answer: ``verdicts[q, picks[q]]``.

    Args:
        verdicts: questions x k verdicts on each ORIGINAL option (multiple-choice self-validation).
        picks: questions, the generator's pick (original index; -1 unparseable gives NaN).
    """
    table = check_verdicts(verdicts, "verdicts", 2)
    picked = check_picks(np.asarray(picks)[:, None] if np.ndim(picks) == 1 else picks, n_options=table.shape[1])
    if picked.shape != (table.shape[0], 1):
        raise ValueError(
            f"picks must be 1-D with one generator pick per question ({table.shape[0]}), got {picked.shape}"
        )
    rows = np.arange(table.shape[0])
    return np.where(picked[:, 0] == UNPARSEABLE, np.nan, table[rows, np.maximum(picked[:, 0], 0)])


def gv_consistency(own_verdict: ArrayLike) -> FloatArray:
    """Generator-validator consistency: 1 if the model says Yes to its own answer, 0 if No, NaN if unparseable.

    c(q) = 1(validator(q, generator(q)) = Yes), over the questions whose generator answer and
    verdict both parsed (Li et al. 2024, section 2); for a multiple-choice task pass
    :func:`own_verdicts`. Ideal value 1.
    """
    return check_verdicts(own_verdict, "own_verdict", 1)


def validator_accuracy(verdicts: ArrayLike, truth: ArrayLike) -> FloatArray:
    """Validator accuracy: the share of a question's parsed verdicts that match the truth.

    va(q) = #{j : verdicts[q, j] parsed, = truth[q, j]} / #{j : parsed}; NaN when none parsed.
    Multiple-choice: ``verdicts`` on every option and ``truth[q, j] = (j == gold[q])``
    (:func:`gold_truth`); generative: one column, the verdict on the generator's answer and whether
    the base task scored it right. Ideal value 1.
    """
    table = check_verdicts(verdicts, "verdicts", 2)
    expected = np.asarray(truth)
    if expected.dtype.kind != "b":
        raise ValueError(f"truth must be a boolean array (is each answer right?), got dtype {expected.dtype}")
    check_same_shape(table, expected, ("verdicts", "truth"))
    parsed = ~np.isnan(table)
    right = (parsed & (table == expected)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(parsed.sum(axis=1) > 0, right / parsed.sum(axis=1), np.nan)


def gold_truth(gold: ArrayLike, n_options: int) -> NDArray[np.bool_]:
    """questions x k booleans: ``truth[q, j] = (j == gold[q])``, for :func:`validator_accuracy`."""
    array = np.asarray(gold)
    gold_checked = check_gold(
        array, array.shape[0] if array.ndim == 1 else 0, check_int(n_options, "n_options", minimum=1)
    )
    return np.asarray(gold_checked[:, None] == np.arange(n_options))


def self_endorsed_wrong(own_verdict: ArrayLike, own_correct: ArrayLike) -> FloatArray:
    """Self-endorsed wrong answer: 1 if the model says Yes to its own WRONG answer, 0 if No.

    sew(q) = 1(own_verdict[q] = Yes) for the questions whose own answer is wrong and verdict
    parsed; NaN for a right answer (nothing wrong to endorse) or an unparseable verdict, so the
    mean over questions is P(Yes | own answer wrong). Ideal value 0.
    """
    verdict = check_verdicts(own_verdict, "own_verdict", 1)
    correct = np.asarray(own_correct)
    if correct.dtype.kind != "b":
        raise ValueError(f"own_correct must be a boolean array, got dtype {correct.dtype}")
    check_same_shape(verdict, correct, ("own_verdict", "own_correct"))
    return np.where(correct, np.nan, verdict)
