"""Which chains a GV study trains, on which task, with how many epochs (Li et al. §5, App. F, Table 3).

The paper fine-tunes each task on its own: one consistency fine-tuning chain (rounds 1..R, each round
trained on the consistent pairs of the previous round's model) and one SelfTrain model per task, with
App. F's epochs: "epoch size of 3 for arithmetic because it has an abundance of training data, and
... 6 for all other tasks". Table 3's row for a method is then each task's value from that task's own
adapter, and the average over tasks. :func:`chain_plan` lays this out; with one task it is one chain of
each kind (the rows keep their names: ``gv_round_k``, ``selftrain_round_k``); with several, one of each
kind per task (``gv_round_k_<task>``). ``pooled`` keeps the suite's earlier layout as a labelled variant:
one adapter per round trained on every task's pairs together, 6 epochs when any task is not arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from logic_consistency.harness_ext.training.recipe_api import TrainSettings

from .improve_training import long_task_settings

__all__ = ["ARITHMETIC_TASKS", "CHAINS", "POOLED", "Chain", "chain_plan", "short"]

#: The two kinds of chain, as the paper names them.
CHAINS = {"gv": "consistency FT", "selftrain": "SelfTrain"}
#: The tasks Li et al. train 3 epochs (App. F: arithmetic "has an abundance of training data"); 6 for the others.
#: Every arithmetic variant (the tasks of ``_arithmetic_yaml``, ``tests/test_improve_gv_tasks.py`` checks it).
ARITHMETIC_TASKS = frozenset(
    {
        "logic_consistency_gv_arithmetic",
        "logic_consistency_gv_arithmetic_cot",
        "logic_consistency_gv_arithmetic_generate",
    }
)
#: How the pooled layout is named wherever it appears.
POOLED = "suite's variant: one adapter per round trained on every task's pairs pooled"


def short(task: str) -> str:
    """A GV task's short name (``logic_consistency_gv_triviaqa`` -> ``triviaqa``)."""
    return task.removeprefix("logic_consistency_gv_")


@dataclass(frozen=True)
class Chain:
    """One chain of rounds: its kind (``gv`` or ``selftrain``), the task it trains on (``None``: every
    task of the study, one task or the pooled variant), the tasks its rows are evaluated on and the
    training settings of each of its rounds (App. F's epochs for its task)."""

    kind: str
    task: str | None
    tasks: str
    settings: TrainSettings

    @property
    def name(self) -> str:
        """The chain as a failure names it (its executor unit)."""
        return CHAINS[self.kind] + (f" ({short(self.task)})" if self.task else "")

    def row(self, round_: int) -> str:
        """The folder of the chain's round ``round_`` (round 0 is the base, shared by every chain)."""
        if round_ == 0:
            return "round_0"
        return f"{self.kind}_round_{round_}" + (f"_{short(self.task)}" if self.task else "")

    def label(self, round_: int) -> str:
        """The round's label (its adapter manifest's ``round``): the chain, the round and its data's row."""
        task = f" on {short(self.task)}" if self.task else ""
        return f"{CHAINS[self.kind]} round {round_}{task} (data from {self.row(round_ - 1)})"


def chain_plan(
    tasks: Sequence[str], settings: TrainSettings, train_args: Mapping[str, Any], *, pooled: bool = False
) -> list[Chain]:
    """The study's chains in order (each kind, then each task): one per kind and task, each with its
    task's App. F epochs, or with ``pooled`` (or one task) one per kind over every task.

    ``settings`` are the study's (checked once: :attr:`~...study_options.StudyOptions.settings`), which
    ``train_args`` (``--train-args``) made: they override every chain's, ``epochs`` included.
    """
    if pooled or len(tasks) == 1:
        return [Chain(kind, None, ",".join(tasks), _settings(tasks, settings, train_args)) for kind in CHAINS]
    return [Chain(kind, task, task, _settings([task], settings, train_args)) for kind in CHAINS for task in tasks]


def _settings(trained: Sequence[str], settings: TrainSettings, train_args: Mapping[str, Any]) -> TrainSettings:
    """The settings of a chain that trains on ``trained``: 6 epochs where one is not arithmetic (App. F)."""
    long_task = any(task not in ARITHMETIC_TASKS for task in trained)
    return long_task_settings(settings, train_args) if long_task else settings
