"""Tests for metrics/__init__.py: the public API and its import purity."""

from __future__ import annotations

import json
import os
import sys

import children  # the tests' one starter of child processes (tests/children.py)

import logic_consistency.metrics as metrics

HEAVY = ("torch", "lm_eval", "transformers", "datasets")

PROBE = f"""
import json, sys
import numpy as np
import logic_consistency.metrics as m
prefs = np.full((5, 5), 0.7)
m.pairwise_consistency(prefs, 1 - prefs, np.arange(5.0), ks=(3, 5), samples=10)
m.bootstrap_ci([0.1, 0.2, 0.3], n_resamples=10)
m.rstd(np.zeros((4, 4), dtype=int), np.arange(4), np.array([[np.roll(np.arange(4), -v) for v in range(4)]] * 4), n_resamples=10)
heavy = {HEAVY!r}
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in heavy)))
"""


def test_metrics_import_without_heavy_dependencies() -> None:
    # A fresh interpreter, because this pytest process may already have imported anything.
    # LOGIC_CONSISTENCY_AUTOLOAD=0 switches off the harness .pth hook (see setup.py), which
    # belongs to harness_ext and would otherwise run before our import.
    env = {**os.environ, "LOGIC_CONSISTENCY_AUTOLOAD": "0"}
    completed = children.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    loaded = json.loads(completed.stdout.strip().splitlines()[-1])
    assert loaded == []


def test_public_api() -> None:
    expected = {
        "BootstrapSummary",
        "CAUSAL_LABELS",
        "EXACT_WORK_LIMIT",
        "UndefinedMetricError",
        "bootstrap_ci",
        "bootstrap_summary",
        "causal_consistency",
        "commutativity",
        "confusion_matrix",
        "has_cycle",
        "human_agreement",
        "intra_group_clustering",
        "intra_group_clustering_density",
        "negation_invariance",
        "pairwise_consistency",
        "relation_graph",
        "transitivity",
        "transitivity_by_cycle_search",
        # the rest of the pairwise paper's studies (issue 9)
        "PairsResult",
        "PairsSearch",
        "PairsSorter",
        "bradley_terry",
        "correlation",
        "count_ties",
        "elo_ratings",
        "majority_choice",
        "majority_shares",
        "merge_sort_bound",
        "p_first_mean",
        "pairs_order",
        "pairs_rank",
        "position_bias",
        "ranking_spearman",
        "self_agreement",
        "spread",
        "win_loss_rate",
        # invariance of multiple-choice answers under option variants (issue 55)
        "Estimate",
        "accuracy_by_gold_position",
        "any_correct",
        "circular_accuracy",
        "content_consistency",
        "count_undefined",
        "count_unparseable",
        "displayed_positions",
        "estimated_prior",
        "estimated_prior_at",
        "gold_truth",
        "gv_consistency",
        "label_set_consistency",
        "majority_vote_accuracy",
        "mean_accuracy",
        "negation_accuracy",
        "negation_contradiction",
        "order_sensitive",
        "original_accuracy",
        "own_verdicts",
        "pairwise_agreement",
        "pick_rate",
        "pick_rate_kl",
        "pick_rates",
        "pride_debiased_accuracy",
        "pride_estimation_set",
        "question_priors",
        "rstd",
        "self_endorsed_wrong",
        "validator_accuracy",
    }
    assert set(metrics.__all__) == expected
    for name in expected - {"CAUSAL_LABELS", "EXACT_WORK_LIMIT", "UndefinedMetricError", "PairsResult"}:
        assert callable(getattr(metrics, name))
    assert issubclass(metrics.UndefinedMetricError, ValueError)
