"""``logic-consistency export-gv SAMPLES... --out DIR``: consistency fine-tuning pairs from GV sample logs.

A thin layer over :func:`logic_consistency.tasks.gv.export.export_gv`: both
``gv_pairs_consistent.jsonl`` and ``gv_pairs_all.jsonl``, one summary line each.
"""

from __future__ import annotations

import argparse
from typing import Any

from logic_consistency.tasks.gv import export

from .subcommand import add_subcommand

__all__ = ["add_cli"]


def _run(args: argparse.Namespace) -> int:
    for result in export.export_gv(args.samples, args.out):
        print(
            f"{result.path}: {result.pairs} pairs from {result.exported} of {result.documents} documents "
            f"({result.incomplete} with an unparseable answer)"
        )
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``export-gv`` on an ``argparse`` subparsers object (``set_defaults(run=...)``)."""
    parser = add_subcommand(subparsers, "export-gv", export.__doc__, _run)
    parser.add_argument(
        "samples", nargs="+", help="samples_<task>_<timestamp>.jsonl files of GV tasks, or folders holding them"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    return parser
