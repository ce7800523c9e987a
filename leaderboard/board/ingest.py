"""One lm-eval run (results file + samples files) -> one leaderboard row.

For every task, group and metric the row holds lm-eval's score, a percentile bootstrap 95%
interval over the task's instances (a stratified bootstrap of the mean of task means for a group;
:mod:`.intervals` computes every interval, :mod:`.results` reads the files) and the number of
instances the metric is defined on. Metrics named ``unparseable*`` or ``n_*`` are counts: their sum
over instances, no interval.

Nothing here trusts the files: the score recomputed from the samples must equal the one in the
results file, otherwise a :class:`ValueError` names the file and the field.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np
from tqdm.auto import tqdm

from logic_consistency import __version__ as SUITE_VERSION
from logic_consistency.credentials import Redactor
from logic_consistency.harness_ext.shards.shard import SHARD_KEY
from logic_consistency.tasks.reports import metric_display, report_hooks

from .identity import check_name, row_id, settings_id, short_id
from .intervals import DEFAULT_BOOTSTRAP, BootstrapSettings, group_interval, group_statistic, interval
from .modelid import ModelIdentity, identify
from .provenance import (
    config_hash,
    iso_utc,
    n_samples,
    number,
    prompt_hash,
    provenance,
    raw_task_config,
    run_settings,
    task_config,
    task_version,
)
from .results import RunOutput, higher_is_better, metric_keys, metric_values, read_run, statistic_records

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack is 3.11+; the suite supports 3.10

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "BootstrapSettings",
    "RowOptions",
    "build_row",
    "config_hash",
    "group_statistic",
    "identity_from_results",
    "ingest_results",
    "is_count",
    "iso_utc",
    "leaf_tasks",
    "prompt_hash",
    "task_config",
    "without_credentials",
]

#: Name prefixes of count metrics (lm-eval aggregation: the sum over documents) that no family
#: declared (``tasks/<family>/_metrics_yaml`` declares its own): unparseable answers and other numbers
#: of events. The naming rule lets the leaderboard tell counts from rates without knowing any task.
COUNT_PREFIXES = ("unparseable", "n_")


def is_count(metric: str) -> bool:
    """A count (summed over instances, no interval): as its family declared, else named ``unparseable*`` or ``n_*``."""
    declared = metric_display(metric)
    return bool(declared["count"]) if declared is not None else metric.startswith(COUNT_PREFIXES)


def _integral(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _display(metric: str, filter_name: str) -> str:
    return metric if filter_name == "none" else f"{metric},{filter_name}"


def _mismatch(run: RunOutput, task: str, key: str, official: float, what: str, value: float, n: int) -> ValueError:
    return ValueError(
        f"{run.results_path}: field 'results.{task}.{key}' is {official!r}, but the {what} over "
        f"{n} record(s) of {run.samples_paths[task].name} is {value!r}: the samples file does not "
        f"belong to this results file"
    )


def _official(run: RunOutput, task: str, key: str) -> float:
    value = number(run.results["results"][task][key])
    if value is None:
        raise ValueError(
            f"{run.results_path}: field 'results.{task}.{key}' must be a finite number, got "
            f"{run.results['results'][task][key]!r}"
        )
    return value


class Progress(Protocol):
    """What a row's bootstrap reports its progress to (a tqdm bar, shown or not)."""

    def update(self, n: float | None = 1) -> bool | None:
        """Count ``n`` more metrics done."""
        ...


