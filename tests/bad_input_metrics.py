"""Bad-input cases of the metric API (``metrics/``): each message names the argument at fault."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from bad_inputs_support import CaseTable

import logic_consistency.metrics as m

CASES = CaseTable()

P = np.array([[0.5, 1.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.0, 0.5]])
W = np.triu(np.ones((4, 4), dtype=bool), 1)
PERFECT = [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]
TIES = np.full((3, 3), 0.5)
PICKS = np.zeros((1, 2), dtype=int)  # one question, two variants, option 0 picked
PERMS = np.array([[[0, 1, 2, 3], [1, 2, 3, 0]]])
METRIC_ABUSE: list[tuple[str, Callable[[], Any], str]] = [
    ("bootstrap_ci confidence 1.5", lambda: m.bootstrap_ci([1, 2, 3], confidence=1.5), "confidence"),
    ("bootstrap_ci n_resamples 0", lambda: m.bootstrap_ci([1, 2, 3], n_resamples=0), "n_resamples"),
    ("bootstrap_ci empty", lambda: m.bootstrap_ci([]), "values"),
    ("bootstrap_ci NaN", lambda: m.bootstrap_ci([1.0, math.nan]), "NaN"),
    ("bootstrap_ci seed -1", lambda: m.bootstrap_ci([1, 2, 3], seed=-1), "seed"),
    ("causal_consistency 3 labels", lambda: m.causal_consistency([1, 2, 3]), "ranked_labels"),
    ("causal_consistency duplicate", lambda: m.causal_consistency([*PERFECT[:-1], 4]), "duplicate"),
    ("causal_consistency a string", lambda: m.causal_consistency("abc"), "ranked_labels"),  # type: ignore[arg-type]
    ("commutativity 1-D", lambda: m.commutativity([0.5, 1.0]), "prefs"),
    ("commutativity not square", lambda: m.commutativity(np.zeros((2, 3))), "square"),
    ("commutativity out of [0, 1]", lambda: m.commutativity(P * 3), "prefs"),
    ("commutativity NaN", lambda: m.commutativity(np.array([[0.5, np.nan], [0.5, 0.5]])), "nan_policy"),
    ("commutativity nan_policy", lambda: m.commutativity(P, nan_policy="ignore"), "nan_policy"),  # type: ignore[arg-type]
    ("commutativity 1 item", lambda: m.commutativity(np.array([[0.5]])), "at least 2 items"),
    ("confusion_matrix bad ranking", lambda: m.confusion_matrix([[1, 2]]), "rankings[0]"),
    ("confusion_matrix a string", lambda: m.confusion_matrix("ab"), "rankings"),  # type: ignore[arg-type]
    ("confusion_matrix no rankings", lambda: m.confusion_matrix([], normalize=True), "rankings is empty"),
    ("has_cycle vertex out of range", lambda: m.has_cycle([[5]]), "adjacency[0]"),
    ("has_cycle a string", lambda: m.has_cycle("ab"), "adjacency[0]"),  # type: ignore[arg-type]
    ("human_agreement length", lambda: m.human_agreement(P, [1, 2]), "human_scores"),
    ("human_agreement NaN", lambda: m.human_agreement(P, [1, 2, math.nan]), "human_scores"),
    ("human_agreement ties", lambda: m.human_agreement(P, [1, 2, 3], ties="maybe"), "ties"),
    ("human_agreement all tied", lambda: m.human_agreement(P, [1, 1, 1]), "tied"),
    ("intra_group_clustering empty", lambda: m.intra_group_clustering([]), "polarities"),
    ("intra_group_clustering one group", lambda: m.intra_group_clustering(["a", "a"]), "polarities"),
    ("intra_group_clustering_density empty", lambda: m.intra_group_clustering_density([]), "polarities"),
    ("negation_invariance shape", lambda: m.negation_invariance(P, np.zeros((2, 2))), "neg_prefs"),
    ("negation_invariance range", lambda: m.negation_invariance(P, P * 2), "neg_prefs"),
    ("pairwise_consistency ks int", lambda: m.pairwise_consistency(P, ks=3), "ks"),  # type: ignore[arg-type]
    ("pairwise_consistency ks 2", lambda: m.pairwise_consistency(P, ks=[2]), "ks"),
    ("pairwise_consistency ks > N", lambda: m.pairwise_consistency(P, ks=[5]), "ks"),
    (
        "pairwise_consistency calibrated str",
        lambda: m.pairwise_consistency(P, ks=[3], calibrated="false"),  # type: ignore[arg-type]
        "calibrated",
    ),
    ("pairwise_consistency samples 0", lambda: m.pairwise_consistency(P, ks=[3], samples=0), "samples"),
    ("pairwise_consistency seed -1", lambda: m.pairwise_consistency(P, ks=[3], seed=-1), "seed"),
    ("pairwise_consistency seed 1.5", lambda: m.pairwise_consistency(P, ks=[3], seed=1.5), "seed"),  # type: ignore[arg-type]
    ("pairwise_consistency human length", lambda: m.pairwise_consistency(P, ks=[3], human_scores=[1]), "human_scores"),
    ("pairwise_consistency human_ties", lambda: m.pairwise_consistency(P, ks=[3], human_ties="x"), "ties"),
    ("relation_graph 3-D", lambda: m.relation_graph(np.zeros((2, 2, 2))), "prefs"),
    ("relation_graph text", lambda: m.relation_graph("x"), "prefs"),
    ("position_bias not square", lambda: m.position_bias(np.zeros((2, 3))), "square"),
    ("position_bias out of [0, 1]", lambda: m.position_bias(P * 3), "prefs"),
    ("p_first_mean NaN", lambda: m.p_first_mean(np.array([[0.5, np.nan], [0.5, 0.5]])), "nan_policy"),
    ("pairs_order method", lambda: m.pairs_order(P, search=m.PairsSearch(method="beem")), "method"),  # type: ignore[arg-type]
    (
        "pairs_order beam_size 0",
        lambda: m.pairs_order(P, search=m.PairsSearch(method="beam", beam_size=0)),
        "beam_size",
    ),
    (
        "pairs_order prob_gap 0.6",
        lambda: m.pairs_order(P, search=m.PairsSearch(method="beam", prob_gap=0.6)),
        "prob_gap",
    ),
    ("pairs_order initial_order", lambda: m.pairs_order(P, initial_order=[0, 0, 1]), "initial_order"),
    ("pairs_order NaN asked", lambda: m.pairs_order(np.full((3, 3), np.nan)), "pair (1, 2)"),
    ("self_agreement 1-D", lambda: m.self_agreement([1.0, 0.0]), "samples"),
    ("self_agreement not 0/1", lambda: m.self_agreement([[0.7, 1.0]]), "samples"),
    ("majority_choice text", lambda: m.majority_choice([["A", "B"]]), "samples"),
    ("self_agreement of single samples", lambda: m.self_agreement([[1.0], [0.0]]), "2 parsed samples"),
    ("win_loss_rate index out of range", lambda: m.win_loss_rate([0, 3], [1, 2], 3), "winners"),
    ("win_loss_rate lengths", lambda: m.win_loss_rate([0, 1], [1], 3), "same length"),
    ("elo_ratings self-comparison", lambda: m.elo_ratings([1], [1], 3), "cannot beat itself"),
    ("bradley_terry n_items 0", lambda: m.bradley_terry([], [], 0), "n_items"),
    ("ranking_spearman lengths", lambda: m.ranking_spearman([1.0, 2.0, 3.0], [1.0, 2.0]), "human_scores"),
    ("correlation lengths", lambda: m.correlation([1.0, 2.0, 3.0], [1.0, 2.0]), "equal length"),
    ("spread NaN", lambda: m.spread([1.0, math.nan]), "finite"),
    ("transitivity k 2", lambda: m.transitivity(W, k=2), "k"),
    ("transitivity k > N", lambda: m.transitivity(W, k=5), "k"),
    ("transitivity samples 0", lambda: m.transitivity(W, k=3, samples=0), "samples"),
    ("transitivity probabilities", lambda: m.transitivity(np.full((3, 3), 0.7), k=3), "wins"),
    ("transitivity no edges", lambda: m.transitivity(np.zeros((3, 3), dtype=bool), k=3), "wins"),
    ("transitivity_by_cycle_search k 1", lambda: m.transitivity_by_cycle_search(W, k=1), "k"),
    # every judgement a tie (P(A) = 0.5, e.g. a chat judge read with top_logprobs=1): undefined, not 0 or 1
    ("commutativity every pair tied", lambda: m.commutativity(TIES), "missing or tied"),
    ("negation_invariance every pair tied", lambda: m.negation_invariance(TIES, TIES), "missing or tied"),
    ("human_agreement every judgement tied", lambda: m.human_agreement(TIES, [1, 2, 3]), "missing or tied"),
    ("position_bias every judgement tied", lambda: m.position_bias(TIES), "missing or a tie"),
    ("transitivity of an all-ties graph", lambda: m.transitivity(m.relation_graph(TIES), k=3), "wins"),
    ("count_ties not square", lambda: m.count_ties(np.zeros((2, 3))), "square"),
    (
        "transitivity_by_cycle_search not square",
        lambda: m.transitivity_by_cycle_search(np.zeros((3, 2), dtype=bool)),
        "square",
    ),
    # invariance metrics (issue 55): picks / gold / perms / scores / verdicts named in the message
    ("mean_accuracy float picks", lambda: m.mean_accuracy(np.zeros((2, 4)), [0, 1]), "picks must be an integer"),
    ("mean_accuracy 1-D picks", lambda: m.mean_accuracy(np.zeros(4, dtype=int), [0]), "picks must be 2-D"),
    ("mean_accuracy pick -2", lambda: m.mean_accuracy(np.full((1, 2), -2), [0]), "picks must hold option"),
    (
        "circular_accuracy gold length",
        lambda: m.circular_accuracy(np.zeros((2, 2), dtype=int), [0]),
        "gold must have one",
    ),
    ("rstd perms not permutations", lambda: m.rstd(PICKS, [0], np.zeros((1, 2, 4), dtype=int)), "perms[0, 0]"),
    ("rstd pick beyond k", lambda: m.rstd(np.full((1, 2), 7), [0], PERMS), "picks must hold option indices 0..3"),
    ("pick_rates perms shape", lambda: m.pick_rates(PICKS, np.zeros((1, 3, 4), dtype=int)), "perms must have shape"),
    ("pick_rate position 4 of 4", lambda: m.pick_rate(PICKS, PERMS, 4), "position must be < 4"),
    ("pick_rate position -1", lambda: m.pick_rate(PICKS, PERMS, -1), "position must be >= 0"),
    (
        "estimated_prior_at position 4 of 4",
        lambda: m.estimated_prior_at(np.zeros(PERMS.shape), PERMS, 4),
        "position must be < 4",
    ),
    ("bootstrap_summary NaN", lambda: m.bootstrap_summary([1.0, math.nan]), "NaN"),
    (
        "estimated_prior inf score",
        lambda: m.estimated_prior(np.full(PERMS.shape, -np.inf), PERMS),
        "scores must be finite",
    ),
    ("pride_estimation_set share 0", lambda: m.pride_estimation_set(np.zeros(PERMS.shape), PERMS, share=0), "share"),
    ("label_set_consistency length", lambda: m.label_set_consistency(PICKS, PERMS, [0]), "label_set must have one"),
    (
        "negation_contradiction shape",
        lambda: m.negation_contradiction(PICKS, np.zeros((2, 2), dtype=int)),
        "negation_picks",
    ),
    ("gv_consistency verdict 2", lambda: m.gv_consistency([2.0]), "own_verdict must hold only"),
    ("validator_accuracy truth 0/1", lambda: m.validator_accuracy([[1.0]], [[1]]), "truth must be a boolean"),
]
for _name, _call, _message in METRIC_ABUSE:
    CASES.add(f"metric {_name}", lambda tmp, call=_call: call(), _message)


def _fifty_fifty(gap: float) -> np.ndarray:
    """P(A) of a judge giving A log(0.5) + ``gap`` and B log(0.5), as a pairwise task computes it, for every pair."""
    from logic_consistency.tasks.answers import first_option_probability

    return np.full((3, 3), first_option_probability(math.log(0.5) + gap, math.log(0.5)))


# issue 29: A at log(0.5) + 1e-12 was published as always preferring the first item (position_bias 1, s_comm 0)
CASES.add("position_bias of a 50/50 judge read 1e-12 apart", lambda tmp: m.position_bias(_fifty_fifty(1e-12)), "a tie")
CASES.add("commutativity of a 50/50 judge read 1e-12 apart", lambda tmp: m.commutativity(_fifty_fifty(1e-12)), "tied")
