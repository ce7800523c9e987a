"""Pairwise-judge consistency tasks (Liu et al.): the task classes, the answer parser, the YAML.

``task.PairwiseConsistencyTask`` is the class every pairwise YAML names; ``parsing.parse_choice``
reads a generated "A" / "B" answer; ``pairs_task`` runs PairS ranking; ``repair`` is the REPAIR data
tool. Dataset loaders live in ``logic_consistency.tasks.data``.
"""
