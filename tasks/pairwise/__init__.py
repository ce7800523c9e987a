"""Pairwise-judge consistency tasks (Liu et al.): the task class, the answer parser, the YAML.

``task.PairwiseConsistencyTask`` is the class every pairwise YAML names; ``parsing.parse_choice``
reads a generated "A" / "B" answer. Dataset loaders live in ``logic_consistency.tasks.data``.
"""