def _task_entry(
    run: RunOutput,
    task: str,
    bootstrap: BootstrapSettings,
    values_out: dict[str, np.ndarray],
    progress: Progress,
) -> dict[str, Any]:
    """The row entry of one leaf task; fills ``values_out[metric]`` with its per-instance values."""
    results = run.results["results"][task]
    lines = run.samples[task]
    metrics: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    for key, metric, filter_name in metric_keys(results):
        official = _official(run, task, key)
        name = _display(metric, filter_name)
        records = statistic_records(lines, metric, filter_name)
        if records:  # a corpus statistic (RStd, pick rates): lm-eval's value, no per-document number to bootstrap
            higher = higher_is_better(run, task, metric)
            metrics[name] = {"score": official, "ci95": None, "n": records, "higher_is_better": higher}
            metrics[name]["lm_eval_stderr"] = None
            progress.update(1)
            continue
        values = np.asarray(metric_values(lines, metric, filter_name, run.samples_paths[task]), dtype=float)
        if is_count(metric):
            total = float(values.sum())
            if not math.isclose(total, official, rel_tol=1e-9, abs_tol=1e-9):
                raise _mismatch(run, task, key, official, f"sum of '{metric}'", total, values.size)
            counts[name] = {"total": _integral(total), "n": int(values.size)}
        else:
            mean = float(values.mean()) if values.size else math.nan
            if not math.isclose(mean, official, rel_tol=1e-9, abs_tol=1e-9):
                raise _mismatch(run, task, key, official, f"mean of '{metric}'", mean, values.size)
            values_out[name] = values
            stderr = number(results.get(f"{metric}_stderr,{filter_name}"))
            metrics[name] = {
                "score": official,
                "ci95": interval(values, bootstrap),
                "n": int(values.size),
                "higher_is_better": higher_is_better(run, task, metric),
                "lm_eval_stderr": stderr,
            }
        progress.update(1)
    sample_len = results.get("sample_len")
    n_instances = sample_len if isinstance(sample_len, int) else len({line["doc_id"] for line in lines})
    return {
        "kind": "task",
        "alias": str(results.get("alias", task)),
        "version": task_version(run, task),
        "subtasks": [],
        "n_instances": int(n_instances),
        "n_original": n_samples(run, task, "original"),
        "unparseable": _unparseable(counts),
        "metrics": metrics,
        "counts": counts,
    }


def _unparseable(counts: Mapping[str, Any]) -> float | int:
    """Unparseable answers of a task: the sum of the totals of its ``unparseable*`` count metrics."""
    return _integral(sum(float(count["total"]) for name, count in counts.items() if name.startswith("unparseable")))


def leaf_tasks(group: str, groups: Mapping[str, list[str]]) -> list[str]:
    """The leaf tasks under ``group`` (nested groups expanded), in order, without repeats."""
    out: list[str] = []

    def visit(name: str, seen: frozenset[str]) -> None:
        for child in groups.get(name, []):
            if child in seen:
                continue
            if child in groups:
                visit(child, seen | {child})
            elif child not in out:
                out.append(child)

    visit(group, frozenset({group}))
    return out


def _group_entry(
    run: RunOutput,
    group: str,
    entries: Mapping[str, dict[str, Any]],
    values: Mapping[str, Mapping[str, np.ndarray]],
    bootstrap: BootstrapSettings,
    progress: Progress,
) -> dict[str, Any]:
    results = run.results["results"][group]
    leaves = [task for task in leaf_tasks(group, run.groups) if task in entries]
    metrics: dict[str, Any] = {}
    for key, metric, filter_name in metric_keys(results):
        if is_count(metric):
            progress.update(1)
            continue  # group counts are recomputed below from the leaves
        official = _official(run, group, key)
        name = _display(metric, filter_name)
        per_task = _leaf_values(name, leaves, entries, values)
        metrics[name] = {
            "score": official,
            "ci95": group_interval(official, per_task, bootstrap) if per_task else None,
            "n": int(sum(task_values.size for task_values, _ in per_task)),
            "higher_is_better": higher_is_better(run, group, metric),
            "lm_eval_stderr": number(results.get(f"{metric}_stderr,{filter_name}")),
        }
        progress.update(1)
    counts = _summed_counts(entries, leaves)
    return {
        "kind": "group",
        "alias": str(results.get("alias", group)),
        "version": task_version(run, group),
        "subtasks": leaves,
        "n_instances": int(sum(entries[task]["n_instances"] for task in leaves)),
        "n_original": _summed_originals(entries, leaves),
        "unparseable": _integral(sum(float(entries[task]["unparseable"]) for task in leaves)),
        "metrics": metrics,
        "counts": counts,
    }


def _leaf_values(
    name: str, leaves: list[str], entries: Mapping[str, dict[str, Any]], values: Mapping[str, Mapping[str, np.ndarray]]
) -> list[tuple[np.ndarray, int]]:
    """``(per-instance values, instances)`` of metric ``name`` in each leaf task that has any."""
    return [
        (values[task][name], int(entries[task]["n_instances"]))
        for task in leaves
        if name in values[task] and values[task][name].size
    ]


