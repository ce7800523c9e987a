"""One shard of an ``lm_eval`` run: a deterministic share of every task's evaluated documents.

A run split into ``N`` shards runs ``N`` ordinary ``lm_eval`` processes with
``LOGIC_CONSISTENCY_SHARD=i/N``. Shard ``i`` evaluates the documents at positions ``i, i+N, ...`` of
the ones a single process evaluates (after ``--limit`` and ``--samples``), so the union of the shards
is exactly one process's set. The split is lm-eval's own ``Task.doc_iterator(rank, world_size)``,
which the autoload hook wraps (:func:`shard_doc_iterator`) for every caller, stateful tasks included.

Under a shard, the wrapped ``evaluate`` (:func:`shard_evaluate`) evaluates only the tasks that have
documents in this shard and leaves the groups to the merge, marks the results with
``"logic_consistency_shard": {"index": i, "count": N}``, and pickles every task's per-document metric
values (as lm-eval's aggregations receive them) to the file named by
``LOGIC_CONSISTENCY_SHARD_METRICS``. :mod:`.shard_merge` recomputes every score over the union.
Sharding is not combined with lm-eval's own multi-process ranks (``accelerate``). See docs/cluster.md.
"""

from __future__ import annotations

import functools
import inspect
import os
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from logic_consistency.outputs import atomic_write

__all__ = [
    "ENV_METRICS",
    "ENV_SHARD",
    "SHARD_KEY",
    "Shard",
    "active_shard",
    "shard_doc_iterator",
    "shard_evaluate",
]

#: Environment variable selecting the shard: ``i/N`` (``0 <= i < N``).
ENV_SHARD = "LOGIC_CONSISTENCY_SHARD"
#: Environment variable: the file receiving the shard's per-document metric values (pickle).
ENV_METRICS = "LOGIC_CONSISTENCY_SHARD_METRICS"
#: Key of the results file that marks a shard's results.
SHARD_KEY = "logic_consistency_shard"
#: Version of the pickled metrics file's layout.
METRICS_FORMAT = 1


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``0 <= index < count``)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Read ``i/N``; a malformed value is a :class:`ValueError` naming :data:`ENV_SHARD`."""
        head, _, tail = text.strip().partition("/")
        try:
            shard = cls(int(head), int(tail))
        except ValueError:
            raise ValueError(f"{ENV_SHARD}={text!r}: expected i/N, e.g. 0/3") from None
        if shard.count < 1 or not 0 <= shard.index < shard.count:
            raise ValueError(f"{ENV_SHARD}={text!r}: need N >= 1 and 0 <= i < N")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def size(self, n_docs: int) -> int:
        """How many of ``n_docs`` evaluated documents fall in this shard."""
        return len(range(self.index, n_docs, self.count))


def active_shard() -> Shard | None:
    """The shard of this process (``LOGIC_CONSISTENCY_SHARD``), or ``None`` for a whole run."""
    text = os.environ.get(ENV_SHARD, "").strip()
    return Shard.parse(text) if text else None


def shard_doc_iterator(doc_iterator: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Wrap ``Task.doc_iterator`` so that under a shard it yields only that shard's documents."""

    @functools.wraps(doc_iterator)
    def wrapper(
        self: Any, *, rank: int = 0, limit: Any = None, world_size: int = 1, samples: Any = None
    ) -> Iterator[Any]:
        shard = active_shard()
        if shard is not None and shard.count > 1:
            if int(world_size) != 1:
                raise ValueError(
                    f"{ENV_SHARD}={shard}: sharding cannot be combined with lm-eval's multi-process ranks "
                    f"(world size {world_size})"
                )
            rank, world_size = shard.index, shard.count
        return doc_iterator(self, rank=rank, limit=limit, world_size=world_size, samples=samples)

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper


def _evaluated_docs(name: str, task: Any, limit: Any, samples: Any) -> int:
    """How many documents one whole process evaluates of task ``name`` (lm-eval's own sample size)."""
    from lm_eval.evaluator_utils import get_sample_size

    if samples is not None and samples.get(name) is not None:
        return len(samples[name])
    size = get_sample_size(task, limit)
    n_docs = len(task.eval_docs)
    return n_docs if size is None else min(int(size), n_docs)


def _empty_results() -> dict[str, Any]:
    """What ``evaluate`` returns for a shard with no document in any task."""
    keys = ("results", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "samples")
    return {key: {} for key in keys}


def _metric_values(samples: dict[str, list[dict[str, Any]]]) -> dict[str, list[tuple[str, int, dict[str, Any]]]]:
    """``{task: [(filter, doc_id, {metric: value})]}`` in lm-eval's order, from its logged samples."""
    return {
        task: [(line["filter"], int(line["doc_id"]), {m: line[m] for m in line["metrics"]}) for line in lines]
        for task, lines in samples.items()
    }


def _write_metrics(shard: Shard, results: dict[str, Any]) -> None:
    path = os.environ.get(ENV_METRICS, "").strip()
    if not path:
        return
    payload = {
        "format": METRICS_FORMAT,
        "shard": [shard.index, shard.count],
        "tasks": _metric_values(results.get("samples") or {}),
    }
    atomic_write(path, [pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)])


def shard_evaluate(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap lm-eval's ``evaluate`` so that a shard evaluates its share (see the module docstring)."""
    signature = inspect.signature(evaluate)

    @functools.wraps(evaluate)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        shard = active_shard()
        if shard is None:
            return evaluate(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        if not arguments.get("log_samples"):
            raise ValueError(f"{ENV_SHARD}={shard}: a shard must log its samples (--log_samples); the merge reads them")
        if arguments.get("cache_requests"):  # its cache key has lm-eval's rank, not the shard: shards would collide
            raise ValueError(f"{ENV_SHARD}={shard}: --cache_requests cannot be used with shards")
        task_dict = arguments["task_dict"]
        if not isinstance(task_dict, dict) or "tasks" not in task_dict:
            raise ValueError(f"{ENV_SHARD}={shard}: needs lm-eval's task dict with 'tasks' (TaskManager.load)")
        tasks = {
            name: task
            for name, task in task_dict["tasks"].items()
            if shard.size(_evaluated_docs(name, task, arguments.get("limit"), arguments.get("samples")))
        }
        arguments["task_dict"] = {**task_dict, "tasks": tasks, "groups": {}}
        results = evaluate(*bound.args, **bound.kwargs) if tasks else _empty_results()
        if results is not None:
            _write_metrics(shard, results)
            results[SHARD_KEY] = {"index": shard.index, "count": shard.count}
        return results

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
