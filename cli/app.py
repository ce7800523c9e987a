"""The ``logic-consistency`` parser and entry point: every command module's ``add_cli``, in order.

:data:`COMMANDS` lists the registrars; each command module is a thin ``argparse`` layer over a
function of its family or layer. Every output is checked first (``outputs.check_outputs``). Exit
status: 0; 2 for bad arguments or input; 3 when an output cannot be written (one line naming the
path); ``leaderboard build`` 1 when a model failed.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable, Sequence
from typing import Any

from logic_consistency import __version__
from logic_consistency.outputs import OutputError

from . import (
    causal_confusion,
    check_task,
    correlate,
    export_gv,
    improve,
    leaderboard,
    models,
    options,
    plan,
    repair,
    tasks_dir,
)

__all__ = ["COMMANDS", "DESCRIPTION", "OUTPUT_ERROR_STATUS", "build_parser", "main"]

#: Exit status when an output cannot be written (read-only, permissions, immutable, disk full); bad
#: arguments or input are 2, and ``leaderboard build`` uses 1 for "a model failed".
OUTPUT_ERROR_STATUS = 3

#: The top-level ``--help`` description.
DESCRIPTION = (
    "logic-consistency: measure whether a language model is consistent with itself. The scores come from "
    "`lm_eval --tasks logic_consistency`; these commands plan a run's cost, check a task YAML, build and "
    "render the nightly leaderboard, and turn samples into reports and fine-tuning data."
)

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
    options.add_cli,
)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(prog="logic-consistency", description=DESCRIPTION)
    # argparse's version action prints and exits before the required subcommand is asked for.
    parser.add_argument("--version", action="version", version=f"logic-consistency {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for add_cli in COMMANDS:
        add_cli(commands)
    return parser


def _link_loop(error: BaseException) -> str | None:
    """The path of a symbolic link loop ``error`` reports (pathlib's ``RuntimeError``, an ``ELOOP``), else ``None``."""
    if isinstance(error, RuntimeError) and str(error).startswith("Symlink loop from "):
        return str(error)[len("Symlink loop from ") :]
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        return str(error.filename)
    return None


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
    except (RuntimeError, OSError) as error:  # a link loop met past every reader's check: still one line
        where = _link_loop(error)
        if where is None:
            raise
        print(f"logic-consistency: error: {where}: a symbolic link loop; fix or remove the link", file=sys.stderr)
        return 2
