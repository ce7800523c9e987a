"""Logical-consistency metrics for pairwise LLM judges (pure numpy / scipy).

Implements Liu et al., "Aligning with Logic: Measuring, Evaluating and Improving Logical
Preference Consistency in LLMs": transitivity s_tran(K) (eq. 1, Appendix A), commutativity
s_comm (eq. 2), negation invariance s_neg (eq. 3), human agreement H, their per-instance
combination (optionally PairS-calibrated), and a percentile bootstrap over instances.

This package must stay importable without torch, lm_eval, transformers or datasets.
"""

from ._graph import has_cycle, transitivity_by_cycle_search
from ._validation import UndefinedMetricError
from .bootstrap import bootstrap_ci
from .pairwise import commutativity, human_agreement, negation_invariance, pairwise_consistency
from .transitivity import EXACT_WORK_LIMIT, relation_graph, transitivity

__all__ = [
    "EXACT_WORK_LIMIT",
    "UndefinedMetricError",
    "bootstrap_ci",
    "commutativity",
    "has_cycle",
    "human_agreement",
    "negation_invariance",
    "pairwise_consistency",
    "relation_graph",
    "transitivity",
    "transitivity_by_cycle_search",
]
