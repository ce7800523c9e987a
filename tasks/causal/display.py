"""The report the causal family contributes to the leaderboard (see :mod:`logic_consistency.tasks.reports`).

How its metrics are shown is data: ``_metrics_yaml`` beside its task YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logic_consistency.tasks.reports import CountMatrixChart, ReportHook, register_report

from .report import is_ranking_task, leaderboard_confusion

_COUNT = {"type": "integer", "minimum": 0}

#: One task's confusion matrix as the leaderboard row stores it (:func:`.report.leaderboard_confusion`).
CONFUSION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["labels", "counts", "n_samples", "n_rankings", "n_unparseable_generation", "n_unparseable_ranking"],
    "additionalProperties": False,
    "properties": {
        "labels": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        "counts": {"type": "array", "items": {"type": "array", "items": _COUNT}},
        "n_samples": _COUNT,
        "n_rankings": _COUNT,
        "n_unparseable_generation": _COUNT,
        "n_unparseable_ranking": _COUNT,
    },
}


def _note(report: Mapping[str, Any]) -> str:
    rankings = report["n_rankings"]
    return (
        f"{rankings} parsed ranking{'' if rankings == 1 else 's'} of {report['n_samples']} instances; unparseable: "
        f"{report['n_unparseable_generation']} generation, {report['n_unparseable_ranking']} ranking. "
        "Row percentages; a consistent model fills the diagonal."
    )


def _order(task: str, report: Mapping[str, Any]) -> tuple[bool, int, str]:
    # the prompted-ranking protocol first, then the tasks with the most parsed rankings
    return (not task.endswith("_ranking"), -report["n_rankings"], task)


register_report(
    ReportHook(
        section="confusion",
        applies=is_ranking_task,
        build=leaderboard_confusion,
        title="δ-CAUSAL confusion matrix",
        description="delta-CAUSAL confusion matrix: rows = generation label, columns = ranked position named by "
        "the label that belongs there.",
        schema=CONFUSION_SCHEMA,
        chart=CountMatrixChart(
            rows="generation label",
            columns="ranked position (named by the label that belongs there)",
            cell="generation label {row} ranked at the position of {column}",
            signed=True,
        ),
        empty="No δ-CAUSAL ranking task on this board.",
        note=_note,
        order=_order,
    )
)
