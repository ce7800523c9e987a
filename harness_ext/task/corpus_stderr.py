"""A corpus statistic's bootstrap standard error in lm-eval's results (``<metric>_stderr``), as lm-eval's own.

lm-eval 0.4.13 fills ``<metric>_stderr`` only for its own aggregations (``stderr_for_metric``: the closed
form of ``mean``, ``bootstrap_stderr`` for ``median``, ``f1``, ``bleu``, ...); any other aggregation gets
``N/A``. A suite aggregation computed over every document at once (a corpus statistic such as RStd or a
pick rate) declares its own bootstrap standard error with :func:`declare_bootstrap_stderr`, and the
autoload hook wraps ``lm_eval.evaluator_utils.stderr_for_metric`` with :func:`with_declared_stderrs`
(``lm_eval_hooks.py`` lists it), so lm-eval asks that function where it would ask its own, with its own
``bootstrap_iters``: the 100,000 of the 0.4.13 command line (which has no ``--bootstrap_iters``), or
``simple_evaluate(bootstrap_iters=...)``, at most :data:`MAX_BOOTSTRAP_ITERS`; 0 or None gives ``N/A``, as for lm-eval's own. Like lm-eval's
``bootstrap_stderr`` it is the sample standard deviation of the statistic over resamples of the documents
(here whole questions, seeded, computed by the task's metrics); NaN where a resample leaves the statistic
undefined. Without the hook (``LOGIC_CONSISTENCY_AUTOLOAD=0``) lm-eval reports ``N/A`` as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "MAX_BOOTSTRAP_ITERS",
    "declare_bootstrap_stderr",
    "declared_bootstrap_stderr",
    "install_declared_stderrs",
    "with_declared_stderrs",
]

#: (every document's value, bootstrap_iters) -> the standard error of the aggregation over them.
BootstrapStderr = Callable[[Sequence[Any], int], float]
#: The most resamples a declared standard error draws. lm-eval's own evaluator caps its costly corpus metrics
#: (BLEU, chrF, TER) at ``min(bootstrap_iters, 100)``; a corpus statistic here costs about 0.1 ms a resample
#: per 100 questions, so lm-eval's 100,000 would add minutes to a whole-MMLU run (measured: 10-12 s per
#: statistic on 1,534 questions, 11 statistics per task). 1,000 resamples estimate a standard error within
#: about 1/sqrt(2 * 1000) = 2.2% of itself.
MAX_BOOTSTRAP_ITERS = 1000
#: The attribute of an aggregation function that holds its declared :data:`BootstrapStderr`.
_ATTRIBUTE = "logic_consistency_bootstrap_stderr"


def declare_bootstrap_stderr(aggregation: Callable[..., Any], stderr: BootstrapStderr) -> None:
    """Declares ``stderr`` as the bootstrap standard error of the lm-eval aggregation ``aggregation``."""
    setattr(aggregation, _ATTRIBUTE, stderr)


def declared_bootstrap_stderr(aggregation: Any) -> BootstrapStderr | None:
    """The standard error ``aggregation`` declares (:func:`declare_bootstrap_stderr`), or None."""
    stderr = getattr(aggregation, _ATTRIBUTE, None)
    return stderr if callable(stderr) else None


def with_declared_stderrs(stderr_for_metric: Callable[..., Any]) -> Callable[..., Any]:
    """``stderr_for_metric`` (lm-eval's), answering for an aggregation that declares a bootstrap standard
    error when ``bootstrap_iters`` is a positive integer (with at most :data:`MAX_BOOTSTRAP_ITERS`
    resamples); lm-eval's own answer otherwise."""

    @functools.wraps(stderr_for_metric)
    def wrapped(metric: Any, bootstrap_iters: Any) -> Any:
        declared = declared_bootstrap_stderr(metric)
        if declared is None or isinstance(bootstrap_iters, bool) or not isinstance(bootstrap_iters, int):
            return stderr_for_metric(metric, bootstrap_iters)
        if bootstrap_iters <= 0:
            return None  # lm-eval's "no stderr" (reported as N/A)
        iters = min(bootstrap_iters, MAX_BOOTSTRAP_ITERS)
        return lambda items: declared(items, iters)

    wrapped._logic_consistency = True  # type: ignore[attr-defined]  # applied once (autoload's marker)
    return wrapped


def install_declared_stderrs(evaluator_utils: Any) -> None:
    """Apply :func:`with_declared_stderrs` to ``lm_eval.evaluator_utils`` (just imported), once."""
    stderr = getattr(evaluator_utils, "stderr_for_metric", None)
    if stderr is not None and not getattr(stderr, "_logic_consistency", False):
        evaluator_utils.stderr_for_metric = with_declared_stderrs(stderr)
