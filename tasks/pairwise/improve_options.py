"""The ``improve repair`` recipe's declaration: its training (the pairwise paper's hyperparameters as
defaults, where the paper states each, TRL's SFT trainer: :data:`TRAINING`) and its options dataclass,
which gives the subcommand's flags, defaults and help (:mod:`logic_consistency.harness_ext.training.study_flags`)
and checks each value once, before any work."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from logic_consistency.harness_ext.training.recipe_api import (
    PaperValues,
    Stated,
    StudyOptions,
    TrainingError,
    TrainingRecipe,
    option,
)
from logic_consistency.options import OptionError, check_flag

from .improve_data import TrainData, check_train_data_fits, parse_train_data
from .improve_rows import BASE_ROWS, METHOD_LABELS, WIN_LOSS

__all__ = ["TRAINING", "RepairStudyOptions"]

#: The pairwise paper's fine-tuning (Liu et al., Appendix F "Instruction-Tuning: Training Details"): lr
#: 5e-5, 2 epochs, weight decay 1e-2, LoRA r 16 and alpha 64, batch 4 with gradient accumulation 2. Not
#: stated there, the suite's choice: a linear schedule and no warmup (transformers' Trainer defaults).
TRAINING = TrainingRecipe(
    "repair",
    PaperValues(
        lr=5e-5, epochs=2, weight_decay=0.01, r=16, alpha=64, batch=4, accumulation=2, scheduler="linear", warmup=0.0
    ),  # fmt: skip
    stated=(
        Stated("lr", 5e-5, "Liu et al. App. F", "A learning rate of 5x10^-5"),
        Stated("epochs", 2, "Liu et al. App. F", "over the course of 2 training epochs"),
        Stated("weight_decay", 0.01, "Liu et al. App. F", "A weight decay of 1x10^-2"),
        Stated("lora_r", 16, "Liu et al. App. F", "the rank r was set to 16"),
        Stated("lora_alpha", 64, "Liu et al. App. F", "the scaling factor alpha was set to 64"),
        Stated("batch_size", 4, "Liu et al. App. F", "The batch size during training was 4"),
        Stated("grad_accum", 2, "Liu et al. App. F", "with a gradient accumulation step of 2"),
    ),
    trainer="sft",
)

#: Table 3's rows: (row folder, label).
ROWS = BASE_ROWS


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(","))


def _downsample_to(text: str) -> str | None:
    """``none`` is no down-sampling (the value is checked with the others, in ``__post_init__``)."""
    return None if text == "none" else text


@dataclass(frozen=True)
class RepairStudyOptions(StudyOptions):
    """The ``improve repair`` settings (each field's ``help`` is its meaning): the common ones, the labels
    flipped, the rows to run and the training data (``task``, ``summarize_feedback[:PATH]`` or
    ``msmarco[:DIR]``, :mod:`.improve_data`), the rank estimation ``methods`` (Table 7), ``downsample_to``
    (``perturbed``: Table 6), ``pairs`` (PairS columns, Table 5); checked once, here."""

    option_folders: ClassVar[tuple[str, ...]] = ("pairwise", "data")
    recipe: ClassVar[str] = "repair"
    training: ClassVar[TrainingRecipe] = TRAINING

    tasks: str = option("logic_consistency_caters", help="the pairwise task (one)")
    flip: float = option(0.1, help="share of labels flipped in the perturbed data (paper: 0.1)", declared="flip")
    rows: tuple[str, ...] = option(
        tuple(name for name, _ in ROWS), help="a subset of the rows, comma-separated", parse=_names
    )
    train_data: str = option(
        "task",
        help="the training preferences: task (the task's own train split), summarize_feedback (Summarize from "
        "Feedback's train split, the paper's data, with --tasks logic_consistency_summeval), summarize_feedback:PATH "
        "(a JSONL file in its schema), msmarco (the 800 training queries of a seeded 1K sample of MS MARCO with "
        "GPT-3.5 rankings, Table 5's data; evaluate with --tasks logic_consistency_msmarco, its 200 others, or "
        "logic_consistency_noveleval, the suite's variant) or msmarco:DIR (a folder of its two files); --limit bounds "
        "the posts or queries (none: all, as the papers)",
    )
    methods: tuple[str, ...] = option(
        (WIN_LOSS,),
        help="rank estimation, comma-separated for one REPAIR-ed row each (the paper's Table 7): win_loss (the "
        "paper's), elo, bt (Bradley-Terry)",
        flag="--method",
        parse=_names,
    )
    downsample_to: str | None = option(
        None,
        help="none or perturbed: down-sample each REPAIR-ed row's training examples to the perturbed row's count "
        "(seeded; the paper's Table 6)",
        parse=_downsample_to,
    )
    pairs: bool = option(
        False,
        help="also evaluate every row with PairS (the task's _pairs variant), raw and calibrated (Table 5)",
        switch=True,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if "," in self.tasks:
            raise TrainingError(f"--tasks: improve repair takes one pairwise task, got {self.tasks!r}")
        unknown = sorted(set(self.rows) - {name for name, _ in ROWS})
        if unknown or not self.rows:
            raise TrainingError(f"--rows: unknown row(s) {unknown}; rows: {[name for name, _ in ROWS]}")
        self._check_methods()
        if self.downsample_to is not None:
            check_flag("downsample_to", self.downsample_to)
        self._check_repaired_rows()
        if self.merge_weights and not self.trains:
            raise TrainingError(
                f"--merge-weights: applies to the rows that train an adapter, and --rows {','.join(self.rows)} has "
                "none; leave --merge-weights out"
            )
        check_train_data_fits(self.train_source, self.tasks)

    def _check_methods(self) -> None:
        """Refuse a ``--method`` list that is empty, repeats a method or names an unknown one."""
        for method in self.methods:
            check_flag("method", method)
        if not self.methods or len(set(self.methods)) != len(self.methods):
            raise OptionError(
                f"--method: {','.join(self.methods)!r} is not a list of distinct methods of {list(METHOD_LABELS)}"
            )

    def _check_repaired_rows(self) -> None:
        """Refuse ``--method`` and ``--downsample-to`` where ``--rows`` has no REPAIR-ed row for them."""
        given = [flag for flag, set_ in (("--method", tuple(self.methods) != (WIN_LOSS,)),
                                         ("--downsample-to", self.downsample_to is not None)) if set_]  # fmt: skip
        if given and not any(name.startswith("repaired") for name in self.rows):
            raise TrainingError(
                f"{', '.join(given)}: applies to the REPAIR-ed rows, and --rows {','.join(self.rows)} has none; "
                "add repaired or repaired_neg to --rows"
            )

    @cached_property
    def train_source(self) -> TrainData:
        """``--train-data`` parsed (once, here: the study reads it from this)."""
        return parse_train_data(self.train_data)

    @property
    def trains(self) -> bool:
        """Whether a row trains an adapter (not when ``--rows`` is zero-shot alone)."""
        return any(name != "zero_shot" for name in self.rows)
