"""One shard of an ``lm_eval`` run: a deterministic share of every task's evaluated documents.

A run split into ``N`` shards runs ``N`` ordinary ``lm_eval`` processes with
``LOGIC_CONSISTENCY_SHARD=i/N``. Shard ``i`` evaluates the documents at positions ``i, i+N, ...`` of
the ones a single process evaluates (after ``--limit`` and ``--samples``), so the union of the shards
is exactly one process's set. The split is lm-eval's own ``Task.doc_iterator(rank, world_size)``,
which the autoload hook wraps (:func:`shard_doc_iterator`) for every caller, stateful tasks included.

Under a shard, the wrapped ``evaluate`` (:func:`shard_evaluate`) evaluates only the tasks that have
documents in this shard and leaves the groups to the merge, marks the results with
``"logic_consistency_shard": {"index": i, "count": N}``, and writes every task's per-document metric
values (as lm-eval's aggregations receive them; JSON of :mod:`.values`, never pickle) to the file named by
``LOGIC_CONSISTENCY_SHARD_METRICS``. :mod:`.merge` recomputes every score over the union.
Sharding is not combined with lm-eval's own multi-process ranks (``accelerate``). See docs/cluster.md.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from logic_consistency.outputs import atomic_write

from .values import dumps

__all__ = [
    "ENV_BUILD",
    "ENV_METRICS",
    "ENV_SHARD",
    "SHARD_KEY",
    "Shard",
    "active_shard",
    "evaluated_docs",
    "shard_doc_iterator",
    "shard_evaluate",
]

#: Environment variable selecting the shard: ``i/N`` (``0 <= i < N``).
ENV_SHARD = "LOGIC_CONSISTENCY_SHARD"
#: Environment variable: the file receiving the shard's per-document metric values (JSON).
ENV_METRICS = "LOGIC_CONSISTENCY_SHARD_METRICS"
#: Environment variable: the build a shard belongs to (recorded in its mark; a merge refuses a mix).
ENV_BUILD = "LOGIC_CONSISTENCY_BUILD_ID"
#: Key of the results file that marks a shard's results.
SHARD_KEY = "logic_consistency_shard"
#: Version of the metrics file's layout (2: JSON of :mod:`.values`; 1 was a pickle, no longer read).
METRICS_FORMAT = 2


#: The one accepted spelling of a shard: ASCII digits only (``int`` would also take ``1_0``, `` 1`` or ``١``).
_SHARD_TEXT = re.compile(r"([0-9]+)/([0-9]+)")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``0 <= index < count``): the one form of a shard index in the suite.

    Its spellings: ``i/N`` (:meth:`parse`, ``str``; the environment variable), the unit's folder
    (:attr:`folder`), its cache suffix (:attr:`cache_suffix`) and the mark of its results file
    (:meth:`mark`, :meth:`from_mark`).
    """

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Read ``i/N`` (exactly ``^[0-9]+/[0-9]+$``); a malformed value is a :class:`ValueError` naming :data:`ENV_SHARD`."""
        match = _SHARD_TEXT.fullmatch(text)
        if match is None:
            raise ValueError(f"{ENV_SHARD}={text!r}: expected i/N (digits only), e.g. 0/3")
        shard = cls(int(match[1]), int(match[2]))
        if shard.count < 1 or not 0 <= shard.index < shard.count:
            raise ValueError(f"{ENV_SHARD}={text!r}: need N >= 1 and 0 <= i < N")
        return shard

    @classmethod
    def every(cls, count: int) -> list[Shard]:
        """The ``count`` shards of a split, in order."""
        return [cls(index, count) for index in range(count)]

    @classmethod
    def from_mark(cls, mark: Any, where: str) -> Shard:
        """The shard a results file's mark (``{"index": i, "count": N}``) names; anything else names ``where``."""
        if not isinstance(mark, dict) or not all(isinstance(mark.get(k), int) for k in ("index", "count")):
            raise ValueError(f"{where}: field {SHARD_KEY!r} must be {{'index': i, 'count': N}}, got {mark!r}")
        return cls.parse(f"{mark['index']}/{mark['count']}")

    def mark(self) -> dict[str, Any]:
        """The results file's mark of this shard (its identity is added by :func:`shard_evaluate`)."""
        return {"index": self.index, "count": self.count}

    @property
    def folder(self) -> str:
        """The unit's folder under the model's run folder."""
        return f"shard-{self.index}-of-{self.count}"

    @property
    def cache_suffix(self) -> str:
        """Appended to the model's request cache name (each shard has its own)."""
        return f"-shard{self.index}of{self.count}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def size(self, n_docs: int) -> int:
        """How many of ``n_docs`` evaluated documents fall in this shard."""
        return len(range(self.index, n_docs, self.count))


def active_shard() -> Shard | None:
    """The shard of this process (``LOGIC_CONSISTENCY_SHARD``), or ``None`` for a whole run."""
    text = os.environ.get(ENV_SHARD, "")
    return Shard.parse(text) if text else None


def check_shard_argv(argv: list[str]) -> None:
    """A bad ``LOGIC_CONSISTENCY_SHARD``, or one with ``--cache_requests`` in ``lm_eval``'s ``argv``: an
    ``OptionError`` before any model is built."""
    from logic_consistency.options import OptionError

    try:
        shard = active_shard()
    except ValueError as error:
        raise OptionError(str(error)) from None
    if shard is not None and any(arg.split("=", 1)[0] == "--cache_requests" for arg in argv):
        # its cache key has lm-eval's rank, not the shard: the shards would read each other's requests
        raise OptionError(f"{ENV_SHARD}={shard}: --cache_requests cannot be used with shards")


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


def evaluated_docs(name: str, task: Any, limit: Any, samples: Any) -> int:
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


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def run_identity(tasks: dict[str, Any], limit: Any, samples: Any) -> dict[str, Any]:
    """What defines a shard's run besides the model (which lm-eval records in ``config``): the build,
    the suite's version, ``--limit`` / ``--samples``, and every task's version and options
    (its ``metadata``: ``max_items``, the data hash, ...), taken from every task of the run, whether
    or not this shard has documents of it. :mod:`.merge` refuses shards whose identities differ."""
    from logic_consistency import __version__

    return {
        "build_id": os.environ.get(ENV_BUILD) or None,
        "suite_version": __version__,
        "limit": _json_safe(limit),
        "samples": _json_safe(samples),
        "tasks": {
            name: {
                "version": _json_safe(getattr(task, "VERSION", None)),
                "options": _json_safe(dict(getattr(getattr(task, "config", None), "metadata", None) or {})),
            }
            for name, task in sorted(tasks.items())
        },
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
    atomic_write(path, [dumps(payload, f"{ENV_METRICS}={path}").encode("utf-8")])


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
        limit, samples = arguments.get("limit"), arguments.get("samples")
        identity = run_identity(task_dict["tasks"], limit, samples)
        tasks = {
            name: task
            for name, task in task_dict["tasks"].items()
            if shard.size(evaluated_docs(name, task, limit, samples))
        }
        arguments["task_dict"] = {**task_dict, "tasks": tasks, "groups": {}}
        results = evaluate(*bound.args, **bound.kwargs) if tasks else _empty_results()
        if results is not None:
            _write_metrics(shard, results)
            results[SHARD_KEY] = {**shard.mark(), "identity": identity}
        return results

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
