"""The one way a ``cli`` module registers a ``logic-consistency`` subcommand, and runs it on its own.

:func:`~logic_consistency.cli.app.build_parser` hands each command module's ``add_cli(subparsers)``
its ``argparse`` subparsers object; :func:`add_subcommand` is what every ``add_cli`` does first. The
parsed arguments' ``run`` is called with them and returns the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Run", "add_subcommand", "run_alone"]

#: A subcommand's action: the parsed arguments in, the exit status out.
Run = Callable[[argparse.Namespace], int]


def add_subcommand(
    subparsers: Any, name: str, doc: str | None, run: Run | None, *, help: str
) -> argparse.ArgumentParser:
    """Add subcommand ``name``: its ``--help`` line, its description and its action.

    Args:
        subparsers: What ``ArgumentParser.add_subparsers`` returned.
        name: The subcommand (``repair``).
        doc: The docstring of the module the command runs; its first paragraph is the subcommand's
            description.
        run: The action, stored as the ``run`` default; ``None`` for a command whose own
            subcommands set it (``leaderboard``).
        help: One line for the parent's command list.

    Returns:
        The subcommand's parser, for its arguments.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=(doc or "").split("\n\n")[0] or None
    )
    if run is not None:
        parser.set_defaults(run=run)
    return parser


def run_alone(add_cli: Callable[[Any], object], name: str, argv: Sequence[str] | None = None) -> int:
    """Run one subcommand without the ``logic-consistency`` front (``python -m <its module>``).

    Args:
        add_cli: The module's ``add_cli``, which registers subcommand ``name``.
        name: The subcommand, also the program name in usage lines.
        argv: The arguments after the program name (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(prog=name)
    add_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([name, *(sys.argv[1:] if argv is None else argv)])
    return int(args.run(args))
