"""Consistency metrics for language models (pure numpy / scipy).

* Pairwise-judge consistency (Liu et al., "Aligning with Logic"): s_tran(K) (eq. 1, Appendix A),
  s_comm (eq. 2), s_neg (eq. 3), human agreement H, a bootstrap over instances; self-agreement
  (Figure 4), rank aggregation (win-loss, Elo, Bradley-Terry), PairS (section 5) and the
  paraphrase study's correlations (Figure 5).
* Causal epistemic consistency (Cui et al., "Nuance Matters"): Kendall tau, CGP, IGC (the
  published silhouette definition and the density variant that reproduces the published numbers)
  and the label-by-position confusion matrix.
* The suite's own addition: position bias of a pairwise judge (as in Zheng et al. 2023).

This package must stay importable without torch, lm_eval, transformers or datasets.
"""

from ._graph import has_cycle, transitivity_by_cycle_search
from ._validation import UndefinedMetricError
from .bootstrap import bootstrap_ci
from .causal import (
    CAUSAL_LABELS,
    causal_consistency,
    confusion_matrix,
    intra_group_clustering,
    intra_group_clustering_density,
)
from .correlation import correlation, spread
from .pairs import PairsResult, PairsSorter, pairs_rank
from .pairs_sort import PairsSearch, merge_sort_bound, pairs_order
from .pairwise import commutativity, count_ties, human_agreement, negation_invariance, pairwise_consistency
from .position_bias import p_first_mean, position_bias
from .ranking import bradley_terry, elo_ratings, ranking_spearman, win_loss_rate
from .self_agreement import majority_choice, majority_shares, self_agreement
from .transitivity import EXACT_WORK_LIMIT, relation_graph, transitivity

__all__ = [
    "CAUSAL_LABELS",
    "EXACT_WORK_LIMIT",
    "PairsResult",
    "PairsSearch",
    "PairsSorter",
    "UndefinedMetricError",
    "bootstrap_ci",
    "bradley_terry",
    "causal_consistency",
    "commutativity",
    "confusion_matrix",
    "correlation",
    "count_ties",
    "elo_ratings",
    "has_cycle",
    "human_agreement",
    "intra_group_clustering",
    "intra_group_clustering_density",
    "majority_choice",
    "majority_shares",
    "merge_sort_bound",
    "negation_invariance",
    "p_first_mean",
    "pairs_order",
    "pairs_rank",
    "pairwise_consistency",
    "position_bias",
    "ranking_spearman",
    "relation_graph",
    "self_agreement",
    "spread",
    "transitivity",
    "transitivity_by_cycle_search",
    "win_loss_rate",
]
