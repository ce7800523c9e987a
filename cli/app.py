"""The ``logic-consistency`` parser and entry point: every command module's ``add_cli``, in order.

:data:`COMMANDS` lists the registrars; each command module is a thin ``argparse`` layer over a
function of its family or layer. Every output is checked first (``outputs.check_outputs``). Exit
status: 0; 2 for bad arguments or input; 3 when an output cannot be written (one line naming the
path); ``leaderboard build`` 1 when a model failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from logic_consistency.outputs import OutputError

from . import causal_confusion, check_task, correlate, export_gv, improve, leaderboard, models, plan, repair, tasks_dir

__all__ = ["COMMANDS", "DESCRIPTION", "OUTPUT_ERROR_STATUS", "build_parser", "main"]

#: Exit status when an output cannot be written (read-only, permissions, immutable, disk full); bad
#: arguments or input are 2, and ``leaderboard build`` uses 1 for "a model failed".
OUTPUT_ERROR_STATUS = 3

#: The top-level ``--help`` description.
DESCRIPTION = "``logic-consistency``: the console entry point (the top of the layers; it may import every one)."

#: Each command module's ``add_cli(subparsers)``, in the order of the command list.
COMMANDS: tuple[Callable[[Any], object], ...] = (
    tasks_dir.add_cli,
    models.add_cli,
    export_gv.add_cli,
    causal_confusion.add_cli,
    repair.add_cli,
    improve.add_cli,
    correlate.add_cli,
    leaderboard.add_cli,
    plan.add_cli,
    check_task.add_cli,
)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(prog="logic-consistency", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    for add_cli in COMMANDS:
        add_cli(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logic-consistency`` console script."""

    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except OutputError as error:  # an output the file system refuses: status 3, one line naming it
        print(f"logic-consistency: error: {error}", file=sys.stderr)
        return OUTPUT_ERROR_STATUS
    except (ValueError, ModuleNotFoundError, FileNotFoundError, PermissionError, IsADirectoryError) as error:
        print(f"logic-consistency: error: {error}", file=sys.stderr)
        return 2
