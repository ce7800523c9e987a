"""The suite's task folder, and its tasks loaded by name as ``lm_eval`` loads them (no model).

Shared by the cost plan (``plan/``) and the shard count (``shards/``), so it lives in the room both
stand on; the autoload hook names the same folder (:data:`TASKS_DIR`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_SUITE_TASKS_ONLY",
    "TASKS_DIR",
    "load_tasks",
    "recent_task_manager",
    "remember_task_manager",
    "tasks_dir",
]

#: The folder holding this suite's task YAML (what ``--include_path`` would name).
TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
#: Environment variable the suite's own launchers set to ``1`` (a study's ``lm_eval`` runs): the autoload
#: hook then builds every ``TaskManager`` that does not choose ``include_defaults`` itself without lm-eval's
#: ~13,000 built-in task files (:func:`logic_consistency.harness_ext.autoload.suite_tasks_only`).
ENV_SUITE_TASKS_ONLY = "LOGIC_CONSISTENCY_SUITE_TASKS_ONLY"


def tasks_dir() -> Path:
    """Return the folder holding this suite's task YAML (what ``--include_path`` would name)."""
    return TASKS_DIR


def load_tasks(tasks: Sequence[str], metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Task objects by name, as ``simple_evaluate`` loads them (``TaskManager(metadata=...)``).

    The suite's own folder is indexed first, alone (about a second); lm-eval's thousands of
    built-in task files (several seconds) only when a name is not found there.

    Raises:
        ValueError: A name is no task, group or tag lm-eval knows.
    """
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=dict(metadata or {}))
    if any(name not in manager.all_tasks for name in tasks):
        manager = TaskManager(metadata=dict(metadata or {}))
    unknown = [name for name in tasks if name not in manager.all_tasks]
    if unknown:
        raise ValueError(
            f"unknown task(s) {unknown}: see `lm_eval ls tasks` (the suite's tasks start with logic_consistency)"
        )
    return dict(manager.load(list(tasks))["tasks"])


_RECENT: list[weakref.ref[Any]] = []


def remember_task_manager(manager: Any) -> None:
    """Note the ``TaskManager`` just built (the autoload hook calls it): the index of the run in progress,
    ``--include_path`` included, in which a wrapped task looks up its base task."""
    _RECENT[:] = [weakref.ref(manager)]


def recent_task_manager() -> Any:
    """The ``TaskManager`` built last in this process and still alive, or ``None``."""
    return _RECENT[0]() if _RECENT else None
