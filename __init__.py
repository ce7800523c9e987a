"""logic-consistency: a benchmark suite measuring whether language models agree with themselves.

The distribution installs this folder as the package ``logic_consistency``; its sub-packages are
``logic_consistency.metrics`` (pure numpy/scipy metrics), ``logic_consistency.tasks`` (lm-eval task
YAML and dataset loaders), ``logic_consistency.harness_ext`` (the lm-eval integration) and
``logic_consistency.leaderboard``.
"""

__version__ = "0.1.0"
