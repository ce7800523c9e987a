"""logic-consistency: a benchmark suite measuring whether language models agree with themselves.

The distribution installs this folder as the package ``logic_consistency``; its sub-packages are
layers whose imports run one way (docs/architecture.md): ``logic_consistency.metrics`` (pure
numpy/scipy metrics) <- ``logic_consistency.harness_ext`` (generic lm-eval machinery) <-
``logic_consistency.tasks`` (every family's tasks, loaders, parsers, reports) <-
``logic_consistency.leaderboard``; ``common`` and ``options`` are neutral helpers, ``cli`` the
console entry point.
"""

__version__ = "0.1.0"
