"""Consistency metrics for language models (pure numpy / scipy).

* Pairwise-judge consistency (Liu et al., "Aligning with Logic: Measuring, Evaluating and
  Improving Logical Preference Consistency in LLMs"): transitivity s_tran(K) (eq. 1, Appendix A),
  commutativity s_comm (eq. 2), negation invariance s_neg (eq. 3), human agreement H, their
  per-instance combination (optionally PairS-calibrated), and a percentile bootstrap over instances.
* Causal epistemic consistency (Cui et al., "Nuance Matters: Probing Epistemic Consistency in
  Causal Reasoning"): Kendall tau per group and overall, cross-group position (CGP), intra-group
  clustering (IGC, the published silhouette definition and the density variant that reproduces
  the published numbers) and the label-by-position confusion matrix.

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
from .pairwise import commutativity, human_agreement, negation_invariance, pairwise_consistency
from .transitivity import EXACT_WORK_LIMIT, relation_graph, transitivity

__all__ = [
    "CAUSAL_LABELS",
    "EXACT_WORK_LIMIT",
    "UndefinedMetricError",
    "bootstrap_ci",
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
]
