"""Which tasks an ``improve gv`` study takes: the GV family's own tasks (Li et al. §4-6), none of App. H's
measurement tasks, each named in full.

The family's tasks are read from its task YAMLs (each ``tasks/gv/*.yaml``'s ``task``, with lm-eval's own
loader, its ``!function`` tags unresolved), not listed, so a new GV task is a study's task without an edit
here. App. H's ``*_app_h`` tasks measure a validator on fixed sets built from the ground truth
(:mod:`.validator_sets`): they have no generator stage, so no GV pair to train on, and a study already
evaluates them itself for Table 5's validator column. A task of another family (a REPAIR study's pairwise
task, ``logic_consistency_summeval``) has no generator and validator either: refused in one line, naming
the family's tasks, before any work.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from logic_consistency.options import OptionError, closest

__all__ = ["GVTasks", "check_study_tasks", "gv_tasks"]

#: The suffix of App. H's measurement tasks (:mod:`.validator_sets`).
APP_H_SUFFIX = "_app_h"


@dataclass(frozen=True)
class GVTasks:
    """The GV family's task YAMLs as read: each task's name -> the file it ``include``-s (``None``: none),
    and the family's group names."""

    tasks: Mapping[str, str | None]
    groups: frozenset[str]

    @property
    def study_tasks(self) -> list[str]:
        """The tasks a study takes: every GV task but App. H's measurement tasks, sorted."""
        return sorted(name for name in self.tasks if not name.endswith(APP_H_SUFFIX))

    def including(self, template: str) -> frozenset[str]:
        """The study tasks whose YAML includes ``template`` (``_arithmetic_yaml``: the arithmetic variants)."""
        return frozenset(name for name in self.study_tasks if self.tasks[name] == template)


@functools.lru_cache(maxsize=1)
def gv_tasks() -> GVTasks:
    """The GV family's tasks and groups, from ``tasks/gv/*.yaml`` (read once per process)."""
    from lm_eval.tasks._yaml_loader import load_yaml  # lm-eval's own reader of task files

    tasks: dict[str, str | None] = {}
    groups: set[str] = set()
    for path in sorted(Path(__file__).parent.glob("*.yaml")):
        config = load_yaml(path, resolve_func=False, recursive=False)
        if isinstance(config.get("group"), str):
            groups.add(config["group"])
        elif isinstance(config.get("task"), str):
            include = config.get("include")
            tasks[config["task"]] = include if isinstance(include, str) else None
    return GVTasks(tasks, frozenset(groups))


def check_study_tasks(names: Sequence[str]) -> None:
    """Refuse, in one line naming it, a ``--tasks`` entry that is no GV study's task: App. H's measurement
    task, a group, or a task of another family (a pairwise task is ``improve repair``'s).

    Raises:
        OptionError: Naming ``--tasks``, the task and what to give instead.
    """
    family = gv_tasks()
    for name in names:
        if name in family.study_tasks:
            continue
        if name in family.tasks:  # an App. H task
            measured = name.removesuffix(APP_H_SUFFIX)
            raise OptionError(
                f"--tasks {name}: App. H's measurement task (the validator of {measured} on fixed sets built from "
                f"the ground truth), not a study's task: it has no generator answers to train on, and a study "
                f"evaluates it itself for Table 5; give --tasks {measured}"
            )
        if name in family.groups:
            raise OptionError(f"--tasks {name}: a group; improve gv takes tasks: {', '.join(family.study_tasks)}")
        near = closest(name, family.study_tasks) if name.startswith("logic_consistency_gv") else None
        hint = f"; did you mean {near}?" if near else ""
        raise OptionError(
            f"--tasks {name}: not a task of the GV family, which improve gv trains (a pairwise task is improve "
            f"repair's){hint}; GV tasks: {', '.join(family.study_tasks)}"
        )
