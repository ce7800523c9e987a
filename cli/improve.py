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
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.jobs.processes import Stopped, stop_signals_raise
from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS, resolve
from logic_consistency.harness_ext.training.libraries import TrainingUnavailable
from logic_consistency.harness_ext.training.recipes import parse_train_args
from logic_consistency.harness_ext.training.study import StudyExecutor, run_locally
from logic_consistency.harness_ext.training.trainer import TrainingError
from logic_consistency.options import OptionError, check_flag, metadata_from_json

from .subcommand import add_subcommand

__all__ = ["add_cli"]

DEFAULT_TASKS = {"gv": "logic_consistency_gv_arithmetic_cot", "repair": "logic_consistency_caters"}


def _base(name: str) -> tuple[Path, str]:
    """An embedded model's name (converted once to safetensors) or a transformers folder."""
    if name in EMBEDDED_MODELS:
        return resolve(name), name
    return Path(name), name


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
        given = [
            flag for flag, value in (("--gpus-per-row", gpus), ("--ray-address", args.ray_address)) if value is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)}: applies to --executor ray only (this study runs --executor local)")
        return run_locally
    from logic_consistency.harness_ext.jobs.ray_session import check_address, check_reachable, require_ray
    from logic_consistency.harness_ext.training.study_executor import RayStudyExecutor

    require_ray()
    address = check_address(args.ray_address)
    check_reachable(address)  # before the driver builds any data
    return RayStudyExecutor(address=address, gpus_per_row=gpus)


