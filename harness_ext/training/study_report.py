"""What a study reports of its rows: each metric's mean over documents with the suite's 95% bootstrap
interval, read from the ``lm_eval`` sample logs, and the Markdown table of rows (``table.md``). It knows no
task family: the columns are the recipe's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import read_samples
from logic_consistency.metrics.bootstrap import bootstrap_ci

__all__ = ["metric_summary", "table_markdown"]


def _defined_values(samples: Sequence[Path], metrics: Sequence[str]) -> dict[str, list[float]]:
    """Each metric's finite values over the documents of ``samples`` (a missing or NaN one left out)."""
    values: dict[str, list[float]] = {name: [] for name in metrics}
    for path in samples:
        for _, sample in read_samples(path):
            for name in metrics:
                value = sample.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    values[name].append(float(value))
    return values


def metric_summary(samples: Sequence[Path], metrics: Sequence[str], *, seed: int = 0) -> dict[str, Any]:
    """Each metric's mean over documents with the suite's 95% bootstrap interval (``None``: undefined).

    A document where a metric is undefined (missing or NaN) is left out of it, never counted as 0.
    """
    summary: dict[str, Any] = {}
    for name, found in _defined_values(samples, metrics).items():
        if not found:
            summary[name] = {"mean": None, "ci95": None, "n": 0}
            continue
        low, high = bootstrap_ci(found, seed=seed) if len(found) > 1 else (found[0], found[0])
        summary[name] = {"mean": sum(found) / len(found), "ci95": [low, high], "n": len(found)}
    return summary


def _cell(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry.get("mean") is None:
        return "undefined"
    low, high = entry["ci95"]
    return f"{100 * entry['mean']:.1f} [{100 * low:.1f}, {100 * high:.1f}] (n={entry['n']})"


def table_markdown(rows: Sequence[tuple[str, Mapping[str, Any]]], columns: Sequence[tuple[str, str]]) -> str:
    """A Markdown table: one line per row, each cell ``mean [95% interval] (n)`` in percent."""
    head = "| row | " + " | ".join(label for label, _ in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    lines = [head, rule]
    for name, summary in rows:
        lines.append(f"| {name} | " + " | ".join(_cell(summary.get(key)) for _, key in columns) + " |")
    return "\n".join(lines) + "\n"
