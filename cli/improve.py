"""``logic-consistency improve repair|gv --base MODEL --out DIR``: measure, improve, re-measure.

Fine-tunes LoRA adapters the papers' way on ``instance_split: train`` documents and evaluates every
row on ``instance_split: test`` through ``lm_eval`` itself: ``gv`` (Li et al.; default task the paper's
fine-tuning setting, arithmetic with Appendix G's chain-of-thought validator) rows the base,
consistency fine-tuning rounds 1..R and SelfTrain (``--selftrain-rounds`` above 1: the suite's iterated
variant); ``repair`` (Liu et al.) rows zero-shot, perturbed, REPAIR-ed and REPAIR-ed + Neg. Writes the
paper's tables with 95% bootstrap intervals (``gv``: Table 3 per task and the average over tasks,
Table 5's accuracies, the Figure 5 Pareto plot; ``repair``: Table 3, and ``--method elo,bt`` Table 7,
``--downsample-to perturbed`` Table 6, ``--train-data msmarco --pairs`` Table 5) and a README into
``--out``; ``--transfer`` adds a transfer table over the three families (beyond the papers). An
interrupted study resumes (finished rows are kept, training restarts from its last checkpoint). Needs
the ``train`` extra. ``--executor ray`` runs each row (GV: round 0, then each chain) as a Ray task with
``--gpus-per-row`` GPUs (the ``ray`` extra).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from logic_consistency.harness_ext.jobs.processes import Stopped, stop_signals_raise
from logic_consistency.harness_ext.training.driver import StudyRecipe, run_study
from logic_consistency.harness_ext.training.libraries import TrainingUnavailable
from logic_consistency.harness_ext.training.study_executor import StudyExecutor, study_executor
from logic_consistency.harness_ext.training.study_flags import add_options, flag_names, options_from_args, refuse_flags
from logic_consistency.harness_ext.training.trainer import TrainingError
from logic_consistency.options import check_flag
from logic_consistency.tasks.improve_recipes import recipes

from .subcommand import add_executor_flags, add_subcommand

__all__ = ["add_cli"]


def _run(args: argparse.Namespace) -> int:
    try:
        with stop_signals_raise():  # SIGTERM and SIGHUP stop the study as Ctrl-C does, its lm_eval first
            return _study(args)
    except (TrainingError, TrainingUnavailable, RuntimeError) as error:  # RuntimeError: an lm_eval run failed
        print(f"logic-consistency improve: error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Stopped) as stop:
        print(
            f"logic-consistency improve: interrupted; finished rows and the last checkpoint are kept in {args.out}: "
            "run the same command to resume",
            file=sys.stderr,
        )
        return 128 + stop.signum if isinstance(stop, Stopped) else 130


def _executor(args: argparse.Namespace) -> StudyExecutor:
    """``--executor``: here, in order (``local``), or on Ray (checked before any study work)."""
    gpus = check_flag("gpus_per_row", args.gpus_per_row)
    if args.executor == "local":
        return study_executor("local", address=args.ray_address, gpus_per_row=gpus)  # refuses Ray's settings
    from logic_consistency.harness_ext.jobs.ray_session import check_address, check_reachable, require_ray

    require_ray()
    address = check_address(args.ray_address)
    check_reachable(address)  # before the driver builds any data
    return study_executor(args.executor, address=address, gpus_per_row=gpus)


def _study(args: argparse.Namespace) -> int:
    recipe: StudyRecipe = args.recipe
    options = options_from_args(recipe.options, args)  # every value typed and checked once, before any work
    rows = run_study(recipe, options, _executor(args))
    print((options.out / "table.md").read_text(encoding="utf-8"), end="")
    print(f"{len(rows)} rows; wrote {options.out / 'README.md'}")
    return 0


def _add_cluster(parser: argparse.ArgumentParser) -> None:
    cluster = add_executor_flags(
        parser,
        local="the rows one after another here",
        ray="each unit of the study (a row; gv: round 0, then each chain)",
    )
    cluster.add_argument(
        "--gpus-per-row",
        type=float,
        help="num_gpus of each Ray task (a fraction such as 0.5 shares a GPU; default 1 where the cluster has GPUs, "
        "else 0)",
    )


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``improve`` and one subcommand per registered recipe, each built from its options dataclass."""
    parser = add_subcommand(
        subparsers, "improve", __doc__, None, help="measure, improve, re-measure: LoRA consistency fine-tuning studies"
    )
    studies = parser.add_subparsers(dest="study", required=True, metavar="RECIPE")
    found = recipes()
    flags = {name: flag_names(recipe.options) for name, recipe in found.items()}
    for recipe in found.values():
        sub = studies.add_parser(recipe.name, help=recipe.help, description=recipe.help, allow_abbrev=False)
        add_options(sub, recipe.options)
        _add_cluster(sub)
        others = {flag: f"an option of improve {other}, not of improve {recipe.name}"
                  for other, theirs in flags.items() if other != recipe.name
                  for flag in theirs if flag not in flags[recipe.name]}  # fmt: skip
        refuse_flags(sub, others)
        sub.set_defaults(run=_run, recipe=recipe)
    return parser
