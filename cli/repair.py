"""``logic-consistency repair INPUT --out DIR``: REPAIR-ed fine-tuning data from pairwise preferences.

A thin layer over :func:`logic_consistency.tasks.pairwise.repair.run_repair`: prints the input's and
the REPAIR-ed data's statistics side by side (the paper's Table 2) and the files written.
"""

from __future__ import annotations

import argparse
from typing import Any

from logic_consistency.tasks.pairwise import repair

from .subcommand import add_subcommand, options_from

__all__ = ["DESCRIPTION", "add_cli"]

#: ``repair --help``'s description: the data step of the pairwise paper's fine-tuning; the fine-tuning
#: itself is ``improve repair`` (the module docstring of tasks/pairwise/repair.py describes the algorithm).
DESCRIPTION = """REPAIR: rank estimation and preference augmentation (Liu et al., "Aligning with Logic", section 4,
Figure 6, Tables 2-3 and 5-7): turn sparse, noisy pairwise preferences into consistent fine-tuning
data, and print Table 2's statistics. This command builds and checks the data; `logic-consistency
improve repair` fine-tunes on it (LoRA, the paper's hyperparameters) and measures the tuned model
(Table 3)."""


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _run(args: argparse.Namespace) -> int:
    options = options_from(repair.RepairOptions, args, ks=tuple(args.ks))
    run = repair.run_repair(options)
    summary, before, after = run.summary, run.summary["before"], run.summary["after"]
    flipped = summary["flipped"]
    rows = [("comparisons", "comparisons"), ("per instance", "comparisons_per_instance")]
    rows += [(f"s_tran({k})", f"s_tran_{k}") for k in options.ks] + [("s_comm", "s_comm")]
    print(
        f"REPAIR ({summary['method']}) over {before['instances']} instances"
        + (f", {flipped} labels flipped first" if flipped else "")
    )
    print(f"{'':14}{'input':>10}{'REPAIR-ed':>12}")
    for label, key in rows:
        print(f"{label:14}{_fmt(before[key]):>10}{_fmt(after[key]):>12}")
    print(f"records with negated relations: {summary['after_with_negated_records']}")
    if after["comparisons"] == 0:
        print(
            "warning: no pair could be ordered, every instance's items are tied (for example the "
            "judgements of a judge that always picks the first-shown option); the output files are empty"
        )
    print(
        f"agreement of the refined ranking with the input: {_fmt(summary['agreement'])} (tied: {_fmt(summary['tied'])})"
    )
    for target in run.written:
        print(f"wrote {target}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``repair`` (``logic-consistency repair INPUT --out DIR``)."""
    parser = add_subcommand(subparsers, "repair", DESCRIPTION, _run)
    parser.add_argument(
        "input",
        nargs="?",
        help="preferences JSONL, a pairwise samples_<task>_*.jsonl, or a Summarize-from-Feedback JSONL",
    )
    parser.add_argument(
        "--out", required=True, help="output folder (repaired.jsonl, repaired_with_negated.jsonl, repair_stats.json)"
    )
    parser.add_argument(
        "--format",
        choices=("auto", "jsonl", "samples", "summarize_feedback"),
        default="auto",
        help="input format (auto: samples_* files are lm-eval sample logs, else preferences JSONL)",
    )
    parser.add_argument(
        "--loader",
        choices=("summeval", "noveleval", "caters", "summarize_feedback"),
        help="instead of INPUT: human preferences of a dataset loader",
    )
    parser.add_argument("--split", default="validation", help="Summarize-from-Feedback split (train / validation)")
    parser.add_argument("--max-items", type=int, default=None, help="cap items per instance (dataset loaders)")
    parser.add_argument("--method", default="win_loss", help="rank estimation: win_loss (default), elo or bt")
    parser.add_argument("--flip", type=float, default=0.0, help="flip this share of labels first (the paper: 0.1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --flip")
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 5], help="transitivity subset sizes K (default 3 5)")
    parser.add_argument("--noun", default=None, help="what the items are called in prompts (default by source)")
    parser.add_argument("--ids-only", action="store_true", help="write item ids instead of chat messages")
    return parser
