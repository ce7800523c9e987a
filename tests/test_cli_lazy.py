"""The lazy command list: ``logic-consistency --help`` imports no command module (nor lm-eval, torch),
a command imports only its own module, and the list's help lines are the ones the modules register."""

from __future__ import annotations

import argparse
import json
import sys

import children  # the tests' one starter of child processes (tests/children.py)

from logic_consistency.cli import build_parser
from logic_consistency.cli.subcommand import COMMANDS

_PROBE = """
import json, sys
from logic_consistency.cli.app import build_parser
build_parser(sys.argv[1:])
heavy = sorted(name for name in ("lm_eval", "torch", "transformers", "datasets") if name in sys.modules)
commands = sorted(name for name in sys.modules if name.startswith("logic_consistency.cli.") and name.count(".") == 2)
print(json.dumps({"heavy": heavy, "commands": commands}))
"""


def _imported(*argv: str) -> dict[str, list[str]]:
    done = children.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=300, check=True)
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def test_the_top_level_help_imports_no_command_and_nothing_heavy() -> None:
    assert _imported("--help") == {
        "heavy": [],
        "commands": ["logic_consistency.cli.app", "logic_consistency.cli.subcommand"],
    }


def test_a_command_imports_only_its_own_module() -> None:
    commands = _imported("tasks-dir")["commands"]
    assert "logic_consistency.cli.tasks_dir" in commands
    assert not {
        f"logic_consistency.cli.{name}" for name in ("plan", "repair", "leaderboard", "improve", "models")
    } & set(commands)


def test_the_command_list_is_the_registered_commands_with_their_help_lines() -> None:
    """Every command of :data:`COMMANDS` is registered by its module, in order, with the same help line."""
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = {choice.dest: choice.help for choice in action._choices_actions}
    assert list(registered) == [command.name for command in COMMANDS]
    assert registered == {command.name: command.help for command in COMMANDS}
