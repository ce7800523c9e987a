"""``logic-consistency causal-confusion SAMPLES... [--out DIR]``: the causal tasks' confusion matrices.

A thin layer over :func:`logic_consistency.tasks.causal.report.confusion_report` (JSON + PNG per
task, one line each). :func:`main` runs it on its own, as ``python -m
logic_consistency.cli.causal_confusion`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from logic_consistency.tasks.causal import report

from .subcommand import add_subcommand, run_alone

__all__ = ["add_cli", "main"]


def _run(args: argparse.Namespace) -> int:
    for name, files in report.confusion_report(args.samples, args.out).items():
        print(f"{name}: {files['json']} {files['png']}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``causal-confusion`` subcommand on an ``argparse`` subparsers object.

    The subcommand's ``run`` default takes the parsed arguments and returns an exit status.
    """
    parser = add_subcommand(subparsers, "causal-confusion", report.__doc__, _run)
    parser.add_argument(
        "samples",
        nargs="+",
        help="samples_<task>_<timestamp>.jsonl files (lm-eval --log_samples), "
        "or folders holding them; a file given twice is read once",
    )
    parser.add_argument("--out", default=".", help="output folder (default: the current folder)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the subcommand on its own (usage lines name it ``causal-confusion``)."""
    return run_alone(add_cli, "causal-confusion", argv)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
