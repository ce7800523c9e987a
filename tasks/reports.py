"""Registry of the reports a task family contributes to readers of its results (the leaderboard).

The leaderboard reads results and samples files and knows no task family. A family that has more
to show than lm-eval's metrics (the causal family's label-by-rank confusion matrix) registers a
:class:`ReportHook` here from its own module; :func:`report_hooks` imports the families' report
modules listed in :data:`REPORT_MODULES` and returns every hook. A reader calls
``hook.applies(task, results_entry)`` for each task of a run and, when it is true,
``hook.build(samples_path, task)``, and stores the JSON it returns under ``row[hook.section][task]``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["REPORT_MODULES", "ReportHook", "register_report", "report_hooks"]

#: Modules that register report hooks when imported (one per family that has reports).
REPORT_MODULES: tuple[str, ...] = ("logic_consistency.tasks.causal.report",)


@dataclass(frozen=True)
class ReportHook:
    """One report a family contributes per task.

    Attributes:
        section: Key of the leaderboard row the reports go under (e.g. ``"confusion"``).
        applies: ``applies(task, results_entry)``: whether ``task`` (its ``results[task]`` entry of
            lm-eval's results JSON) gets this report.
        build: ``build(samples_path, task)``: the report as JSON-serialisable data.
    """

    section: str
    applies: Callable[[str, Mapping[str, Any]], bool]
    build: Callable[[Path, str], dict[str, Any]]


_HOOKS: dict[str, ReportHook] = {}


def register_report(hook: ReportHook) -> ReportHook:
    """Register ``hook`` (one per section; registering a section again replaces it)."""
    _HOOKS[hook.section] = hook
    return hook


def report_hooks() -> tuple[ReportHook, ...]:
    """Every registered hook, after importing :data:`REPORT_MODULES`."""
    for module in REPORT_MODULES:
        importlib.import_module(module)
    return tuple(_HOOKS.values())
