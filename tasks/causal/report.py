"""Confusion matrix of generation label vs ranked position (paper Figure 4), from lm-eval sample logs.

``lm_eval ... --log_samples --output_path DIR`` writes ``samples_<task>_<timestamp>.jsonl``: one
JSON object per document whose ``doc["stages"]`` holds the causal task's stages (see
:mod:`logic_consistency.tasks.causal.hooks`). :func:`confusion_report` reads such files, counts for
every parsed ranking where each generation label ended up, and writes per task

* ``confusion_<task>.json``: counts, row percentages and how many documents were unparseable;
* ``confusion_<task>.png``: the row-percentage heat map (rows: generation label; columns: ranked
  position, named by the label that belongs there, so a consistent model fills the diagonal).

Files are written atomically (a temporary file in the same folder, then ``os.replace``), so a
reader never sees half a report. Command line: ``logic-consistency causal-confusion FILE... --out
DIR`` (:mod:`logic_consistency.cli.causal_confusion`).
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from logic_consistency.common import files_or_folders, read_samples, task_of_samples_file
from logic_consistency.metrics.causal import CAUSAL_LABELS, confusion_matrix
from logic_consistency.outputs import atomic_write, atomic_write_json, check_outputs

__all__ = ["confusion_report", "is_ranking_task", "leaderboard_confusion", "read_rankings", "task_name"]

logger = logging.getLogger("logic_consistency")
#: What a folder given to ``causal-confusion`` stands for.
SAMPLES_GLOB = "samples_logic_consistency_causal_*.jsonl"
#: A task whose results carry this metric is a causal ranking task (it has a confusion matrix).
CAUSAL_MARKER = "unparseable_ranking"


def task_name(path: Path) -> str:
    """The task of a ``samples_<task>_<timestamp>.jsonl`` file (else the file name without suffix)."""
    return task_of_samples_file(path) or path.stem


@dataclass
class TaskRankings:
    """The parsed rankings of one task, gathered over one or more sample files."""

    task: str
    files: list[str] = field(default_factory=list)
    rankings: list[list[int]] = field(default_factory=list)
    n_samples: int = 0
    n_unparseable_generation: int = 0
    n_unparseable_ranking: int = 0


def _stage(record: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    doc = record.get("doc")
    if not isinstance(doc, dict) or not isinstance(doc.get("stages"), dict):
        raise ValueError(f"{where}: not a causal task sample (no doc.stages); was it written with --log_samples?")
    stage = doc["stages"].get(name)
    return stage if isinstance(stage, dict) else None


def read_rankings(path: Path, into: TaskRankings) -> None:
    """Add the rankings of one samples file to ``into``.

    Raises:
        ValueError: A line is not JSON or not a causal task sample; the message names file and line.
    """
    into.files.append(str(path))
    before = into.n_samples
    for number, record in read_samples(path):
        where = f"{path} line {number}"
        generation = _stage(record, "generation", where)
        if generation is None:
            raise ValueError(f"{where}: not a causal task sample (no 'generation' stage)")
        into.n_samples += 1
        if "error" in generation.get("parsed", {}):
            into.n_unparseable_generation += 1
            continue
        ranking = _stage(record, "ranking", where) or {}
        parsed = ranking.get("parsed", {})
        if "error" in parsed or "ranked_labels" not in parsed:
            into.n_unparseable_ranking += 1
            continue
        into.rankings.append([int(label) for label in parsed["ranked_labels"]])
    if into.n_samples == before:
        logger.warning("%s: no samples in this file (empty)", path)


def leaderboard_confusion(samples_path: Path, task: str) -> dict[str, Any]:
    """The confusion matrix of one task's samples file as the leaderboard row stores it."""
    rankings = TaskRankings(task=task)
    read_rankings(samples_path, rankings)
    counts = confusion_matrix(rankings.rankings)
    return {
        "labels": [int(label) for label in CAUSAL_LABELS],
        "counts": counts.astype(int).tolist(),
        "n_samples": rankings.n_samples,
        "n_rankings": len(rankings.rankings),
        "n_unparseable_generation": rankings.n_unparseable_generation,
        "n_unparseable_ranking": rankings.n_unparseable_ranking,
    }


def is_ranking_task(task: str, results_entry: Mapping[str, Any]) -> bool:
    """Whether ``task`` (its ``results[task]`` entry of lm-eval's results) ranks intermediates (it has a confusion matrix)."""
    return any(str(key).split(",", 1)[0] == CAUSAL_MARKER for key in results_entry)


def _tick(label: int) -> str:
    return f"{label:+d}"


