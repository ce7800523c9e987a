"""The transfer table of an improve study (``--transfer``; beyond the papers): does improving one kind of
consistency move the others? Every row (its adapter, or the base for the zero-shot row) is evaluated on
one task of each other family too, at the study's slice (its ``--limit``, ``instance_split: test``,
its chat-template setting), and the study writes ``transfer.md`` / ``transfer.json``: rows x families,
each cell the mean in percent with the suite's 95% bootstrap interval over documents.

Generic: the families (their task and metrics) are given by the tasks layer (``tasks/transfer.py``);
this module knows none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write, atomic_write_json

from .study_eval import LmEvalRun, run_lm_eval
from .study_report import metric_summary, table_markdown

__all__ = ["TRANSFER_FILES", "TransferFamily", "evaluate_transfer", "transfer_markdown", "write_transfer_table"]

#: What :func:`write_transfer_table` writes into the study's folder.
TRANSFER_FILES = ("transfer.md", "transfer.json")


@dataclass(frozen=True)
class TransferFamily:
    """One family of the transfer table: its name, the task a row is evaluated on, its metadata (task
    options; ``instance_split`` is set here) and its columns, (label, metric key) pairs."""

    family: str
    task: str
    columns: tuple[tuple[str, str], ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)


def evaluate_transfer(
    run: LmEvalRun, families: Sequence[TransferFamily], out: Path, *, label: str
) -> dict[str, dict[str, Any]]:
    """Evaluate the model of ``run`` (base and adapter, chat template, limit) on each family's task.

    Each family is one ``lm_eval`` run in ``out/<family>`` (a finished one is not run again, as
    :func:`~.study_eval.run_lm_eval`); returns ``{family: {"task", "metrics"}}`` with
    :func:`~.study_report.metric_summary`'s entries (``None`` means undefined, never 0).

    Raises:
        RuntimeError: An ``lm_eval`` run failed (naming the row, the family and the log).
    """
    results: dict[str, dict[str, Any]] = {}
    for family in families:
        family_run = replace(
            run,
            tasks=family.task,
            metadata={**family.metadata, "instance_split": "test"},
            out=out / family.family,
            gen_kwargs=None,  # the study's own task's generation settings are not the family's
        )
        samples = run_lm_eval(family_run, label=f"{label} (transfer: {family.family}, {family.task})")
        results[family.family] = {
            "task": family.task,
            "metrics": metric_summary(samples, [k for _, k in family.columns]),
        }
    return results


def _columns(families: Sequence[TransferFamily]) -> list[tuple[str, str]]:
    """Table columns ``family: label`` keyed ``family/key`` (two families may share a metric name)."""
    return [(f"{f.family}: {label}", f"{f.family}/{key}") for f in families for label, key in f.columns]


def transfer_markdown(
    rows: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]], families: Sequence[TransferFamily]
) -> str:
    """The transfer table: one line per row, one column per (family, metric), each cell
    ``mean [95% interval] (n)`` in percent (``undefined`` where a row has no value)."""
    flat = []
    for label, by_family in rows:
        cells: dict[str, Any] = {}
        for family in families:
            metrics = (by_family.get(family.family) or {}).get("metrics") or {}
            cells.update({f"{family.family}/{key}": metrics.get(key) for _, key in family.columns})
        flat.append((label, cells))
    return table_markdown(flat, _columns(families))


def write_transfer_table(
    out: Path,
    rows: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]],
    families: Sequence[TransferFamily],
) -> str:
    """Write ``transfer.md`` and ``transfer.json`` into the study's folder ``out``; return the Markdown
    section for the study's README (a heading, what a cell is, the table)."""
    table = transfer_markdown(rows, families)
    tasks = ", ".join(f"{f.family} `{f.task}`" for f in families)
    section = (
        "## Transfer table (beyond the papers)\n\n"
        f"Every row evaluated on each family ({tasks}) at the study's slice (`instance_split: test`, the "
        "same `--limit`). Cells: mean in percent [95% bootstrap interval] (documents); a direction is "
        "claimed only where two rows' intervals are disjoint.\n\n" + table
    )
    atomic_write(out / TRANSFER_FILES[0], [section.encode()])
    payload = {
        "families": [{"family": f.family, "task": f.task, "columns": [list(c) for c in f.columns]} for f in families],
        "rows": [{"label": label, "families": dict(by_family)} for label, by_family in rows],
    }
    atomic_write_json(out / TRANSFER_FILES[1], payload, indent=2)
    return section
