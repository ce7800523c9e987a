"""An option that no task of the run reads is refused, naming the tasks that do (issue 39, item 5).

lm-eval gives every task the whole ``--metadata``, so an option of another family (GV's
``generator_shots`` on a CaTeRS run) would be accepted and recorded in the results though it changed
nothing. A family is a folder with a ``_metrics_yaml`` (docs/architecture.md); the options its
``_options_yaml`` declares are read by the tasks defined in that folder (their YAML, else their class). When none of the run's
tasks is of that family, the option is refused before any request. Options declared elsewhere (the
dataset loaders', ``instance_split``) are read across families and are not scoped here; a near miss
of any option is already refused per task (:func:`logic_consistency.options.reject_near_misses`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from logic_consistency.options import OptionError, declared_options

__all__ = ["refuse_unread_options"]

#: The package's root: a task class defined below it is one of the suite's.
_ROOT = Path(__file__).resolve().parents[2]


def _family_folders() -> dict[str, Path]:
    """Each run option declared by a family (a folder with a ``_metrics_yaml``): its folder."""
    return {
        name: arg.source.parent.resolve()
        for name, arg in declared_options().items()
        if arg.source is not None and (arg.source.parent / "_metrics_yaml").is_file()
    }


def _task_files(task: Any, metadata: Mapping[str, Any]) -> list[Path]:
    """Where the task is defined: its YAML (``config_source``, absolute or relative to the package) and its
    class's file (a multi-stage task's class is harness_ext's; a user's YAML may use a family's class)."""
    files = []
    source = metadata.get("config_source")
    if isinstance(source, str) and source:
        files.append((Path(source) if Path(source).is_absolute() else _ROOT / source).resolve())
    try:
        files.append(Path(inspect.getfile(type(task))).resolve())
    except (TypeError, OSError):  # a built-in or dynamically made class: not one of the suite's
        pass
    return [file for file in files if _ROOT in file.parents]


def refuse_unread_options(tasks: Iterable[Any]) -> None:
    """Refuse a ``metadata`` key that is a family's option when no task of the run is of that family.

    Raises:
        OptionError: Naming the key, the family whose tasks read it (its folder and group) and the run's tasks.
    """
    suite, given = _suite_tasks(tasks)
    if not suite:
        return
    for key, folder in sorted(_family_folders().items()):
        if key in given and not any(folder in file.parents for files in suite.values() for file in files):
            raise OptionError(
                f"metadata {key!r}: no task of this run reads it ({sorted(suite)}); it is an option of the "
                f"tasks of {folder.relative_to(_ROOT).as_posix()} (group logic_consistency_{folder.name}): "
                "leave it out, or run those tasks"
            )


def _suite_tasks(tasks: Iterable[Any]) -> tuple[dict[str, list[Path]], set[str]]:
    """The run's tasks defined in the suite (name -> the files that define it), and their metadata keys."""
    suite: dict[str, list[Path]] = {}
    given: set[str] = set()
    for task in tasks:
        config = getattr(task, "config", None)
        metadata = getattr(config, "metadata", None)
        metadata = metadata if isinstance(metadata, Mapping) else {}
        found = _task_files(task, metadata)
        if found:
            suite[str(getattr(config, "task", None) or type(task).__name__)] = found
            given |= set(metadata)
    return suite, given
