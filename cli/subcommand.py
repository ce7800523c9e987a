"""The one way a ``cli`` module registers a ``logic-consistency`` subcommand, and the command list.

:data:`COMMANDS` lists every subcommand with its help line and the ``cli`` module that registers it
(``add_cli(subparsers)``), in the order of the command list. The parser
(:func:`~logic_consistency.cli.app.build_parser`) imports only the module of the command being run
(inspect_ai's lazy group): the other commands are one help line each, so ``logic-consistency
--help`` imports no command and the command modules import what they use at module level.
:func:`add_subcommand` is what every ``add_cli`` does first; the parsed arguments' ``run`` is called
with them and returns the exit status.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["COMMANDS", "Command", "Run", "add_executor_flags", "add_subcommand", "options_from", "run_alone"]

#: A subcommand's action: the parsed arguments in, the exit status out.
Run = Callable[[argparse.Namespace], int]

T = TypeVar("T")


@dataclass(frozen=True)
class Command:
    """One subcommand as light data: its name, its help line and the ``cli`` module that registers it."""

    name: str
    help: str
    registered_by: str | None = None

    @property
    def module(self) -> str:
        """The ``cli`` module that registers the command: ``registered_by``, else the name with ``_`` for ``-``."""
        return self.registered_by or self.name.replace("-", "_")


COMMANDS: tuple[Command, ...] = (
    Command("tasks-dir", "print the suite's task folder"),
    Command("models", "list the embedded models"),
    Command("model-path", "print (and build) an embedded model's folder", registered_by="models"),
    Command("export-gv", "write consistency fine-tuning pairs from GV --log_samples files"),
    Command("causal-confusion", "confusion matrix (JSON + PNG) of the causal tasks' rankings from lm-eval sample logs"),
    Command("repair", "REPAIR: consistent fine-tuning data from noisy pairwise preferences"),
    Command("improve", "measure, improve, re-measure: LoRA consistency fine-tuning studies"),
    Command(
        "correlate",
        "per-model correlations of consistency with H (Figure 5) and self-agreement, spread over paraphrases",
    ),
    Command("leaderboard", "build, render and validate the leaderboard"),
    Command("plan", "count the requests, tokens and API calls of a run, without a model"),
    Command("check-task", "load a task YAML as lm-eval does and name what is wrong"),
    Command("wrap", "wrap an lm-eval benchmark's tasks under option permutations (one YAML per leaf, a group)"),
    Command("options", "list every declared option, flag and backend argument (type, bounds, default)"),
)

_HELP = {command.name: command.help for command in COMMANDS}


def add_subcommand(
    subparsers: Any, name: str, doc: str | None, run: Run | None, *, help: str | None = None
) -> argparse.ArgumentParser:
    """Add subcommand ``name``: its ``--help`` line, its description and its action.

    Args:
        subparsers: What ``ArgumentParser.add_subparsers`` returned.
        name: The subcommand (``repair``).
        doc: The docstring of the module the command runs; its first paragraph is the subcommand's
            description.
        run: The action, stored as the ``run`` default; ``None`` for a command whose own
            subcommands set it (``leaderboard``).
        help: One line for the parent's command list (default: :data:`COMMANDS`' line).

    Returns:
        The subcommand's parser, for its arguments.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help or _HELP[name], description=(doc or "").split("\n\n")[0] or None
    )
    if run is not None:
        parser.set_defaults(run=run)
    return parser


def add_executor_flags(parser: argparse.ArgumentParser, *, local: str, ray: str) -> Any:
    """The ``cluster`` group of a command that runs units: ``--executor`` and ``--ray-address``.

    Args:
        parser: The subcommand's parser.
        local: What ``--executor local`` does (``models one after another here``).
        ray: What each Ray task is (``each model or shard``).

    Returns:
        The group, for the command's own cluster flags.
    """
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help=f"local: {local} (default); ray: {ray} is a Ray task (needs Ray: from a clone, pip install -e '.[ray]')",
    )
    cluster.add_argument(
        "--ray-address", help="Ray cluster to join: auto or ray://host:port (default: start a local Ray)"
    )
    return cluster


def options_from(options: Callable[..., T], args: argparse.Namespace, **given: Any) -> T:
    """A command's options (a dataclass) from the parsed arguments of the same names; ``given`` overrides."""
    names = inspect.signature(options).parameters
    return options(**{**{name: getattr(args, name) for name in names if hasattr(args, name)}, **given})


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
