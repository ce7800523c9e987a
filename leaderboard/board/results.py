"""Reading lm-eval 0.4.13 output: ``results_<stamp>.json`` and its ``samples_<task>_<stamp>.jsonl``.

``lm_eval --output_path OUT --log_samples`` writes ``OUT/<model>/results_<stamp>.json`` and, per
task, ``samples_<task>_<stamp>.jsonl`` (one JSON object per document, with one key per metric
holding that document's value). Both are untrusted input: every check here raises
:class:`ValueError` naming the file and the field (and line) at fault.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.common import check_link_loop, read_samples

from .identity import check_name

__all__ = [
    "MAX_JSON_DEPTH",
    "RunOutput",
    "check_depth",
    "higher_is_better",
    "json_depth",
    "metric_keys",
    "metric_values",
    "read_run",
    "recorded_date",
]

#: Deepest nesting of arrays and objects accepted in a results or samples file (lm-eval's nest < 10).
MAX_JSON_DEPTH = 64
_RESULTS_FILE = re.compile(r"^results_(?P<stamp>.+)\.json$")
#: Top-level keys the leaderboard needs from a results file, with their JSON types.
REQUIRED_KEYS: dict[str, type] = {
    "results": dict,
    "configs": dict,
    "config": dict,
    "n-samples": dict,
}


@dataclass(frozen=True)
class RunOutput:
    """One lm-eval run: its parsed results file and the parsed samples of each task.

    Attributes:
        results_path: The ``results_<stamp>.json`` file.
        results: Its parsed content (top-level keys checked).
        samples: ``{task: [sample line, ...]}`` for every task (not group) of the run.
        samples_paths: ``{task: samples file}``.
    """

    results_path: Path
    results: dict[str, Any]
    samples: dict[str, list[dict[str, Any]]]
    samples_paths: dict[str, Path]

    @property
    def groups(self) -> dict[str, list[str]]:
        """``group_subtasks`` restricted to entries that name groups (those with children)."""
        subtasks = self.results.get("group_subtasks") or {}
        return {name: list(children) for name, children in subtasks.items() if children}

    @property
    def tasks(self) -> list[str]:
        """The leaf tasks: entries of ``results`` that are not groups, in file order."""
        groups = self.groups
        return [name for name in self.results["results"] if name not in groups]


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests arrays and objects (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_depth(value: Any, where: str) -> Any:
    """``value`` if it nests at most :data:`MAX_JSON_DEPTH` levels, else a one-line :class:`ValueError`.

    lm-eval's files nest fewer than ten levels; a deeper file would end later code (hashing, schema
    validation, copying) in a ``RecursionError``.
    """
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; not an lm-eval file")
    return value


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason})") from None
    try:
        return check_depth(json.loads(text), str(path))
    except RecursionError:
        raise ValueError(f"{path}: JSON nested more than {MAX_JSON_DEPTH} levels deep; not an lm-eval file") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None


def recorded_date(path: Path) -> float | None:
    """The ``date`` (UNIX time of the run's start) a results file records, ``None`` if absent or not a number.

    Raises:
        ValueError: Not a JSON file (file named).
    """
    document = _load_json(Path(path))
    value = document.get("date") if isinstance(document, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _read_samples(path: Path) -> list[dict[str, Any]]:
    """The lines of a samples file; a document given twice (same ``doc_id`` and filter) is refused,
    since every repeated line would narrow the intervals as if it were another document."""
    lines: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    try:
        for number, record in read_samples(path):
            if "doc_id" not in record:
                raise ValueError(f"{path} line {number}: field 'doc_id' missing; not an lm-eval samples file")
            check_depth(record, f"{path} line {number}")
            key = (json.dumps(record["doc_id"], sort_keys=True), str(record.get("filter", "")))
            if key in seen:
                raise ValueError(
                    f"{path} line {number}: doc_id {record['doc_id']!r} already on line {seen[key]}; "
                    "a document may appear once per filter (a repeated line would narrow the intervals)"
                )
            seen[key] = number
            lines.append(record)
    except RecursionError:
        raise ValueError(f"{path}: a line nested more than {MAX_JSON_DEPTH} levels deep; not an lm-eval file") from None
    return lines


def _check_structure(path: Path, results: Any) -> dict[str, Any]:
    if not isinstance(results, dict):
        raise ValueError(f"{path}: expected a JSON object at the top level, got {type(results).__name__}")
    for key, kind in REQUIRED_KEYS.items():
        if key not in results:
            raise ValueError(f"{path}: field '{key}' missing; not an lm-eval results file (lm-eval >= 0.4 writes it)")
        if not isinstance(results[key], kind):
            raise ValueError(f"{path}: field '{key}' must be a JSON {kind.__name__}, got {type(results[key]).__name__}")
    _check_task_results(path, results["results"])
    subtasks = results.get("group_subtasks", {})
    if not isinstance(subtasks, dict) or not all(isinstance(v, list) for v in subtasks.values()):
        raise ValueError(f"{path}: field 'group_subtasks' must map names to lists of names")
    return results


def _check_task_results(path: Path, task_results: dict[str, Any]) -> None:
    """``results``: at least one task, each an object; task and metric names printable."""
    if not task_results:
        raise ValueError(f"{path}: field 'results' is empty (the run evaluated no task)")
    for task, metrics in task_results.items():
        check_name(task, f"{path}: field 'results', task name")
        if not isinstance(metrics, dict):
            raise ValueError(f"{path}: field 'results.{task}' must be an object, got {type(metrics).__name__}")
        for key in metrics:
            check_name(key, f"{path}: field 'results.{task}', metric name")


def read_run(results_path: str | Path) -> RunOutput:
    """Read a results file and the samples file of each of its tasks.

    The samples files are the ``samples_<task>_<stamp>.jsonl`` next to the results file with the
    same ``<stamp>`` (written by ``--log_samples`` in the same run).

    Raises:
        FileNotFoundError: The results file does not exist.
        ValueError: It is not an lm-eval results file, or a task's samples file is missing or
            malformed (file, line and field named).
    """
    path = Path(results_path)
    check_link_loop(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: results file not found")
    match = _RESULTS_FILE.match(path.name)
    if not match:
        raise ValueError(f"{path}: expected a file named results_<timestamp>.json (lm-eval --output_path)")
    results = _check_structure(path, _load_json(path))
    stamp = match.group("stamp")
    run = RunOutput(path, results, {}, {})
    for task in run.tasks:
        samples_path = path.with_name(f"samples_{task}_{stamp}.jsonl")
        if not samples_path.is_file():
            raise ValueError(
                f"{path}: no samples file {samples_path.name} for task '{task}' next to it; "
                f"rerun lm_eval with --log_samples (per-instance values are needed for the intervals)"
            )
        run.samples[task] = _read_samples(samples_path)
        run.samples_paths[task] = samples_path
    return run


def metric_keys(task_results: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The metrics of one ``results[task]`` entry as ``(key, metric, filter)`` triples.

    ``key`` is lm-eval's ``"metric,filter"``; stderr keys and bookkeeping fields are skipped.
    """
    out = []
    for key in task_results:
        if "," not in key:
            continue
        metric, _, filter_name = key.partition(",")
        if metric.endswith("_stderr"):
            continue
        out.append((key, metric, filter_name))
    return out


def higher_is_better(run: RunOutput, task: str, metric: str) -> bool | None:
    """lm-eval's ``higher_is_better[task][metric]`` of ``run``; ``None`` if absent or not a boolean."""
    table = run.results.get("higher_is_better") or {}
    value = table.get(task, {}).get(metric) if isinstance(table.get(task), dict) else None
    return value if isinstance(value, bool) else None


def statistic_records(lines: list[dict[str, Any]], metric: str, filter_name: str) -> int:
    """How many documents hold a record (a mapping) under ``metric``: the per-document input of a corpus
    statistic that lm-eval aggregates (RStd, pick rates), not a number to average; 0 for a mean metric."""
    values = [line.get(metric) for line in lines if line.get("filter", filter_name) == filter_name and metric in line]
    return len(values) if values and all(isinstance(value, Mapping) for value in values) else 0


def metric_values(lines: list[dict[str, Any]], metric: str, filter_name: str, source: Path) -> list[float]:
    """The per-document values of ``metric`` under ``filter_name`` (documents lacking it skipped).

    Raises:
        ValueError: A value is not a finite number (file, line and field named).
    """
    values: list[float] = []
    for number, line in enumerate(lines, start=1):
        if line.get("filter", filter_name) != filter_name:
            continue
        value = line.get(metric)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(
                f"{source} record {number} (doc_id {line.get('doc_id')!r}): field '{metric}' must be a "
                f"finite number, got {value!r}"
            )
        values.append(float(value))
    return values
