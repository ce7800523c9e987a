"""``logic-consistency correlate RESULTS... [--out DIR]``: the paper's model-level studies.

A thin layer over :func:`logic_consistency.tasks.pairwise.report.correlate`: prints the report's
tables and, with ``--out``, writes its JSON and PNG scatter plots.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from logic_consistency.tasks.pairwise import report
from logic_consistency.tasks.pairwise.report_plots import write_plots

from .subcommand import add_subcommand

__all__ = ["add_cli"]


def _run(args: argparse.Namespace) -> int:
    correlation = report.correlate(args.results, include_variants=args.include_variants, pooled=args.pooled)
    report.print_report(correlation.report)
    if args.out:
        print(f"wrote {report.write_correlation(correlation, args.out)}")
        for path in write_plots(correlation.report, Path(args.out)):
            print(f"wrote {path}")
    return 0


def _variants(text: str) -> list[str]:
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    unknown = sorted(set(chosen) - set(report.OTHER_VARIANTS))
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown variant(s) {unknown or [text]}; choose from {', '.join(report.OTHER_VARIANTS)}"
        )
    return chosen


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``correlate`` (``logic-consistency correlate RESULTS... [--out DIR] [--include-variants V] [--pooled]``)."""
    parser = add_subcommand(subparsers, "correlate", report.__doc__, _run)
    parser.add_argument("results", nargs="+", help="lm-eval results_*.json files or folders holding them")
    parser.add_argument("--out", help="folder for correlation_report.json and PNG scatter plots")
    parser.add_argument(
        "--include-variants",
        type=_variants,
        default=[],
        metavar="V[,V]",
        help=f"also count these variants as points of a model's series ({', '.join(report.OTHER_VARIANTS)}); "
        "by default they are kept apart",
    )
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="also report the pooled view: every model's points of a dataset in one correlation",
    )
    return parser
