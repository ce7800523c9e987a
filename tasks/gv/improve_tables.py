"""The GV study's numbers as Li et al. lay them out: each task on its own, and the average over tasks.

Table 3 is GV-consistency per task plus the average over tasks (the paper's "Average" column: the
mean of the task scores, never the documents of several tasks pooled); Table 5 is the generator and
the validator accuracy per task, the validator's on App. H's fixed set where the suite builds one
(:mod:`.validator_sets`), else on the model's own answers (the suite's measure, labelled so). Figure
5's correctness, "the mean of the generator/validator performance" (App. I), two ways: ``correctness``
(the suite's choice, plotted) per document, the mean of its generator and validator accuracy (App.
H's on that document where there is one), where both are defined; ``correctness_paper`` the mean of
the task's two accuracies (Table 5's columns), its interval the stratified bootstrap below.

Intervals: the suite's 95% percentile bootstrap over documents (``metrics/bootstrap.py``) for one
task; for the average over tasks, a stratified bootstrap (``scipy.stats.bootstrap``, one sample per
task, ``paired=False``: the tasks are separate test sets) of the mean of the task means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import read_samples, task_of_samples_file
from logic_consistency.metrics.bootstrap import bootstrap_ci

from .validator_sets import APP_H, APP_H_METRIC

__all__ = ["CORRECTNESS", "CORRECTNESS_PAPER", "GV_METRICS", "TABLE_METRICS", "task_metrics"]

#: The metrics each document of a GV task logs.
GV_METRICS = ("gv_consistency", "generator_accuracy", "validator_accuracy")
#: Figure 5's correctness axis (Li et al. App. I), computed here per document (the suite's choice).
CORRECTNESS = "correctness"
#: The same read as App. I's words: the mean of the task's generator and validator accuracies.
CORRECTNESS_PAPER = "correctness_paper"
TABLE_METRICS = (*GV_METRICS, APP_H_METRIC, CORRECTNESS)
_RESAMPLES = 10_000  # as metrics/bootstrap.py


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _summary(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "ci95": None, "n": 0}
    low, high = bootstrap_ci(values) if len(values) > 1 else (values[0], values[0])
    return {"mean": sum(values) / len(values), "ci95": [low, high], "n": len(values)}


def _average(per_task: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """The mean over tasks of each task's mean, with the stratified bootstrap interval (see the module)."""
    missing = sorted(task for task, values in per_task.items() if not values)
    if missing:
        return {"mean": None, "ci95": None, "n": 0, "undefined": f"no value in {', '.join(missing)}"}
    import numpy as np

    samples = [np.asarray(values, dtype=np.float64) for values in per_task.values()]
    mean = float(np.mean([sample.mean() for sample in samples]))
    return {"mean": mean, "ci95": _interval(samples, mean), "n": sum(len(sample) for sample in samples)}


def _interval(samples: Sequence[Any], mean: float) -> list[float] | None:
    """The average's interval: the point where every task is constant; none where a task has one document
    (scipy needs two) and another varies; else the stratified bootstrap's."""
    import numpy as np

    if not any(np.ptp(sample) > 0 for sample in samples):  # no resampling varies it
        return [mean, mean]
    if min(len(sample) for sample in samples) < 2:
        return None
    return _stratified_ci(samples)


def _stratified_ci(samples: Sequence[Any]) -> list[float]:
    """The 95% percentile interval of the mean of the task means, one bootstrap sample per task (see the module)."""
    import numpy as np
    from scipy import stats

    def statistic(*resampled: Any, axis: int = -1) -> Any:
        return np.mean([np.mean(sample, axis=axis) for sample in resampled], axis=0)

    result = stats.bootstrap(
        tuple(samples),
        statistic,
        n_resamples=_RESAMPLES,
        vectorized=True,
        paired=False,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    low, high = result.confidence_interval
    return [float(low), float(high)]


def _doc_key(sample: Mapping[str, Any], line: int) -> str:
    """What joins a document of a GV task with the same document of its App. H task: its id (else its
    ``doc_id``, else its line: a document never merges with another)."""
    doc = sample.get("doc") or {}
    key = doc.get("id", sample.get("doc_id"))
    return f"line {line}" if key is None else str(key)


def _read(samples: Sequence[Path], values: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Add each samples file's defined values to ``values`` (task -> metric -> values; an App. H task's to
    its GV task's); return them per document too (task -> metric -> document id -> value)."""
    by_doc: dict[str, dict[str, dict[str, float]]] = {}
    for path in samples:
        file_task = task_of_samples_file(path) or path.stem
        task = APP_H.get(file_task, file_task)
        found = values.setdefault(task, {name: [] for name in TABLE_METRICS})
        per_doc = by_doc.setdefault(task, {name: {} for name in (*GV_METRICS, APP_H_METRIC)})
        for line, sample in read_samples(path):
            for name in (*GV_METRICS, APP_H_METRIC):
                number = _number(sample.get(name))
                if number is not None:
                    found[name].append(number)
                    per_doc[name][_doc_key(sample, line)] = number
    return by_doc


def _add_correctness(
    values: dict[str, dict[str, list[float]]], by_doc: dict[str, dict[str, dict[str, float]]]
) -> dict[str, dict[str, Any]]:
    """Set each task's :data:`CORRECTNESS` values in ``values`` (per document, the mean of generator and
    validator accuracy, joined by document id); return the paper's reading per task (the mean of the two
    columns' means, :func:`_average`). The validator is App. H's where the task has its set, else its own."""
    paper: dict[str, dict[str, Any]] = {}
    for task, per_doc in by_doc.items():
        # App. H's validator where the task has its set (Li et al. App. I over Table 5's measures)
        validator = per_doc[APP_H_METRIC] or per_doc["validator_accuracy"]
        generator = per_doc["generator_accuracy"]
        values[task][CORRECTNESS] = [(generator[k] + validator[k]) / 2 for k in generator if k in validator]
        paper[task] = _average({"generator": list(generator.values()), "validator": list(validator.values())})
    return paper


def task_metrics(samples: Sequence[Path], *, tasks: Sequence[str] = ()) -> dict[str, Any]:
    """A row's metrics: ``per_task`` (task -> metric -> mean, 95% interval, n) and ``average`` over tasks.

    A document where a metric is undefined (missing or NaN) is left out of that metric, never counted as 0.
    ``tasks`` are in the row whether or not a file holds them (a task without a value leaves the average
    undefined, naming it). An App. H task's samples (:mod:`.validator_sets`) give their GV task's
    ``validator_accuracy_app_h``; correctness then takes the validator from there (joined by document id).
    """
    values: dict[str, dict[str, list[float]]] = {task: {name: [] for name in TABLE_METRICS} for task in tasks}
    paper = _add_correctness(values, _read(samples, values))
    ordered = sorted(values)
    per_task = {task: {name: _summary(values[task][name]) for name in TABLE_METRICS} for task in ordered}
    for task in ordered:
        per_task[task][CORRECTNESS_PAPER] = paper.get(task) or _summary([])
    return {
        "per_task": per_task,
        "average": {name: _average({task: values[task][name] for task in ordered}) for name in TABLE_METRICS},
    }
