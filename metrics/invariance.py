"""Invariance of a multiple-choice model under option permutation and relabelling: per-question metrics.

Layout (shared by :mod:`.invariance_bias` and :mod:`.invariance_validation`): ``picks[q, v]`` is the
ORIGINAL index of the option picked for question q under variant v (-1 = unparseable: counted,
never guessed; it is never right and never agrees with another pick), variant 0 the original order;
``gold[q]`` the original index of the gold option; ``perms[q, v, p]`` the original option shown at
displayed position p. Every function returns one float per question (NaN where undefined, counted
by :func:`count_undefined`), so a mean over questions (lm-eval's ``mean``) is clustered by question.
References: OpenCompass CircularEval (``opencompass/datasets/circular.py``); Zheng et al. (ICLR
2024), "Large Language Models Are Not Robust Multiple Choice Selectors" (PriDe).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._invariance_input import UNPARSEABLE, check_gold, check_label_set, check_perms, check_picks

FloatArray = NDArray[np.float64]


def _correct(picks: ArrayLike, gold: ArrayLike) -> NDArray[np.bool_]:
    """``picks[q, v] == gold[q]`` (an unparseable pick is never right)."""
    checked = check_picks(picks)
    return np.asarray(checked == check_gold(gold, checked.shape[0])[:, None])


def count_unparseable(picks: ArrayLike) -> int:
    """Number of unparseable answers (``picks == -1``) over all questions and variants."""
    return int((check_picks(picks) == UNPARSEABLE).sum())


def count_undefined(values: ArrayLike) -> int:
    """Number of questions whose per-question value is NaN (undefined): left out of the mean, reported."""
    return int(np.isnan(np.asarray(values, dtype=np.float64)).sum())


def original_accuracy(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Accuracy on the original order: 1 if variant 0's pick is the gold, else 0.

    acc_orig(q) = 1(picks[q, 0] == gold[q]). The mean over questions equals the base task's own
    ``acc`` on the same prompts. Ideal value 1.
    """
    return _correct(picks, gold)[:, 0].astype(np.float64)


