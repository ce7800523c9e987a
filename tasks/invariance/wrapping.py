"""The base task's whole config, as lm-eval's task index holds it, for a wrapped task.

The base is looked up in the index of the run in progress (the ``TaskManager`` the autoload hook saw
built last: lm-eval's own tasks, the suite's and the run's ``--include_path``), and in lm-eval's full
index when that one does not hold it (a caller that built its manager without lm-eval's own tasks).
Its YAML is read as lm-eval reads it (``include:`` and ``!function`` resolved), so the wrapped task
keeps the base's prompt, few-shot settings, filters and dataset. A base that is a group, a tag or a
Python task without YAML cannot be wrapped: the error names it.
"""

from __future__ import annotations

from typing import Any

from logic_consistency.harness_ext.task.loading import recent_task_manager

__all__ = ["BaseTaskError", "OPTION_NAMES", "VALIDATION", "WRAPPER_KEYS", "base_config"]

#: The run options the family reads (``_options_yaml``).
OPTION_NAMES = (
    "transform",
    "max_variants",
    "referring_options",
    "invariance_mode",
    "mcf_format",
    "ask_incorrect",
    "self_validate",
    "seed",
)
#: What follows an answer in the validator's prompt (``self_validate``: an option's label, or a generative
#: base's own answer); " Yes" or " No" is scored.
#: Provenance: the suite's own wording, a Yes/No validator as in Li et al. (ICLR 2024), section 2.
VALIDATION = "\nIs this answer correct? Answer Yes or No.\nAnswer:"
#: The keys of a wrapped task's YAML that are its own; every other key is the base's.
WRAPPER_KEYS = ("task", "task_alias", "tag", "metadata")
#: Keys of the base's config that are not a task's (lm-eval's factory drops them too).
_STRUCTURAL = ("group", "tag", "task_list", "class", "task_alias")


class BaseTaskError(ValueError):
    """The base task cannot be found or wrapped (the message names the wrapped task and the base)."""


def _index_entry(name: str) -> Any:
    from lm_eval.tasks import TaskManager

    manager = recent_task_manager()
    entry = manager.task_index.get(name) if manager is not None else None
    if entry is None:  # the run's index left lm-eval's own tasks out: the full index (as the run would see)
        entry = TaskManager().task_index.get(name)
    return entry


def base_config(name: str, *, wrapper: str) -> dict[str, Any]:
    """The config of the lm-eval task ``name``, as its YAML and includes give it (a fresh copy).

    Raises:
        BaseTaskError: ``name`` is no task in the index, or not a YAML task (a group, a tag, a Python task).
    """
    from lm_eval.tasks._index import Kind
    from lm_eval.tasks._yaml_loader import load_yaml  # lm-eval's own YAML reader (lm_eval_hooks.py)

    entry = _index_entry(name)
    if entry is None:
        raise BaseTaskError(f"task {wrapper!r}: base_task {name!r} is no task lm-eval knows (see `lm_eval ls tasks`)")
    if entry.kind in (Kind.GROUP, Kind.TAG) or not entry.yaml_path:
        raise BaseTaskError(
            f"task {wrapper!r}: base_task {name!r} is a {entry.kind.name.lower()}, not a task with a YAML; wrap its "
            "member tasks (`logic-consistency wrap` writes one wrapped task per member)"
        )
    config = dict(load_yaml(entry.yaml_path, resolve_func=True))
    if "class" in config:
        raise BaseTaskError(
            f"task {wrapper!r}: base_task {name!r} is a Python task class ({entry.yaml_path}); only YAML tasks "
            "(lm-eval's ConfigurableTask) can be wrapped"
        )
    for key in _STRUCTURAL:
        config.pop(key, None)
    return config