def _summed_originals(entries: Mapping[str, dict[str, Any]], leaves: list[str]) -> int | None:
    """A group's original instances: the sum over its leaves, ``None`` if a leaf does not know its own."""
    originals = [entries[task]["n_original"] for task in leaves]
    return int(sum(originals)) if originals and None not in originals else None


def _summed_counts(entries: Mapping[str, dict[str, Any]], leaves: list[str]) -> dict[str, dict[str, Any]]:
    """A group's counts: each count's total and ``n`` summed over its leaf tasks."""
    counts: dict[str, dict[str, Any]] = {}
    for task in leaves:
        for name, count in entries[task]["counts"].items():
            slot = counts.setdefault(name, {"total": 0, "n": 0})
            slot["total"] = _integral(float(slot["total"]) + float(count["total"]))
            slot["n"] += count["n"]
    return counts


def _progress_total(run: RunOutput) -> int:
    return sum(len(metric_keys(run.results["results"][name])) for name in run.results["results"])


class RowOptions(TypedDict, total=False):
    """The options of a row that :func:`ingest_results` passes on to :func:`build_row` (declared once)."""

    night: str | None
    bootstrap: BootstrapSettings
    suite_version: str
    progress: bool


def build_row(
    run: RunOutput,
    identity: ModelIdentity,
    *,
    night: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    suite_version: str = SUITE_VERSION,
    progress: bool = False,
) -> dict[str, Any]:
    """The leaderboard row of one parsed run (see the module docstring).

    Args:
        run: The parsed results and samples (:func:`~.results.read_run`).
        identity: Who was measured.
        night: The nightly build date (``YYYY-MM-DD``) the row belongs to, if any.
        bootstrap: Interval parameters.
        suite_version: Version of the suite that produced the run (default: the installed one).
        progress: Show a tqdm bar over the metrics being bootstrapped.

    Raises:
        ValueError: The results and samples disagree or a field is malformed (file and field named).
    """
    entries: dict[str, dict[str, Any]] = {}
    values: dict[str, dict[str, np.ndarray]] = {}
    with tqdm(
        total=_progress_total(run), desc=f"bootstrap {identity.name}", unit="metric", disable=not progress, leave=False
    ) as bar:
        for task in run.tasks:
            values[task] = {}
            entries[task] = _task_entry(run, task, bootstrap, values[task], bar)
        for group in run.results["results"]:
            if group in run.groups:
                entries[group] = _group_entry(run, group, entries, values, bootstrap, bar)
    reports: dict[str, dict[str, Any]] = {}
    for hook in report_hooks():
        reports[hook.section] = {
            task: hook.build(run.samples_paths[task], task)
            for task in run.tasks
            if hook.applies(task, run.results["results"][task])
        }
    settings = run_settings(run, suite_version)
    board = settings_id(settings)
    record = provenance(run, settings)
    prompts = {task: prompt_hash(raw_task_config(run, task)) for task in run.tasks}
    prompt_set = short_id({"tasks": prompts, "system_instruction_sha": record["system_instruction_sha"]})
    return {
        "row_id": row_id(identity.name, identity.revision, identity.precision, prompt_set, board),
        "model": identity.as_json(),
        "prompt_set": {"id": prompt_set, "tasks": prompts},
        "settings_id": board,
        "settings": settings,
        "night": night,
        "measured_at": record["date"],
        "tasks": entries,
        **reports,
        "provenance": record,
    }


def identity_from_results(run: RunOutput, **overrides: Any) -> ModelIdentity:
    """The identity lm-eval recorded in ``config`` (``model``, ``model_args``), with overrides."""
    backend, model_args = _recorded_model(run)
    for key, value in overrides.items():
        if isinstance(value, str):
            check_name(value, f"--{key}")
    try:
        identity = identify(backend, model_args, **{k: v for k, v in overrides.items() if v is not None})
    except ValueError as error:
        raise ValueError(f"{run.results_path}: field 'config.model_args': {error}") from None
    for key in ("name", "backend", "revision", "precision"):
        check_name(getattr(identity, key), f"{run.results_path}: model {key} (from field 'config.model_args')")
    return identity