def mean_accuracy(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Mean accuracy over the variants of each question.

    acc_mean(q) = 1/V * sum_v 1(picks[q, v] == gold[q]); its mean over questions is OpenCompass's
    ``acc_circular`` (every rotation scored as its own question) when the variants are the k
    rotations. An always-one-letter judge scores 1/k under ``cyclic``. Ideal value 1.
    """
    return np.asarray(_correct(picks, gold).mean(axis=1), dtype=np.float64)


def circular_accuracy(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """CircularEval accuracy: 1 if the question is right under every variant, else 0.

    acc_circ(q) = prod_v 1(picks[q, v] == gold[q]) (OpenCompass ``perf_circular``,
    ``opencompass/datasets/circular.py``, ``CircularEvaluator``). Ideal value 1; a judge that
    ignores the content scores 0 under ``cyclic``.
    """
    return np.asarray(_correct(picks, gold).all(axis=1), dtype=np.float64)


def any_correct(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Right under at least one variant: 1(exists v: picks[q, v] == gold[q]).

    OpenCompass's ``more_1_circular``. An upper bound of :func:`circular_accuracy`; the gap
    between the two is the share of :func:`order_sensitive` questions. Ideal value 1.
    """
    return np.asarray(_correct(picks, gold).any(axis=1), dtype=np.float64)


def order_sensitive(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Order-sensitive question: 1 if correctness differs across the variants, else 0.

    sens(q) = 1(exists v, w: correct(q, v) != correct(q, w)) = any_correct(q) - circular(q).
    Ideal value 0 (a question is right under every order or wrong under every order).
    """
    correct = _correct(picks, gold)
    return np.asarray((correct.any(axis=1) & ~correct.all(axis=1)), dtype=np.float64)


def _majority(row: NDArray[np.int64]) -> int | None:
    """The unique most frequent parsed pick of a row, or None (no parsed pick, or a tie)."""
    counts = Counter(int(pick) for pick in row if pick != UNPARSEABLE).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def majority_vote_accuracy(picks: ArrayLike, gold: ArrayLike) -> FloatArray:
    """Majority-vote accuracy: 1 if the option content picked most often across the variants is the gold.

    maj(q) = 1(argmax_o #{v : picks[q, v] = o} == gold[q]) over parsed picks. A tie for the most
    frequent content (or no parsed pick) has no majority: NaN, never broken by a guess (count it
    with :func:`count_undefined`). Ideal value 1. Reference: self-consistency voting over
    permutations, as in Zheng et al. (2024), section 5 baselines.
    """
    checked = check_picks(picks)
    gold_checked = check_gold(gold, checked.shape[0])
    out = np.full(checked.shape[0], np.nan)
    for q, row in enumerate(checked):
        winner = _majority(row)
        if winner is not None:
            out[q] = float(winner == gold_checked[q])
    return out


def _agreeing_pairs(row: NDArray[np.int64]) -> tuple[int, int]:
    """(pairs of parsed picks that agree, pairs of parsed picks) in one row."""
    counts = np.bincount(row[row != UNPARSEABLE])
    n_parsed = int(counts.sum())
    return int((counts * (counts - 1) // 2).sum()), n_parsed * (n_parsed - 1) // 2


def content_consistency(picks: ArrayLike) -> FloatArray:
    """Content-level consistency: 1 if the same option content is picked under every variant.

    cons(q) = 1(|{picks[q, v] : v}| == 1 and no pick unparseable). An unparseable answer breaks
    consistency (it agrees with nothing); a question with fewer than 2 parsed picks is NaN.
    Independent of the gold: a judge that always picks the same wrong content scores 1, one that
    always answers the same letter scores 0 under ``cyclic``. Ideal value 1.
    """
    checked = check_picks(picks)
    n_parsed = (checked != UNPARSEABLE).sum(axis=1)
    same = (checked == checked[:, :1]).all(axis=1) & (checked[:, 0] != UNPARSEABLE)
    return np.where(n_parsed >= 2, same.astype(np.float64), np.nan)


def pairwise_agreement(picks: ArrayLike) -> FloatArray:
    """Pairwise agreement: the share of variant pairs that pick the same option content.

    agree(q) = #{v < w : picks[q, v] = picks[q, w] != -1} / C(V, 2), over all V variants (an
    unparseable pick agrees with no other); NaN when fewer than 2 picks parsed. This is the
    content-level form of lm-eval SCORE's option-order consistency rate (``score/utils.py``,
    ``calculate_consistency_rate``), without the defect of its ``options_consistency_rate``:
    there ``if final_answer == labels[original_answer_index]: final_answer = always_same_option``
    is followed by ``if final_answer == always_same_option: final_answer =
    labels[original_answer_index]``, so the second ``if`` maps the first one's result back and
    both the gold's letter and the swapped position's letter become the gold's letter. An answer
    picking the content that the swap moved to the gold's old letter is read as the gold: under
    ``swap_gold`` with gold uniform over 4 positions, always answering "A" scores 0.625 there and
    0.375 here. Ideal value 1.
    """
    checked = check_picks(picks)
    n_variants = checked.shape[1]
    out = np.full(checked.shape[0], np.nan)
    if n_variants < 2:
        return out
    for q, row in enumerate(checked):
        agreeing, parsed_pairs = _agreeing_pairs(row)
        if parsed_pairs:
            out[q] = agreeing / (n_variants * (n_variants - 1) // 2)
    return out


def label_set_consistency(picks: ArrayLike, perms: ArrayLike, label_set: ArrayLike) -> FloatArray:
    """Consistency across label sets: the same content picked when only the labels change.

    Over the pairs of variants (v, w) of question q that show the options in the same order
    (``perms[q, v] == perms[q, w]``) under different label sets (A/B/C/D vs 1/2/3/4 vs a/b/c/d),
    ids(q) = 1 if every such pair picks the same content (an unparseable pick agrees with
    nothing), else 0; NaN when q has no such pair. Ideal value 1. Reference: Zheng et al. (2024),
    section 3 (option IDs drive selection bias); lm-eval SCORE's option-format robustness.
    """
    checked = check_picks(picks)
    order = check_perms(perms, checked.shape)
    labels = check_label_set(label_set, checked.shape[1])
    check_picks(checked, n_options=order.shape[2])
    out = np.full(checked.shape[0], np.nan)
    differ = labels[:, None] != labels[None, :]
    for q in range(checked.shape[0]):
        same_order = (order[q][:, None, :] == order[q][None, :, :]).all(axis=2)
        v, w = np.nonzero(np.triu(same_order & differ, 1))
        if v.size:
            agree = (checked[q, v] == checked[q, w]) & (checked[q, v] != UNPARSEABLE)
            out[q] = float(agree.all())
    return out
