"""Causal epistemic consistency tasks (Cui et al., "Nuance Matters: Probing Epistemic Consistency in
Causal Reasoning"), on δ-CAUSAL.

Tasks and groups (YAML in this folder):

* ``logic_consistency_causal_ranking``: generate ten intermediates (paper Figure 7), then rank them
  with the same model (Figure 8);
* ``logic_consistency_causal_ctp_<conjunction>`` for so, because, since, as, therefore, thus,
  hence: the same generation, ranked by the effect's conditional token probability (section 5);
* groups ``logic_consistency_causal`` (the ranking task) and ``logic_consistency_causal_ctp``
  (the seven CTP tasks).

Modules: :mod:`.prompts` (prompt texts), :mod:`.parsing` (answer parsers), :mod:`.hooks` (stage
hooks and scoring), :mod:`.report` (Figure 4 confusion matrix from sample logs). The metrics live in
:mod:`logic_consistency.metrics.causal`.
"""
