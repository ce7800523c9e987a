"""The intervals of a leaderboard row: percentile bootstrap over instances, per task and per group.

A task's interval is :func:`logic_consistency.metrics.bootstrap_ci` (``scipy.stats.bootstrap``,
percentile method) over its per-instance values.

A group's score is lm-eval's mean of its leaf tasks' means (unweighted, or weighted by task size).
Its interval is a **stratified** bootstrap: :func:`scipy.stats.bootstrap` with one sample per leaf
task, so each resample redraws every task's instances within that task (each task keeps its size)
and recomputes exactly lm-eval's mean of task means (:func:`group_statistic`). Every draw is seeded
(``numpy.random.default_rng(seed)``), so a row is reproducible. The method is recorded in the
document's ``bootstrap.method`` (:data:`GROUP_METHOD`); documents computed with another method do
not merge (their ``bootstrap`` objects differ).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from logic_consistency.metrics import bootstrap_ci

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "GROUP_METHOD",
    "BootstrapSettings",
    "group_interval",
    "group_statistic",
    "interval",
]

GROUP_METHOD = (
    "percentile bootstrap over instances (scipy.stats.bootstrap via logic_consistency.metrics.bootstrap_ci); "
    "a group is a stratified bootstrap (scipy.stats.bootstrap, one sample per leaf task, each resampled "
    "within itself) of lm-eval's mean of task means"
)

#: Resampled values held in memory at once (bounds the batch of group resamples).
_BLOCK_VALUES = 1 << 22


@dataclass(frozen=True)
class BootstrapSettings:
    """Parameters of every interval (recorded in the document)."""

    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0

    def as_json(self) -> dict[str, Any]:
        """The ``bootstrap`` object of a leaderboard document."""
        return {
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "method": GROUP_METHOD,
        }


#: The default interval parameters.
DEFAULT_BOOTSTRAP = BootstrapSettings()


def interval(values: np.ndarray, bootstrap: BootstrapSettings) -> list[float] | None:
    """The interval of one task's per-instance values, or ``None`` for fewer than 2 values."""
    if values.size < 2:
        return None
    low, high = bootstrap_ci(
        values, confidence=bootstrap.confidence, n_resamples=bootstrap.n_resamples, seed=bootstrap.seed
    )
    return [low, high]


def group_statistic(values: np.ndarray, task_of: np.ndarray, task_weights: np.ndarray) -> Callable[..., np.ndarray]:
    """The group score as a statistic of resampled instance *indices*.

    lm-eval's group score is a weighted mean of its leaf tasks' means. Given resampled indices into
    the concatenated values, this recomputes exactly that (a task that drew no instance is left out
    and the weights of the others renormalised, as lm-eval does for tasks lacking a metric; the
    stratified bootstrap of :func:`group_interval` always draws every task).

    Args:
        values: Per-instance values of all contributing leaf tasks, concatenated.
        task_of: For each instance, the index of its task (0..T-1).
        task_weights: Weight of each task (``1/T`` each, or proportional to task size).

    Returns:
        ``statistic(indices, axis=1)``: one group score per row of resampled indices.
    """
    n_tasks = task_weights.size

    def statistic(indices: np.ndarray, axis: int = 1) -> np.ndarray:
        picked = indices.astype(np.int64)
        drawn_values, drawn_tasks = values[picked], task_of[picked]
        sums = np.zeros((picked.shape[0], n_tasks))
        counts = np.zeros((picked.shape[0], n_tasks))
        for task in range(n_tasks):
            mask = drawn_tasks == task
            sums[:, task] = np.where(mask, drawn_values, 0.0).sum(axis=axis)
            counts[:, task] = mask.sum(axis=axis)
        present = counts > 0
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=present)
        weights = np.where(present, task_weights, 0.0)
        return (weights * means).sum(axis=1) / weights.sum(axis=1)

    return statistic


def _official_weights(official: float, per_task: list[tuple[np.ndarray, int]]) -> np.ndarray | None:
    """The task weights that reproduce lm-eval's group score: equal, else by size; ``None`` if neither does."""
    means = np.array([values.mean() for values, _ in per_task])
    sizes = np.array([size for _, size in per_task], dtype=float)
    if math.isclose(float(means.mean()), official, rel_tol=1e-9, abs_tol=1e-9):
        return np.full(len(per_task), 1.0 / len(per_task))
    if sizes.sum() > 0 and math.isclose(
        float((sizes * means).sum() / sizes.sum()), official, rel_tol=1e-9, abs_tol=1e-9
    ):
        return sizes / sizes.sum()
    return None


def _task_samples(per_task: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, ...]:
    """One sample per task: the indices of its instances in the concatenated values (a lone instance twice)."""
    starts = np.cumsum([0] + [task_values.size for task_values, _ in per_task])
    return tuple(
        np.arange(start, stop) if stop - start > 1 else np.array([start, start])
        for start, stop in zip(starts[:-1], starts[1:])
    )


def group_interval(
    official: float, per_task: list[tuple[np.ndarray, int]], bootstrap: BootstrapSettings
) -> list[float] | None:
    """Stratified interval of lm-eval's group mean from the leaf tasks' per-instance values.

    ``per_task`` holds, per contributing leaf task, its values and its ``sample_len`` (lm-eval's
    size weight). Returns ``None`` when neither weighting reproduces ``official`` or there are
    fewer than 2 instances.
    """
    weights = _official_weights(official, per_task)
    if weights is None:
        return None
    values = np.concatenate([task_values for task_values, _ in per_task])
    if values.size < 2:
        return None
    task_of = np.concatenate([np.full(task_values.size, index) for index, (task_values, _) in enumerate(per_task)])
    if np.ptp(values) == 0.0:  # every resample gives the same score
        return [official, official]
    statistic = group_statistic(values, task_of, weights)
    # One sample per task: the indices of its instances in `values`, resampled within the task. A
    # task with one instance always resamples to itself; scipy wants two observations per sample,
    # so it is given that index twice (same task mean, same resamples).
    samples = _task_samples(per_task)

    def stratified(*resampled: np.ndarray, axis: int = -1) -> np.ndarray:
        return statistic(np.concatenate(resampled, axis=axis), axis=axis)

    result = stats.bootstrap(
        samples,
        stratified,
        n_resamples=bootstrap.n_resamples,
        batch=max(1, _BLOCK_VALUES // values.size),
        vectorized=True,
        paired=False,
        confidence_level=bootstrap.confidence,
        method="percentile",
        rng=np.random.default_rng(bootstrap.seed),
    )
    low, high = (float(bound) for bound in result.confidence_interval)
    return [low, high]
