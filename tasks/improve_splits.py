"""The training and test documents of an ``improve`` study: a task loaded on one of its splits (the
suite's ``instance_split`` task option), as ``lm_eval`` loads it, and the check that the two splits
share no instance. The recipes' own: which documents a study trains on is its recipe's data, and an
instance's id and text fields are the suite's tasks', so ``harness_ext`` neither loads a task's
documents nor knows their fields (nor does the study driver climb back into the task classes that
lm-eval builds here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["check_disjoint", "load_split", "split_docs"]


def load_split(
    task_name: str, metadata: Mapping[str, Any], split: str, limit: int | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    """The one way a study loads a task on a split: the lm-eval task under ``instance_split: split``
    (its prompt renderer, the same on either split) and its first ``limit`` documents, as ``lm_eval``
    loads them (the study's data, its disjointness check and its prompts all come from here)."""
    from lm_eval.tasks import TaskManager

    task = TaskManager(metadata={**metadata, "instance_split": split}).load(task_name)["tasks"][task_name]
    docs = list(task.test_docs())
    return task, docs[:limit] if limit is not None else docs


def split_docs(task: str, metadata: Mapping[str, Any], split: str, limit: int | None) -> list[dict[str, Any]]:
    """The first ``limit`` documents of ``task`` under ``instance_split: split`` (:func:`load_split`)."""
    return load_split(task, metadata, split, limit)[1]


def _keys(doc: Mapping[str, Any]) -> set[str]:
    """What makes a document an instance: its id, and its question or context text where it has one."""
    keys = {f"id:{doc.get('instance_id', doc.get('id'))}"}
    keys |= {
        f"{field}:{doc[field]}" for field in ("question", "context") if isinstance(doc.get(field), str) and doc[field]
    }
    return keys


def check_disjoint(tasks: Sequence[str], metadata: Mapping[str, Any], limit: int | None) -> None:
    """Refuse a study whose training and test documents share an instance (before any training).

    Raises:
        ValueError: Naming the task and up to three shared instances.
    """
    for task in tasks:
        train = set().union(*(_keys(doc) for doc in split_docs(task, metadata, "train", limit)))
        test = set().union(*(_keys(doc) for doc in split_docs(task, metadata, "test", limit)))
        shared = sorted(train & test)
        if shared:
            raise ValueError(f"{task}: the train and test documents share instances ({shared[:3]}); refusing to train")
