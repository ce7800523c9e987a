"""``logic-consistency check-task FILE.yaml``: load a task YAML as lm-eval does and name what is wrong.

A thin layer over :func:`logic_consistency.harness_ext.task.check_task.check_task`: one line naming the
task, its output type and (unless ``--no-data``) its number of documents.
"""

from __future__ import annotations

import argparse
from typing import Any

from logic_consistency.harness_ext.task import check_task

from .subcommand import add_subcommand

__all__ = ["add_cli"]


def _run(args: argparse.Namespace) -> int:
    result = check_task.check_task(args.file, load_data=not args.no_data)
    docs = f", {result['docs']} documents" if "docs" in result else ""
    print(f"{result['yaml_path']}: task {result['task']!r} is valid: output_type {result['output_type']}{docs}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``logic-consistency check-task``."""
    parser = add_subcommand(subparsers, "check-task", check_task.__doc__, _run)
    parser.add_argument("file", help="the task's YAML file")
    parser.add_argument(
        "--no-data", action="store_true", help="check the YAML without building the task (no data load, no network)"
    )
    return parser
