"""Everything an ``improve`` recipe needs, from one module (as TRL's scripts import from ``trl``).

A recipe lives in its family (``tasks/<family>/improve*.py``) and imports from here only
(``tests/test_recipe_api.py`` holds it): its training (:class:`TrainingRecipe`: its paper's values as
:class:`PaperValues`, each :class:`Stated` with its section, its trainer), its options
(:class:`StudyOptions` and :func:`option`), its declaration to the driver (:class:`StudyRecipe`, whose
plan returns a :class:`StudyPlan` of :class:`PlannedUnit` stages), and what its units do: train
(:class:`TrainJob`, :func:`train_adapter`), evaluate (:class:`LmEvalRun`, :func:`run_lm_eval`,
:func:`metric_summary`), keep rows (:class:`Study`, :func:`row_identity`) and report
(:func:`table_markdown`, :func:`evaluate_transfer`, :func:`write_transfer_table`). The modules behind it
stay free to move; a name added here is a name every recipe may use.
"""

from __future__ import annotations

from .devices import evaluation_dtype
from .driver import PlannedUnit, Stages, StudyBase, StudyPlan, StudyRecipe, run_study
from .prompts import format_examples
from .recipes import TRAINERS, PaperValues, Stated, TrainingRecipe, TrainSettings, parse_train_args
from .study import Study
from .study_eval import LmEvalRun, run_lm_eval
from .study_executor import RanOn, StudyExecutor, StudyUnit, run_locally
from .study_flags import option
from .study_identity import row_identity
from .study_options import StudyOptions
from .study_report import metric_summary, table_markdown
from .trainer import Example, TrainingError, TrainJob, train_adapter
from .transfer import TransferFamily, evaluate_transfer, write_transfer_table

__all__ = [
    "TRAINERS",
    "Example",
    "LmEvalRun",
    "PaperValues",
    "PlannedUnit",
    "RanOn",
    "Stages",
    "Stated",
    "Study",
    "StudyBase",
    "StudyExecutor",
    "StudyOptions",
    "StudyPlan",
    "StudyRecipe",
    "StudyUnit",
    "TrainJob",
    "TrainSettings",
    "TrainingError",
    "TrainingRecipe",
    "TransferFamily",
    "evaluate_transfer",
    "evaluation_dtype",
    "format_examples",
    "metric_summary",
    "option",
    "parse_train_args",
    "row_identity",
    "run_lm_eval",
    "run_locally",
    "run_study",
    "table_markdown",
    "train_adapter",
    "write_transfer_table",
]
