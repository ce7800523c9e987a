"""``logic-consistency tasks-dir``: print the suite's task folder.

It is the folder to pass as ``lm_eval --include_path`` when the autoload hook is off
(:func:`logic_consistency.harness_ext.autoload.tasks_dir`).
"""

from __future__ import annotations

import argparse
from typing import Any

from logic_consistency.harness_ext.autoload import tasks_dir

from .subcommand import add_subcommand

__all__ = ["add_cli"]


def _run(_: argparse.Namespace) -> int:
    print(tasks_dir())
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``tasks-dir``."""
    return add_subcommand(subparsers, "tasks-dir", None, _run)
