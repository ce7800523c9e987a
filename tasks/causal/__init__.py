"""Causal epistemic consistency tasks (Cui et al., "Nuance Matters: Probing Epistemic Consistency in
Causal Reasoning"), on δ-CAUSAL; tasks and groups are listed in this folder's README.md.

Modules: :mod:`.prompts` (Figures 7 and 8), :mod:`.parsing` (answer parsers), :mod:`.hooks` (stage
hooks and scoring), :mod:`.report` (Figure 4 confusion matrix from sample logs). The metrics live in
:mod:`logic_consistency.metrics.causal`.
"""
