"""Consistency metrics for language models (pure numpy / scipy).

* Pairwise-judge consistency (Liu et al., "Aligning with Logic"): s_tran(K) (eq. 1, Appendix A),
  s_comm (eq. 2), s_neg (eq. 3), human agreement H, a bootstrap over instances; self-agreement
  (Figure 4), rank aggregation (win-loss, Elo, Bradley-Terry), PairS (section 5) and the
  paraphrase study's correlations (Figure 5).
* Causal epistemic consistency (Cui et al., "Nuance Matters"): Kendall tau, CGP, IGC (the
  published silhouette definition and the density variant that reproduces the published numbers)
  and the label-by-position confusion matrix.
* The suite's own addition: position bias of a pairwise judge (as in Zheng et al. 2023).
* Invariance of multiple-choice answers under option permutation, relabelling, negation and
  self-validation (OpenCompass CircularEval; Zheng et al. 2024, PriDe; Li et al. 2024, GV).

This package must stay importable without torch, lm_eval, transformers or datasets.
"""

from ._graph import has_cycle, transitivity_by_cycle_search
from ._validation import UndefinedMetricError
from .bootstrap import BootstrapSummary, bootstrap_ci, bootstrap_summary
from .causal import (
    CAUSAL_LABELS,
    causal_consistency,
    confusion_matrix,
    intra_group_clustering,
    intra_group_clustering_density,
)
from .correlation import correlation, spread
from .invariance import (
    any_correct,
    circular_accuracy,
    content_consistency,
    count_undefined,
    count_unparseable,
    label_set_consistency,
    majority_vote_accuracy,
    mean_accuracy,
    order_sensitive,
    original_accuracy,
    pairwise_agreement,
)
from .invariance_bias import (
    Estimate,
    accuracy_by_gold_position,
    displayed_positions,
    pick_rate,
    pick_rate_kl,
    pick_rates,
    rstd,
)
from .invariance_pride import (
    estimated_prior,
    estimated_prior_at,
    pride_debiased_accuracy,
    pride_estimation_set,
    question_priors,
)
from .invariance_validation import (
    gold_truth,
    gv_consistency,
    negation_accuracy,
    negation_contradiction,
    own_verdicts,
    self_endorsed_wrong,
    validator_accuracy,
)
from .pairs import PairsResult, PairsSorter, pairs_rank
from .pairs_sort import PairsSearch, merge_sort_bound, pairs_order
from .pairwise import commutativity, count_ties, human_agreement, negation_invariance, pairwise_consistency
from .position_bias import p_first_mean, position_bias
from .ranking import bradley_terry, elo_ratings, ranking_spearman, win_loss_rate
from .self_agreement import majority_choice, majority_shares, self_agreement
from .transitivity import EXACT_WORK_LIMIT, relation_graph, transitivity

__all__ = [
    "BootstrapSummary",
    "CAUSAL_LABELS",
    "EXACT_WORK_LIMIT",
    "Estimate",
    "PairsResult",
    "PairsSearch",
    "PairsSorter",
    "UndefinedMetricError",
    "accuracy_by_gold_position",
    "any_correct",
    "bootstrap_ci",
    "bootstrap_summary",
    "bradley_terry",
    "causal_consistency",
    "circular_accuracy",
    "commutativity",
    "confusion_matrix",
    "content_consistency",
    "correlation",
    "count_ties",
    "count_undefined",
    "count_unparseable",
    "displayed_positions",
    "elo_ratings",
    "estimated_prior",
    "estimated_prior_at",
    "gold_truth",
    "gv_consistency",
    "has_cycle",
    "human_agreement",
    "intra_group_clustering",
    "intra_group_clustering_density",
    "label_set_consistency",
    "majority_choice",
    "majority_shares",
    "majority_vote_accuracy",
    "mean_accuracy",
    "merge_sort_bound",
    "negation_accuracy",
    "negation_contradiction",
    "negation_invariance",
    "order_sensitive",
    "original_accuracy",
    "own_verdicts",
    "p_first_mean",
    "pairs_order",
    "pairs_rank",
    "pairwise_agreement",
    "pairwise_consistency",
    "pick_rate",
    "pick_rate_kl",
    "pick_rates",
    "position_bias",
    "pride_debiased_accuracy",
    "pride_estimation_set",
    "question_priors",
    "ranking_spearman",
    "relation_graph",
    "rstd",
    "self_agreement",
    "self_endorsed_wrong",
    "spread",
    "transitivity",
    "transitivity_by_cycle_search",
    "validator_accuracy",
    "win_loss_rate",
]
