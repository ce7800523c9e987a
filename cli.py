"""``logic-consistency``: the console entry point (the top of the layers; it may import every one).

Its own commands are ``tasks-dir`` (the folder for ``lm_eval --include_path`` when the autoload
hook is off), ``models`` and ``model-path NAME`` (the embedded models); the others (``export-gv``,
``causal-confusion``, ``repair``, ``correlate``, ``plan``, ``check-task``, ``leaderboard``) register
themselves from their modules (:data:`SUBCOMMAND_MODULES`, each an ``add_cli(subparsers)``),
imported only when the parser is built. Every output is checked first (``outputs.check_outputs``): no command writes
over its own input, over a file of another kind or over a device. Exit status: 0; 2 for bad
arguments or input; 3 when an output cannot be written (one line naming the path);
``leaderboard build`` 1 when a model failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.outputs import OutputError

#: Exit status when an output cannot be written (read-only, permissions, immutable, disk full); bad
#: arguments or input are 2, and ``leaderboard build`` uses 1 for "a model failed".
OUTPUT_ERROR_STATUS = 3

#: Modules whose ``add_cli(subparsers)`` registers further subcommands.
SUBCOMMAND_MODULES = (
    "logic_consistency.tasks.gv.export",
    "logic_consistency.tasks.causal.report",
    "logic_consistency.tasks.pairwise.repair",
    "logic_consistency.tasks.pairwise.report",
    "logic_consistency.leaderboard.cli",
    "logic_consistency.harness_ext.plan_report",
    "logic_consistency.harness_ext.check_task",
)


def _tasks_dir(_: argparse.Namespace) -> int:

    print(tasks_dir())
    return 0


def _models(_: argparse.Namespace) -> int:
    # deferred: imports torch and transformers (seconds); the parser must not
    from logic_consistency.harness_ext.models import (
        DEFAULT_MODEL,
        EMBEDDED_MODELS,
    )

    for name, model in EMBEDDED_MODELS.items():
        marker = " (default)" if name == DEFAULT_MODEL else ""
        print(f"{name}{marker}: {model.description}; package {model.distribution}")
    return 0


def _model_path(args: argparse.Namespace) -> int:
    # deferred: imports torch and transformers (seconds); the parser must not
    from logic_consistency.harness_ext.models import resolve

    print(resolve(args.name))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(prog="logic-consistency", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("tasks-dir", help="print the suite's task folder").set_defaults(run=_tasks_dir)
    commands.add_parser("models", help="list the embedded models").set_defaults(run=_models)
    model_path = commands.add_parser("model-path", help="print (and build) an embedded model's folder")
    model_path.add_argument("name", help="embedded model name, e.g. smollm2-135m-instruct")
    model_path.set_defaults(run=_model_path)
    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).add_cli(commands)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
