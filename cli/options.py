"""``logic-consistency options``: every declared name a user can set, from its one declaration.

Run options (``--metadata``, read by the tasks), command-line flags (``plan``, ``leaderboard build``,
a model list's settings), the suite's backends' ``--model_args`` and the generation keys of ``--gen_kwargs``: name, where it applies, its
constraint (type and bounds or choices), default and meaning. ``--markdown`` prints the table
docs/running.md holds (a test checks that the page's copy is this output).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from logic_consistency.harness_ext.backends.registry import backends
from logic_consistency.harness_ext.models.args import GEN_KWARGS
from logic_consistency.options import Declared, declared_flags, declared_options
from logic_consistency.tasks.improve_recipes import recipes

from .subcommand import add_subcommand

__all__ = ["add_cli", "declarations", "markdown_table"]


def declarations() -> list[tuple[str, Declared]]:
    """Every declaration with where it applies: ``metadata``, ``command line``, ``<backend> --model_args``,
    ``improve <recipe> --train-args`` (each recipe's paper's hyperparameters, its defaults)."""
    rows = [("metadata", arg) for arg in declared_options().values()]
    rows += [("command line", arg) for arg in declared_flags().values()]
    rows += [(f"{name} --model_args", arg) for name, backend in backends().items() for arg in backend.args.declared]
    rows += [("lm_eval --gen_kwargs", arg) for arg in GEN_KWARGS.declared]
    trainings = [recipe.training.declaration for recipe in recipes().values()]
    rows += [(training.where, arg) for training in trainings for arg in training.declared]
    return rows


def _values(arg: Declared) -> str:
    return arg.constraint.describe() + (" or null" if arg.nullable else "")


def _default(arg: Declared) -> str:
    return (
        "set by each task" if arg.default is None and not arg.nullable else json.dumps(arg.default, ensure_ascii=False)
    )


def markdown_table() -> str:
    """The declarations as a Markdown table (docs/running.md's copy)."""
    lines = ["| name | applies to | values | default | meaning |", "|---|---|---|---|---|"]
    for where, arg in declarations():
        meaning = arg.meaning.replace("|", "\\|")
        lines.append(f"| `{arg.name}` | {where} | {_values(arg)} | {_default(arg)} | {meaning} |")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    for where, arg in declarations():
        print(f"{arg.name} ({where}): {_values(arg)}; default {_default(arg)}\n    {arg.meaning}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``options``."""
    parser = add_subcommand(subparsers, "options", __doc__, _run)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (as in docs/running.md)")
    return parser
