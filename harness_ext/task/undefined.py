"""A metric that is undefined on some documents says so on each of them, and is aggregated over the others.

A suite task reports every metric it declares on every document; where one has no value (the causal
scores of an unparseable generation) it is ``None``, and the task's counts (``unparseable_generation``)
say how many documents that is. lm-eval 0.4.13 aggregates each metric over the values it is given and
warns "Metrics were not scored on the same number of documents" when the value lists differ in length;
a ``None`` would reach ``mean``. So :func:`over_defined_documents` wraps lm-eval's
``_compute_task_aggregations`` (the autoload hook applies it; ``lm_eval_hooks.py`` lists it): where every
metric has one value per document and some are ``None``, lm-eval aggregates each metric over its
defined values (the same scores and standard errors as a list without the ``None``; a metric defined on
no document is left out, as lm-eval leaves out a metric no document produced). Metrics of unequal
lengths go to lm-eval unchanged, with its warning. A group of the suite's tasks aggregates a metric over
all its leaf tasks or not at all (:func:`over_every_member`). Without the hook (``LOGIC_CONSISTENCY_AUTOLOAD=0``)
:func:`reported` leaves an undefined metric out of the document, and lm-eval's warnings say so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "install_group_aggregation",
    "install_task_aggregation",
    "over_defined_documents",
    "over_every_member",
    "reported",
]

#: ``lm_eval.evaluator_utils._compute_task_aggregations``: (task, raw metrics, bootstrap_iters) -> (the
#: aggregated metrics, the evaluated sample count).
Aggregate = Callable[..., tuple[dict[str, Any], int]]


def over_defined_documents(compute: Aggregate) -> Aggregate:
    """``compute`` (lm-eval's per-task aggregation), each metric's ``None`` values left out (module docstring)."""

    @functools.wraps(compute)
    def aggregate(
        task: Any, raw_metrics: Mapping[tuple[str, str], list[Any]], bootstrap_iters: int | None = 100000
    ) -> tuple[dict[str, Any], int]:
        lengths = {len(items) for items in raw_metrics.values()}
        if len(lengths) != 1 or not any(item is None for items in raw_metrics.values() for item in items):
            return compute(task, raw_metrics, bootstrap_iters)
        aggregated: dict[str, Any] = {}
        for key, items in raw_metrics.items():
            defined = [item for item in items if item is not None]
            if defined:
                aggregated.update(compute(task, {key: defined}, bootstrap_iters)[0])
        return aggregated, lengths.pop()

    aggregate._logic_consistency = True  # type: ignore[attr-defined]  # applied once (autoload's marker)
    return aggregate


#: ``lm_eval.api.group.Group.aggregate``: (group, every task's aggregated metrics) -> the group's metrics.
GroupAggregate = Callable[[Any, dict[str, Any]], dict[str, Any]]


def over_every_member(aggregate: GroupAggregate) -> GroupAggregate:
    """``aggregate`` (lm-eval's group aggregation), for a group whose leaf tasks are all the suite's, given only
    the metrics every leaf task reports.

    lm-eval 0.4.13's ``Group.aggregate`` averages an ``aggregate_metric_list`` metric over the leaf tasks that
    report it and warns "metric 'M' is missing in k/n tasks" for the others, so the group's figure would be
    a mean over a set of tasks that changes from model to model (a task leaves a metric out when it is
    undefined on every document: GV consistency when no generator answer parsed, the task's
    ``gv_left_out`` = 1 saying so). Such a metric is left out of the group, as lm-eval leaves out one that
    no leaf reports (no figure, no warning); a metric every leaf reports gets lm-eval's own mean and
    standard error. Groups with any task from elsewhere (lm-eval's own) are aggregated unchanged.
    """

    @functools.wraps(aggregate)
    def shared(group: Any, task_metrics: dict[str, Any]) -> dict[str, Any]:
        leaves = group.get_all_tasks() if group.aggregate_metric_list else []
        if not leaves or not all(type(task).__module__.startswith("logic_consistency.") for task in leaves):
            return aggregate(group, task_metrics)
        rows = [task_metrics.get(task.task_name, {}) for task in leaves]
        partial = set().union(*rows) - set(rows[0]).intersection(*rows[1:])
        if not partial:
            return aggregate(group, task_metrics)
        view = dict(task_metrics)
        for task, row in zip(leaves, rows, strict=True):
            view[task.task_name] = {key: value for key, value in row.items() if key not in partial}
        return aggregate(group, view)

    shared._logic_consistency = True  # type: ignore[attr-defined]  # applied once (autoload's marker)
    return shared


def install_task_aggregation(evaluator_utils: Any) -> None:
    """Apply :func:`over_defined_documents` to ``lm_eval.evaluator_utils`` (just imported), once."""
    compute = getattr(evaluator_utils, "_compute_task_aggregations", None)
    if compute is not None and not getattr(compute, "_logic_consistency", False):
        evaluator_utils._compute_task_aggregations = over_defined_documents(compute)


def install_group_aggregation(group_module: Any) -> None:
    """Apply :func:`over_every_member` to ``lm_eval.api.group``'s ``Group`` (just imported), once."""
    group = getattr(group_module, "Group", None)
    if group is not None and not getattr(group.aggregate, "_logic_consistency", False):
        group.aggregate = over_every_member(group.aggregate)


def _aggregates_over_defined() -> bool:
    """Whether lm-eval's per-task aggregation is :func:`over_defined_documents` in this process (the autoload
    hook applied it): the fact, read from lm-eval, not from the hook's switch."""
    import lm_eval.evaluator_utils as evaluator_utils

    return bool(getattr(evaluator_utils._compute_task_aggregations, "_logic_consistency", False))


def reported(values: dict[str, Any]) -> dict[str, Any]:
    """One document's ``values`` as lm-eval is given them: an undefined (``None``) metric kept where the
    aggregation leaves it out (:func:`over_defined_documents`), else left out of the document."""
    if _aggregates_over_defined():
        return values
    return {name: value for name, value in values.items() if value is not None}
