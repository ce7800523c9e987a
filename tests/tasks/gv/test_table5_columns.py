"""Table 5 and Figure 5's correctness say which measures the suite can take (``tasks/gv/improve_report.py``).

Harmful questions, prompt prioritisation and style transfer compute no accuracy (Li et al. score their
generators with GPT-4 and their validators on crowd-sourced or Yelp sets): their columns say "not
measurable here", why and what the paper used, never an empty number under a measure's name. Where both
can be computed, correctness is given the suite's way (per document) and App. I's (mean of the two columns).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logic_consistency.tasks.gv.improve_report import NOT_MEASURABLE, correctness_table, tables
from logic_consistency.tasks.gv.improve_tables import CORRECTNESS, CORRECTNESS_PAPER, task_metrics


def _row(metrics: dict[str, Any]) -> dict[str, Any]:
    return {"row": "base", "round": 0, "metrics": metrics}


def _samples(tmp_path: Path, task: str, lines: list[str]) -> Path:
    path = tmp_path / f"samples_{task}_2026-01-01T00-00-00.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_unmeasurable_columns_say_so_with_the_papers_measure(tmp_path: Path) -> None:
    style = _samples(tmp_path, "logic_consistency_gv_style_transfer", ['{"doc": {"id": "s1"}, "gv_consistency": 1.0}'])
    row = _row(task_metrics([style], tasks=["logic_consistency_gv_style_transfer"]))
    _, table5 = tables([row])
    header, _, cells = table5.splitlines()[:3]
    assert "style_transfer generator: not measurable here (the paper scores these generations with GPT-4" in header
    assert "style_transfer validator: not measurable here (App. H's set: App. H uses the Yelp set" in header
    assert cells.count(NOT_MEASURABLE) == 2 and "undefined" not in cells
    assert NOT_MEASURABLE in correctness_table([row])


def test_correctness_both_ways_where_both_are_measurable(tmp_path: Path) -> None:
    # two documents: generator right on both, validator right on the first only (App. H's set absent)
    arithmetic = _samples(
        tmp_path,
        "logic_consistency_gv_arithmetic",
        [
            '{"doc": {"id": "a1"}, "gv_consistency": 1.0, "generator_accuracy": 1.0, "validator_accuracy": 1.0}',
            '{"doc": {"id": "a2"}, "gv_consistency": 0.0, "generator_accuracy": 1.0, "validator_accuracy": 0.0}',
            '{"doc": {"id": "a3"}, "gv_consistency": 1.0, "generator_accuracy": 0.0}',
        ],
    )
    metrics = task_metrics([arithmetic], tasks=["logic_consistency_gv_arithmetic"])
    task = metrics["per_task"]["logic_consistency_gv_arithmetic"]
    assert task[CORRECTNESS]["mean"] == 0.75  # per document, where both are defined: (1 + 0.5) / 2
    assert abs(task[CORRECTNESS_PAPER]["mean"] - (2 / 3 + 1 / 2) / 2) < 1e-12  # App. I: mean of the two columns
    table = correctness_table([_row(metrics)])
    assert "arithmetic (per-document mean, plotted)" in table and "arithmetic (App. I: mean of the two)" in table
    assert "75.0" in table and "58.3" in table
