"""What every ``improve`` study takes, declared once: each field is a flag of every ``improve <recipe>``
subcommand (:mod:`.study_flags`), its default and its help, and each value is checked here, once.

A recipe's options extend :class:`StudyOptions` with its own fields (and its own ``tasks`` default,
the task-option folders its ``--metadata`` may set: :attr:`StudyOptions.option_folders`, and its
training: :attr:`StudyOptions.training`, its paper's values and trainer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from logic_consistency.options import (
    OptionError,
    check_option,
    declared_options,
    metadata_from_json,
    reject_unknown,
)

from .eval_backend import DEFAULT_EVAL_BACKEND
from .recipes import TrainingRecipe, TrainSettings, parse_train_args
from .study_flags import check_declared_fields, option

__all__ = ["StudyOptions", "check_study_metadata", "check_task_list"]


def _metadata(text: str) -> dict[str, Any]:
    return metadata_from_json(text) or {}


def check_study_metadata(metadata: Mapping[str, Any], folders: tuple[str, ...], recipe: str) -> None:
    """Refuse a ``--metadata`` key the study's own tasks do not declare (a case variant, another family's
    option, ``instance_split``), naming it, and check each value against its declaration.

    Raises:
        OptionError: Naming ``--metadata``, the key and what it must be.
    """
    if "instance_split" in metadata:
        raise OptionError("--metadata: instance_split is set by the study (train for data, test for evaluation)")
    declared = declared_options()
    own = {name for name, arg in declared.items() if arg.source is not None and arg.source.parent.name in folders}
    for key in metadata:
        arg = declared.get(key)
        if key not in own and arg is not None and arg.source is not None:
            raise OptionError(
                f"--metadata: {key!r} is an option of the tasks of {arg.source.parent.name}/, not of an improve "
                f"{recipe} study's tasks; options it takes: {sorted(own)}"
            )
    reject_unknown(metadata, own, where="--metadata", what="option")
    for key, value in metadata.items():
        check_option(key, value, label=key, where="--metadata")


def check_task_list(text: str) -> list[str]:
    """``--tasks`` as a list of names: none empty (a trailing or doubled comma is named, never a ``KeyError``
    later), none given twice (each task is its own chains and row folders).

    Raises:
        OptionError: Naming ``--tasks``, what it was given and what is wrong.
    """
    names = text.split(",")
    if any(not name.strip() for name in names):
        raise OptionError(
            f"--tasks {text!r}: an empty task name (a trailing, leading or doubled comma); give the tasks "
            "comma-separated, each named"
        )
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise OptionError(f"--tasks {text!r}: {', '.join(twice)} given twice; give each task once")
    return names


@dataclass(frozen=True)
class StudyOptions:
    """What every ``improve`` study takes (a recipe's options extend it); each field's ``help`` is its
    meaning. ``base_label`` (the base as the user named it, recorded in the study's identity) is not a flag.
    """

    #: The folders (``tasks/<folder>/_options_yaml``) whose task options ``--metadata`` may set.
    option_folders: ClassVar[tuple[str, ...]] = ("data",)
    #: The recipe's name (``improve <recipe>``), in messages.
    recipe: ClassVar[str] = ""
    #: The recipe's training (its paper's values as the ``--train-args`` defaults, its trainer), declared
    #: in its family's module; ``None`` only for these common options, which no recipe runs as they are.
    training: ClassVar[TrainingRecipe | None] = None

    base: Path = option(help="the base model: an embedded model (see logic-consistency models) or a transformers folder",
                        parse=Path)  # fmt: skip
    out: Path = option(help="the study's folder (a rerun resumes it; one improve process at a time)", parse=Path)
    tasks: str = option("", help="the task(s), comma-separated")
    limit: int | None = option(None, help="documents per split (lm_eval --limit)", declared="limit", parse=int)
    max_steps: int | None = option(
        None, help="optimizer steps per adapter (a small run; overrides the epochs)", declared="max_steps"
    )
    min_examples: int = option(8, help="refuse to train a row on fewer examples than this", declared="min_examples")
    train_args: Mapping[str, Any] = option(
        {}, help="hyperparameter overrides, KEY=VALUE,... (lr, epochs, lora_r, batch_size, ...)", parse=parse_train_args
    )
    metadata: Mapping[str, Any] = option(
        {}, help="task options as JSON (as lm_eval --metadata; instance_split is the study's)", parse=_metadata
    )
    chat_template: bool = option(
        True, help="evaluate and train without the chat template", flag="--no-chat-template", switch=True
    )
    merge_weights: bool = option(
        False,
        help="also write each adapter's merged weights (safetensors, for vLLM / llama.cpp) beside it, as "
        "ADAPTER-merged (a rerun writes them for the rows it keeps)",
        switch=True,
    )
    rebuild_mismatched: bool = option(
        False,
        help="a rerun rebuilds each kept row made otherwise than this run would make it (another chat template, "
        "data, base, options...) instead of refusing it",
        switch=True,
        declared="rebuild_mismatched",
    )
    eval_backend: str = option(
        DEFAULT_EVAL_BACKEND,
        help="the lm-eval backend that scores every row: lc-hf (default: the suite's prefix-sharing hf, the same "
        "scores within docs/backends.md's tolerance, several times faster) or hf (lm-eval's stock path)",
        declared="eval_backend",
    )
    transfer: bool = option(
        False,
        help="evaluate every row on the other families too (pairwise, GV, causal, at the study's --limit) and "
        "write the transfer table (transfer.md)",
        switch=True,
    )
    base_label: str = ""

    def __post_init__(self) -> None:
        check_declared_fields(self)
        check_task_list(self.tasks)
        if self.max_steps is not None and "max_steps" in self.train_args:
            raise OptionError("--max-steps and --train-args max_steps both set max_steps; give one")
        check_study_metadata(self.metadata, self.option_folders, self.recipe)
        if self.training is not None:  # --train-args against the recipe's declarations, before any work
            _ = self.settings

    @property
    def task_names(self) -> list[str]:
        """``--tasks`` as a list (checked once, when the options are made: :func:`check_task_list`)."""
        return self.tasks.split(",")

    @cached_property
    def settings(self) -> TrainSettings:
        """The recipe's training settings with ``--train-args`` and ``--max-steps`` applied, checked once
        (:meth:`.recipes.TrainingRecipe.settings`, when the options are made) and kept.

        Raises:
            OptionError: The options declare no :attr:`training`, or a ``--train-args`` value is refused.
        """
        if self.training is None:
            raise OptionError(f"improve {self.recipe or '(no recipe)'}: its options declare no training recipe")
        return self.training.settings(self.train_overrides)

    @property
    def train_overrides(self) -> dict[str, Any]:
        """``--train-args`` with ``--max-steps`` (what :meth:`.recipes.TrainingRecipe.settings` takes)."""
        given = dict(self.train_args)
        if self.max_steps is not None:
            given["max_steps"] = self.max_steps
        return given
