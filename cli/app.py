"""The ``logic-consistency`` parser and entry point.

:data:`~logic_consistency.cli.subcommand.COMMANDS` lists the commands; each command module is a thin
``argparse`` layer (``add_cli``) over a function of its family or layer, imported only when its
command runs. Every output is checked first (``outputs.check_outputs``). Exit
status: 0; 2 for bad arguments or input; 3 when an output cannot be written (one line naming the
path); ``leaderboard build`` 1 when a model failed.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
from collections.abc import Sequence

from logic_consistency import __version__
from logic_consistency.outputs import OutputError

from .subcommand import COMMANDS

__all__ = ["DESCRIPTION", "OUTPUT_ERROR_STATUS", "build_parser", "main"]

#: Exit status when an output cannot be written (read-only, permissions, immutable, disk full); bad
#: arguments or input are 2, and ``leaderboard build`` uses 1 for "a model failed".
OUTPUT_ERROR_STATUS = 3

#: The top-level ``--help`` description.
DESCRIPTION = (
    "logic-consistency: measure whether a language model is consistent with itself. The scores come from "
    "`lm_eval --tasks logic_consistency`; these commands plan a run's cost, check a task YAML, build and "
    "render the nightly leaderboard, and turn samples into reports and fine-tuning data."
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command-line parser (exposed for tests and documentation): every command in full, or with
    ``argv`` only the command it names (its module imported; the others are their help line)."""
    parser = argparse.ArgumentParser(prog="logic-consistency", description=DESCRIPTION)
    # argparse's version action prints and exits before the required subcommand is asked for.
    parser.add_argument("--version", action="version", version=f"logic-consistency {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    # The top-level options take no value, so the first word that is not an option names the command.
    named = next((word for word in argv or () if not word.startswith("-")), None)
    wanted = {command.module for command in COMMANDS if argv is None or command.name == named}
    loaded: set[str] = set()
    for command in COMMANDS:
        if command.module not in wanted:
            commands.add_parser(command.name, help=command.help)
        elif command.module not in loaded:  # a module registers all of its commands at once
            loaded.add(command.module)
            importlib.import_module(f"{__package__}.{command.module}").add_cli(commands)
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

    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(words).parse_args(words)
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
