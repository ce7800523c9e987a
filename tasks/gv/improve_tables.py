"""The GV study's numbers as Li et al. lay them out: each task on its own, and the average over tasks.

Table 3 is GV-consistency per task plus the average over tasks (the paper's "Average" column: the
mean of the task scores, never the documents of several tasks pooled); Table 5 is the generator and
the validator accuracy per task. Figure 5's correctness axis is "the mean of the generator/validator
performance" (Li et al. App. I): per document, the mean of its generator and validator accuracy,
over the documents where both are defined (in the arithmetic tasks every document the validator
judged), so that it equals the mean of the two accuracies on the same documents.

Intervals are the suite's 95% percentile bootstrap over documents (``metrics/bootstrap.py``) for
one task; for the average over tasks, each task's documents are resampled on their own
(``scipy.stats.bootstrap`` with one sample per task, ``paired=False``: a stratified bootstrap, as
the tasks are separate test sets) and the statistic is the mean of the task means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import read_samples, task_of_samples_file
from logic_consistency.metrics.bootstrap import bootstrap_ci

__all__ = ["CORRECTNESS", "GV_METRICS", "TABLE_METRICS", "task_metrics"]

#: The metrics each document of a GV task logs.
GV_METRICS = ("gv_consistency", "generator_accuracy", "validator_accuracy")
#: Figure 5's correctness axis (Li et al. App. I), computed here per document.
CORRECTNESS = "correctness"
TABLE_METRICS = (*GV_METRICS, CORRECTNESS)
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
    from scipy import stats

    samples = [np.asarray(values, dtype=np.float64) for values in per_task.values()]
    mean = float(np.mean([sample.mean() for sample in samples]))
    n = sum(len(sample) for sample in samples)
    varied = [sample for sample in samples if np.ptp(sample) > 0]
    if not varied or min(len(sample) for sample in samples) < 2:
        # a task of one document (scipy needs two) or every task constant: no resampling varies it
        point = mean if not varied else None
        return {"mean": mean, "ci95": None if point is None else [point, point], "n": n}

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
    return {"mean": mean, "ci95": [float(low), float(high)], "n": n}


def task_metrics(samples: Sequence[Path], *, tasks: Sequence[str] = ()) -> dict[str, Any]:
    """A row's metrics: ``per_task`` (task -> metric -> mean, 95% interval, n) and ``average`` over tasks.

    A document where a metric is undefined (missing or NaN) is left out of that metric, never counted as 0.
    ``tasks`` are in the row whether or not a file holds them (a task without a value leaves the average
    undefined, naming it).
    """
    values: dict[str, dict[str, list[float]]] = {task: {name: [] for name in TABLE_METRICS} for task in tasks}
    for path in samples:
        task = task_of_samples_file(path) or path.stem
        found = values.setdefault(task, {name: [] for name in TABLE_METRICS})
        for _, sample in read_samples(path):
            numbers = {name: _number(sample.get(name)) for name in GV_METRICS}
            for name, number in numbers.items():
                if number is not None:
                    found[name].append(number)
            generator, validator = numbers["generator_accuracy"], numbers["validator_accuracy"]
            if generator is not None and validator is not None:
                found[CORRECTNESS].append((generator + validator) / 2)
    tasks = sorted(values)
    return {
        "per_task": {task: {name: _summary(values[task][name]) for name in TABLE_METRICS} for task in tasks},
        "average": {name: _average({task: values[task][name] for task in tasks}) for name in TABLE_METRICS},
    }
