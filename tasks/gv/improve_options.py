"""The ``improve gv`` recipe's declaration: its options dataclass, which gives the subcommand's flags,
defaults and help (:mod:`logic_consistency.harness_ext.training.study_flags`) and checks each value
once, before any work, with its training (:mod:`.improve_training`: the GV paper's values)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from logic_consistency.harness_ext.training.recipe_api import StudyOptions, TrainingRecipe, option
from logic_consistency.options import OptionError

from .improve_report import PAPER_TASK
from .improve_tasks import check_study_tasks
from .improve_training import TRAINING

__all__ = ["GVStudyOptions"]


@dataclass(frozen=True)
class GVStudyOptions(StudyOptions):
    """The ``improve gv`` settings (each field's ``help`` is its meaning): the common ones and the rounds
    of each chain, checked once, here: every task a GV study's task (:mod:`.improve_tasks`), ``--pooled``
    only where it applies (several tasks)."""

    option_folders: ClassVar[tuple[str, ...]] = ("gv", "data")
    recipe: ClassVar[str] = "gv"
    training: ClassVar[TrainingRecipe] = TRAINING

    tasks: str = option(
        PAPER_TASK, help="the task(s), comma-separated (the default is the paper's fine-tuning setting)"
    )
    rounds: int = option(3, help="rounds of consistency fine-tuning (the paper's Table 3: 3)", declared="rounds")
    selftrain_rounds: int = option(
        1,
        help="rounds of SelfTrain (1: the paper's baseline; more: the suite's iterated variant)",
        declared="selftrain_rounds",
    )
    pooled: bool = option(
        False,
        help="several --tasks: one adapter per round trained on every task's pairs together (the suite's "
        "variant; by default each task has its own chains with Li et al. App. F's epochs: arithmetic 3, others 6)",
        switch=True,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_study_tasks(self.task_names)
        if self.pooled and len(self.task_names) == 1:
            raise OptionError(
                f"--pooled: applies to several --tasks (one adapter per round trained on every task's pairs "
                f"together); this study has one task, {self.tasks}: leave --pooled out"
            )

    def rounds_of(self, chain: str) -> int:
        """How many rounds ``chain`` (``gv`` or ``selftrain``) runs."""
        return self.rounds if chain == "gv" else self.selftrain_rounds