def _study(args: argparse.Namespace) -> int:
    # the declared bounds, before any work
    for name in ("min_examples", "rounds", "selftrain_rounds", "flip", "limit", "rebuild_mismatched", "eval_backend"):
        check_flag(name, getattr(args, name))
    train_args = parse_train_args(args.train_args)
    if args.max_steps is not None:
        if "max_steps" in train_args:
            raise OptionError("--max-steps and --train-args max_steps both set max_steps; give one")
        train_args["max_steps"] = str(args.max_steps)
    executor = _executor(args)
    base, label = _base(args.base)
    metadata = metadata_from_json(args.metadata) or {}
    if "instance_split" in metadata:
        raise ValueError("--metadata: instance_split is set by the study (train for data, test for evaluation)")
    tasks = args.tasks or DEFAULT_TASKS[args.study]
    common: dict[str, Any] = {
        "base": base,
        "out": Path(args.out),
        "tasks": tasks,
        "limit": args.limit,
        "min_examples": args.min_examples,
        "train_args": train_args,
        "chat_template": not args.no_chat_template,
        "metadata": metadata,
        "base_label": label,
        "merge_weights": args.merge_weights,
        "rebuild_mismatched": args.rebuild_mismatched,
        "eval_backend": args.eval_backend,
    }
    rows: list[dict[str, Any]]
    if args.study == "gv" and args.train_data != "task":
        raise ValueError("--train-data: improve gv trains on its own generations; the option is improve repair's")
    repair_only = [
        ("--method", args.method != "win_loss"),
        ("--downsample-to", args.downsample_to != "none"),
        ("--pairs", args.pairs),
    ]
    given = [flag for flag, value in repair_only if value]
    if args.study == "gv" and given:
        raise ValueError(f"{', '.join(given)}: applies to improve repair only")
    methods = tuple(check_flag("method", m.strip()) for m in args.method.split(","))
    downsample_to = None if check_flag("downsample_to", args.downsample_to) == "none" else args.downsample_to
    if args.study == "gv":
        from logic_consistency.tasks.gv.improve import GVStudyOptions, run_gv_study

        gv = GVStudyOptions(
            **common, rounds=args.rounds, selftrain_rounds=args.selftrain_rounds, transfer=args.transfer
        )
        rows = run_gv_study(gv, executor)
    else:
        from logic_consistency.tasks.pairwise.improve import RepairStudyOptions, run_repair_study

        rows_asked: dict[str, Any] = {"rows": tuple(args.rows.split(","))} if args.rows else {}
        options = RepairStudyOptions(**common, flip=args.flip, train_data=args.train_data, methods=methods,
                                     downsample_to=downsample_to, pairs=args.pairs, transfer=args.transfer,
                                     **rows_asked)  # fmt: skip
        rows = run_repair_study(options, executor)
    print((Path(args.out) / "table.md").read_text(encoding="utf-8"), end="")
    print(f"{len(rows)} rows; wrote {Path(args.out) / 'README.md'}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``improve`` (``logic-consistency improve repair|gv --base MODEL --out DIR``)."""
    parser = add_subcommand(
        subparsers, "improve", __doc__, _run, help="measure, improve, re-measure: LoRA consistency fine-tuning studies"
    )
    parser.add_argument("study", choices=["repair", "gv"], help="the recipe: repair (Liu et al.) or gv (Li et al.)")
    parser.add_argument(
        "--base",
        required=True,
        help=f"the base model: an embedded model ({', '.join(EMBEDDED_MODELS)}) or a transformers folder",
    )
    parser.add_argument("--out", required=True, help="the study's folder (a rerun resumes it)")
    parser.add_argument(
        "--tasks",
        help="the task(s), comma-separated (gv: logic_consistency_gv_arithmetic_cot, the paper's fine-tuning "
        "setting; repair: logic_consistency_caters)",
    )
    parser.add_argument("--limit", type=int, help="documents per split (lm_eval --limit)")
    parser.add_argument("--max-steps", type=int, help="optimizer steps per adapter (a small run; overrides the epochs)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="gv: rounds of consistency fine-tuning (the paper's Table 3: 3)"
    )
    parser.add_argument(
        "--selftrain-rounds",
        type=int,
        default=1,
        help="gv: rounds of SelfTrain (1: the paper's baseline; more: the suite's iterated variant)",
    )
    parser.add_argument(
        "--flip", type=float, default=0.1, help="repair: share of labels flipped in the perturbed data (paper: 0.1)"
    )
    parser.add_argument(
        "--rows", help="repair: a subset of the rows, comma-separated (zero_shot,perturbed,repaired,repaired_neg)"
    )
    parser.add_argument(
        "--method",
        default="win_loss",
        help="repair: rank estimation, comma-separated for one REPAIR-ed row each (the paper's Table 7): win_loss "
        "(default, the paper's), elo, bt (Bradley-Terry)",
    )
    parser.add_argument(
        "--downsample-to",
        default="none",
        help="repair: none (default) or perturbed: down-sample each REPAIR-ed row's training examples to the perturbed row's count "
        "(seeded; the paper's Table 6)",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="repair: also evaluate every row with PairS (the task's _pairs variant), raw and calibrated (Table 5)",
    )
    parser.add_argument(
        "--transfer",
        action="store_true",
        help="evaluate every row on the other families too (pairwise, GV, causal, at the study's --limit) and "
        "write the transfer table (transfer.md)",
    )
    parser.add_argument(
        "--train-data",
        default="task",
        help="repair: the training preferences: task (the task's own train split), summarize_feedback "
        "(Summarize from Feedback's train split, the paper's data: $LOGIC_CONSISTENCY_DATA's copy or the hub), "
        "summarize_feedback:PATH (a JSONL file in its schema), msmarco (MS MARCO with GPT-3.5 rankings, Table 5's "
        "data, with --tasks logic_consistency_noveleval) or msmarco:DIR (a folder of its two files); --limit bounds "
        "the posts or queries",
    )
    parser.add_argument("--min-examples", type=int, default=8, help="refuse to train a row on fewer examples than this")
    parser.add_argument(
        "--train-args", help="hyperparameter overrides, KEY=VALUE,... (lr, epochs, lora_r, batch_size, ...)"
    )
    parser.add_argument(
        "--metadata", help="task options as JSON (as lm_eval --metadata; instance_split is the study's)"
    )
    parser.add_argument("--no-chat-template", action="store_true", help="evaluate and train without the chat template")
    parser.add_argument(
        "--merge-weights",
        action="store_true",
        help="also write each adapter's merged weights (safetensors, for vLLM / llama.cpp) beside it, as ADAPTER-merged "
        "(a rerun writes them for the rows it keeps)",
    )
    parser.add_argument(
        "--rebuild-mismatched",
        action="store_true",
        help="a rerun rebuilds each kept row made otherwise than this run would make it (another chat template, "
        "data, base, options...) instead of refusing it",
    )
    parser.add_argument(
        "--eval-backend",
        default="lc-hf",
        help="the lm-eval backend that scores every row: lc-hf (default: the suite's prefix-sharing hf, the same "
        "scores, several times faster) or hf (lm-eval's stock path)",
    )
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: the rows one after another here (default); ray: each row (gv: round 0, then each chain) "
        "is a Ray task (needs Ray: from a clone, pip install -e '.[ray]')",
    )
    cluster.add_argument(
        "--ray-address", help="Ray cluster to join: auto or ray://host:port (default: start a local Ray)"
    )
    cluster.add_argument(
        "--gpus-per-row",
        type=float,
        help="num_gpus of each Ray task (a fraction such as 0.5 shares a GPU; default 1 where the cluster has GPUs, "
        "else 0)",
    )
    return parser