def _recorded_model(run: RunOutput) -> tuple[str, str | dict[str, Any] | None]:
    """The backend and model arguments lm-eval recorded in ``config``, checked (file and field named)."""
    config = run.results["config"]
    backend = config.get("model")
    if not isinstance(backend, str) or not backend:
        raise ValueError(f"{run.results_path}: field 'config.model' missing or not a string")
    model_args = config.get("model_args")
    if model_args is not None and not isinstance(model_args, (str, dict)):
        raise ValueError(f"{run.results_path}: field 'config.model_args' must be a string or an object")
    return backend, model_args


#: How many redacted fields the warning of :func:`without_credentials` names.
WARN_FIELDS = 6


def without_credentials(run: RunOutput, warn: Callable[[str], None] | None = None) -> RunOutput:
    """``run`` with every credential in its results redacted (:mod:`logic_consistency.credentials`).

    A results file written by ``lm_eval`` with a key in ``--model_args`` (``api_key=...``, user info or
    ``?api-key=`` in ``base_url``) carries it in ``config.model_args`` and in every task's
    ``metadata``. It is redacted before the row is built, so no output holds it and neither the row's
    identity nor its board depends on it (a rotated key gives the same row). One warning (default:
    standard error) names the fields, never the values.
    """
    redactor = Redactor.from_environment()
    results = redactor.json(run.results)
    if not redactor.found:
        return run
    # field paths only (``config.model_args``), each task's copy named once (``configs.<task>.metadata.api_key``)
    fields = sorted({re.sub(r"^configs\.[^.]+\.", "configs.<task>.", found.split(": ")[0]) for found in redactor.found})
    shown = ", ".join(fields[:WARN_FIELDS]) + (
        f" and {len(fields) - WARN_FIELDS} more" if len(fields) > WARN_FIELDS else ""
    )
    (warn or _stderr)(
        f"logic-consistency: warning: {run.results_path}: credentials redacted in {shown} (never written to "
        f"the board, history or page); give keys in environment variables such as OPENAI_API_KEY"
    )
    return dataclasses.replace(run, results=results)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def refuse_shard(run: RunOutput) -> None:
    """A shard's results (marked by :mod:`~logic_consistency.harness_ext.shards.shard`) are a fraction of the
    documents: never a model's row. Raise :class:`ValueError` pointing to the merge."""
    mark = run.results.get(SHARD_KEY)
    if mark is not None:
        shard = f"{mark.get('index')}/{mark.get('count')}" if isinstance(mark, dict) else repr(mark)
        raise ValueError(
            f"{run.results_path}: field {SHARD_KEY!r}: the results of shard {shard} only, not a model's run; "
            "merge every shard first (python -m logic_consistency.harness_ext.shards.merge SPEC.json, "
            "see docs/cluster.md) and ingest the merged results"
        )


def refuse_predict_only(run: RunOutput) -> None:
    """A ``--predict_only`` run (lm-eval swaps every metric for ``bypass``) has model outputs and no
    scores: nothing to publish. Raise :class:`ValueError` naming the file and the task."""
    for task, entry in run.results.get("results", {}).items():
        if isinstance(entry, dict) and any(key.partition(",")[0] == "bypass" for key in entry):
            raise ValueError(
                f"{run.results_path}: field 'results.{task}' has lm-eval's 'bypass' metric: a --predict_only run "
                "has model outputs but no scores to publish; run lm_eval without --predict_only"
            )


def ingest_results(
    results_path: str | os.PathLike[str],
    *,
    identity: ModelIdentity | None = None,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    **row: Unpack[RowOptions],
) -> dict[str, Any]:
    """Read one results file (and its samples) into a leaderboard row.

    Args:
        results_path: ``results_<stamp>.json`` written by ``lm_eval --output_path ... --log_samples``.
        identity: Who was measured; default: from the file's ``config`` plus ``name`` /
            ``revision`` / ``precision``.
        name: Display name override.
        revision: Revision override.
        precision: Precision override.
        row: ``night``, ``bootstrap``, ``suite_version``, ``progress``, as :func:`build_row` takes them.

    Raises:
        FileNotFoundError: The results file does not exist.
        ValueError: Unreadable or mismatched files (file and field named).
    """
    run = without_credentials(read_run(Path(results_path)))
    refuse_shard(run)
    refuse_predict_only(run)
    if identity is None:
        identity = identity_from_results(run, name=name, revision=revision, precision=precision)
    return build_row(run, identity, **row)
