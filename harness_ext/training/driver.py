"""The one driver of every ``improve`` study, and the recipe a family declares to it.

:func:`run_study` knows no task family. Under the folder's lock (:mod:`.study_lock`) it checks the
base once, takes the options' training settings (:attr:`.study_options.StudyOptions.settings`), asks
the recipe for its plan (its checks first; then data: the identity, whether it trains, its stages),
checks the devices, opens the study (:class:`~.study.Study`) and, stage by stage (:data:`Stages`),
checks each unit's kept rows, hands their merged weights and then the unfinished units to the
executor, and sends the stage's rows back; the stages end by writing the report. Returns the rows.

A recipe (:class:`StudyRecipe`, a family's ``improve`` module's ``RECIPE``, found by
``tasks/improve_recipes.py``) is its name, help, options dataclass (:mod:`.study_flags`) and plan. It
calls down, never back into the driver, so a third recipe needs no edit here nor in the command line;
it hands the driver data, not callbacks: a walk from the driver enters its code at ``plan``, its
stages' resumptions and its units' work (``scripts/walk_climbs.py``; GV's lazy kept rows a fourth)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapter_manifest import check_base
from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS, resolve

from .devices import check_devices
from .recipes import TrainingRecipe, TrainSettings
from .study import Study
from .study_executor import StudyExecutor, StudyUnit, run_locally
from .study_identity import base_identity
from .study_lock import study_lock
from .study_options import StudyOptions

__all__ = ["PlannedUnit", "StudyBase", "StudyExecutor", "StudyPlan", "StudyRecipe", "run_locally", "run_study"]

#: A row's summary, as its unit returns it and its ``row.json`` keeps it.
Row = dict[str, Any]


@dataclass(frozen=True)
class StudyBase:
    """What the driver checked once and every hook of the recipe takes: the base model's checked folder,
    its name as the user gave it (the study's ``base``) and the training settings of the options."""

    path: Path
    label: str
    settings: TrainSettings

    def identity(self, options: StudyOptions, own: Mapping[str, Any], hyperparameters: Any) -> dict[str, Any]:
        """What makes a study's rows comparable (its ``study.json``): the recipe, the base as named and its
        fingerprint by content (:func:`~.study_identity.base_identity`; not its path: a study moved to
        another machine with the same model is kept), the tasks, the limit, the
        recipe's ``own`` settings, the task options, the ``hyperparameters``, the chat template and the
        backend: everything that changes a row's numbers."""
        return {
            "study": options.recipe,
            # an embedded model by its name, a folder by its own name: its path (another home, another
            # machine) is no part of the study; its content is (base_identity)
            "base": self.label if self.label in EMBEDDED_MODELS else Path(self.label).name,
            "tasks": options.tasks,
            "limit": options.limit,
            **own,
            "metadata": dict(options.metadata),
            "hyperparameters": hyperparameters,
            "chat_template": options.chat_template,
            "eval_backend": options.eval_backend,  # lc-hf and hf agree within a tolerance, not bit for bit
            **base_identity(self.path, chat_template=options.chat_template),
        }


@dataclass(frozen=True)
class PlannedUnit:
    """One unit of a stage, with what the driver checks before it runs.

    Attributes:
        unit: The unit (its name, its rows, its work).
        kept: Each row to check now, with the identity it would be made with (:mod:`.study_identity`):
            a kept row made otherwise is refused or rebuilt, a kept row's merged weights are made.
            Plain data where the recipe can give it (REPAIR's, a list); read in order, and lazily where
            an identity depends on the check of the row before it (GV's round k trains on round k-1's
            kept evaluation). A row left out is checked by its unit, once its data is known.
        needs: Files besides its rows' ``row.json`` that a finished unit leaves (GV's round 0: the
            train-split evaluation every chain trains from); the unit runs while one is missing.
    """

    unit: StudyUnit
    kept: Iterable[tuple[str, Mapping[str, Any]]] = ()
    needs: Sequence[Path] = ()


#: A run's stages: a generator that yields each stage's units, is sent back that stage's rows (in its
#: units' order, kept rows included) and, after its last stage, writes the study's report from them.
Stages = Generator[Sequence[PlannedUnit], list[Row], None]


@dataclass(frozen=True)
class StudyPlan:
    """One run of a recipe, as its plan hands it to the driver: data, and one generator of stages.

    Attributes:
        identity: What makes the study's rows comparable (its ``study.json``), made once by the plan.
        stages: The opened study -> its :data:`Stages`. Nothing of it runs until the driver asks for
            the first stage; the next stage is asked for once the previous one has run, and the report
            is its tail, so the driver enters the recipe's code only here, in ``plan`` and in the units.
        trains: Whether a unit trains an adapter (the driver then checks the devices before any work).
    """

    identity: Mapping[str, Any]
    stages: Callable[[Study], Stages]
    trains: bool = True


@dataclass(frozen=True)
class StudyRecipe:
    """A family's ``improve`` recipe as it declares itself (its ``improve`` module's ``RECIPE``).

    Attributes:
        name: The subcommand (``improve <name>``), and the ``study`` of its folders.
        help: The subcommand's help line.
        options: Its options dataclass, a :class:`~.study_options.StudyOptions`: its flags, defaults,
            help and checks, and its training (``options.training``: its paper's values and trainer).
        plan: Its options (an instance of ``options``) and the checked base -> its :class:`StudyPlan`,
            once the checks that come before the study's folder is opened have passed.

    Raises:
        ValueError: Its options declare no training, or one named otherwise than the recipe.
    """

    name: str
    help: str
    options: type[StudyOptions]
    plan: Callable[[Any, StudyBase], StudyPlan]

    def __post_init__(self) -> None:
        _ = self.training

    @property
    def training(self) -> TrainingRecipe:
        """Its training: its paper's values as the ``--train-args`` defaults, where it states each, its trainer.

        Raises:
            ValueError: Its options declare no training, or one named otherwise than the recipe.
        """
        training = self.options.training
        if training is None or {training.name, self.options.recipe} != {self.name}:
            raise ValueError(
                f"recipe {self.name!r}: its options ({self.options.__name__}) must set recipe = {self.name!r} and "
                f"training = a TrainingRecipe named {self.name!r} (got {self.options.recipe!r}, "
                f"{training.name if training else None!r})"
            )
        return training


def _base(options: StudyOptions) -> tuple[Path, str]:
    """An embedded model's name (converted once to safetensors) or a transformers folder, and its name
    as given (the study's ``base``)."""
    name = str(options.base)
    if name in EMBEDDED_MODELS:
        return resolve(name), name
    return Path(options.base), options.base_label or name


def run_study(recipe: StudyRecipe, options: StudyOptions, executor: StudyExecutor = run_locally) -> list[Row]:
    """Run (or resume) ``recipe``'s study under its folder's lock; its report written; its rows in order.

    Raises:
        StudyLockedError: Another ``improve`` holds the folder.
        StudyFolderError: ``out`` holds another study.
        RowMismatch: A kept row was made otherwise (without ``--rebuild-mismatched``).
        TrainingError: Several GPUs, QLoRA without one, too few examples, a NaN loss, ...
        StudyUnitError: A unit failed (naming it and its error).
    """
    path, label = _base(options)
    with study_lock(options.out):
        base = StudyBase(check_base(path), label, options.settings)
        plan = recipe.plan(options, base)
        if plan.trains and _runs_here(executor):
            check_devices(base.settings)  # QLoRA without a GPU, several GPUs: refused before any evaluation
        study = Study(options.out, plan.identity, options.rebuild_mismatched)
        study.open()
        stages = plan.stages(study)  # a generator: none of its code runs before the first stage is asked for
        rows: list[Row] = []
        done: list[Row] | None = None
        while (stage := _next_stage(stages, done)) is not None:
            done = _run_stage(study, stage, executor, merge_weights=options.merge_weights)
            rows += done
        return rows


def _runs_here(executor: StudyExecutor) -> bool:
    """Whether the units train on this machine (its devices are then checked before any evaluation); a
    stand-in executor a test hands over is not :class:`StudyExecutor` and checks nothing."""
    return isinstance(executor, StudyExecutor) and not executor.units.remote


def _next_stage(stages: Stages, done: list[Row] | None) -> Sequence[PlannedUnit] | None:
    """The first stage (``done`` ``None``), or the next once the plan is sent the rows of the one before;
    ``None``: the plan has run its last stage and written its report."""
    try:
        return next(stages) if done is None else stages.send(done)
    except StopIteration:
        return None


def _kept(study: Study, planned: PlannedUnit, *, merge_weights: bool) -> list[StudyUnit]:
    """Check the unit's kept rows; with ``--merge-weights``, the units that merge the kept rows' adapters."""
    merges = []
    for row, identity in planned.kept:
        merge = study.merge_unit(row) if study.kept(row, identity) is not None and merge_weights else None
        merges += [merge] if merge is not None else []
    return merges


def _finished(study: Study, planned: PlannedUnit) -> bool:
    return all(study.finished(row) is not None for row in planned.unit.rows) and all(
        path.is_file() for path in planned.needs
    )


def _run_stage(
    study: Study, stage: Sequence[PlannedUnit], executor: StudyExecutor, *, merge_weights: bool
) -> list[Row]:
    """Check a stage's kept rows, merge their weights (before any unit that might read them), then run its
    unfinished units; the stage's rows in order: what a unit returned where it ran, else its finished rows
    as kept. An executor is never handed an empty list."""
    merges = [merge for planned in stage for merge in _kept(study, planned, merge_weights=merge_weights)]
    if merges:
        executor(merges)
    pending = [planned.unit for planned in stage if not _finished(study, planned)]
    ran = {unit.name: rows for unit, rows in zip(pending, executor(pending) if pending else [], strict=True)}
    rows: list[Row | None] = []
    for planned in stage:
        done = ran.get(planned.unit.name)
        rows += done if done is not None else [study.finished(row) for row in planned.unit.rows]
    return [row for row in rows if row is not None]
