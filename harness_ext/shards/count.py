"""How many shards a run can use: the most documents one whole ``lm_eval`` process evaluates of any task.

Shard ``i`` of a split has a document iff ``i`` is below that number (:meth:`.shard.Shard.size`), so
a split into more shards would start ``lm_eval``, and load the model, for no document. The nightly
build asks this module, in a subprocess (``python -m logic_consistency.harness_ext.shards.count
JSON``, in the model's environment), before it plans a sharded model's units.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from logic_consistency.harness_ext.shards.shard import evaluated_docs
from logic_consistency.harness_ext.task.loading import load_tasks

__all__ = ["main", "most_documents"]


def most_documents(
    tasks: Sequence[str],
    *,
    metadata: Mapping[str, Any],
    limit: float | None,
    samples: Mapping[str, Sequence[int]] | None = None,
    include_path: str | None = None,
) -> int:
    """The most documents one whole process evaluates of any of ``tasks`` (after ``limit`` / ``samples``).

    Loads the tasks as ``lm_eval`` does (their data, no model).

    Raises:
        ValueError, OSError, ...: What loading the tasks raises (an unknown task, missing data).
    """
    if include_path is None:
        loaded = load_tasks(tasks, dict(metadata))
    else:  # the entry's own task folder (``extra_args: [--include_path, DIR]``) beside lm-eval's
        from lm_eval.tasks import TaskManager

        loaded = dict(TaskManager(include_path=include_path, metadata=dict(metadata)).load(list(tasks))["tasks"])
    return max((evaluated_docs(name, task, limit, samples) for name, task in loaded.items()), default=0)


def main(argv: Sequence[str] | None = None) -> int:
    """Print :func:`most_documents` of ``{"tasks": [...], "metadata": {...}, "limit": ..., "samples": ...,
    "include_path": ...}`` (the one argument, JSON)."""
    spec = json.loads((sys.argv[1:] if argv is None else argv)[0])
    count = most_documents(
        spec["tasks"],
        metadata=spec.get("metadata") or {},
        limit=spec.get("limit"),
        samples=spec.get("samples"),
        include_path=spec.get("include_path"),
    )
    print(count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