def _plot(percent: np.ndarray, title: str) -> bytes:
    """The row-percentage heat map as PNG bytes (Agg canvas: no display, no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.2, 6.2), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    image = axes.imshow(percent, cmap="Blues", vmin=0.0, vmax=100.0)
    ticks = [_tick(label) for label in CAUSAL_LABELS]
    axes.set_xticks(range(len(ticks)), ticks)
    axes.set_yticks(range(len(ticks)), ticks)
    axes.set_xlabel("ranked position (label that belongs there)")
    axes.set_ylabel("generation label")
    axes.set_title(title, fontsize=10)
    # separate defeaters (-5..-1) from supporters (+1..+5)
    axes.axhline(4.5, color="0.35", linewidth=1.0)
    axes.axvline(4.5, color="0.35", linewidth=1.0)
    for row in range(percent.shape[0]):
        for col in range(percent.shape[1]):
            value = percent[row, col]
            if np.isnan(value):
                continue
            axes.text(
                col, row, f"{value:.0f}", ha="center", va="center", fontsize=8, color="white" if value > 55 else "black"
            )
    figure.colorbar(image, ax=axes, label="% of the row's intermediates")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _report_data(rankings: TaskRankings) -> tuple[dict[str, Any], np.ndarray]:
    counts = confusion_matrix(rankings.rankings)
    n = len(rankings.rankings)
    # No parsed ranking: the row percentages are undefined (shown blank, null in the JSON), not 0.
    percent = 100.0 * confusion_matrix(rankings.rankings, normalize=True) if n else np.full(counts.shape, np.nan)
    data = {
        "task": rankings.task,
        "source_files": rankings.files,
        "labels": list(CAUSAL_LABELS),
        "rows": "generation label",
        "columns": "ranked position, named by the label that belongs there",
        "n_samples": rankings.n_samples,
        "n_rankings": n,
        "n_unparseable_generation": rankings.n_unparseable_generation,
        "n_unparseable_ranking": rankings.n_unparseable_ranking,
        "counts": counts.astype(int).tolist(),
        "row_percent": np.round(percent, 3).tolist() if n else None,
        "diagonal_percent": round(100.0 * float(np.trace(counts)) / (10 * n), 3) if n else None,
    }
    return data, percent


def confusion_report(
    samples_paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str]
) -> dict[str, dict[str, Path]]:
    """Write the Figure 4 confusion matrix (JSON and PNG) of every task found in ``samples_paths``.

    Files of the same task (e.g. several ranks or runs) are pooled.

    Args:
        samples_paths: lm-eval ``samples_<task>_<timestamp>.jsonl`` files of causal tasks.
        out_dir: Output folder (created if needed).

    Returns:
        ``{task: {"json": path, "png": path}}``.

    Raises:
        FileNotFoundError: A samples file does not exist.
        ValueError: No file given, or a line is not a causal task sample (file and line named).
    """
    given = list(samples_paths)
    if not given:
        raise ValueError("samples_paths is empty: give at least one samples_<task>_<timestamp>.jsonl file")
    paths = files_or_folders(given, SAMPLES_GLOB)
    tasks: dict[str, TaskRankings] = {}
    for path in paths:
        name = task_name(path)
        read_rankings(path, tasks.setdefault(name, TaskRankings(task=name)))
    for name, rankings in tasks.items():
        if not rankings.rankings:
            logger.warning(
                "%s: no parsed ranking in %s (%d samples); the confusion matrix is empty and its percentages null",
                name,
                ", ".join(rankings.files),
                rankings.n_samples,
            )
    out = Path(out_dir)
    check_outputs(
        [
            (out / f"confusion_{name}.{suffix}", "png" if suffix == "png" else "json")
            for name in tasks
            for suffix in ("json", "png")
        ],
        paths,
        argument="--out",
    )
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, Path]] = {}
    for name, rankings in tasks.items():
        data, percent = _report_data(rankings)
        json_path, png_path = out / f"confusion_{name}.json", out / f"confusion_{name}.png"
        atomic_write_json(json_path, data, indent=2)
        title = (
            f"{name}\n{data['n_rankings']} parsed rankings; unparseable: "
            f"{rankings.n_unparseable_generation} generation, {rankings.n_unparseable_ranking} ranking"
        )
        atomic_write(png_path, [_plot(percent, title)])
        written[name] = {"json": json_path, "png": png_path}
    return written


if __name__ == "__main__":  # pragma: no cover - the old standalone entry; the command line is the top layer
    raise SystemExit(
        "python -m logic_consistency.tasks.causal.report was replaced by the command "
        "`logic-consistency causal-confusion SAMPLES... --out DIR` (same options)"
    )
