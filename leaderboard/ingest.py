"""One lm-eval run (results file + samples files) -> one leaderboard row.

For every task and every metric of the run the row holds lm-eval's score, a percentile bootstrap
95% interval over the task's instances (documents) computed with
:func:`logic_consistency.metrics.bootstrap_ci` from the per-document values in the samples file,
and the number of instances the metric is defined on. Metrics whose name starts with
``unparseable`` are counts: their sum over instances, no interval.

Groups (``logic_consistency``, ``logic_consistency_pairwise``, ...) get the same treatment. lm-eval
aggregates a group as the mean of its leaf tasks' scores (unweighted, or weighted by task size);
the group interval resamples instances from the pooled leaf tasks and recomputes exactly that mean
of task means (:func:`group_statistic`, passed to the same ``bootstrap_ci``). Pooled resampling
lets the number of instances drawn from each task vary, so it is a little wider than a stratified
bootstrap: conservative.

Nothing here trusts the files: the score recomputed from the samples must equal the one in the
results file, otherwise the samples do not belong to the results and a :class:`ValueError` names
the file and the field.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from logic_consistency import __version__ as SUITE_VERSION
from logic_consistency.metrics import bootstrap_ci
from logic_consistency.tasks.reports import report_hooks
from tqdm.auto import tqdm

from .identity import row_id, settings_id, sha256_hex, short_id
from .modelid import ModelIdentity, identify
from .results import RunOutput, metric_keys, metric_values, read_run

__all__ = [
    "DEFAULT_BOOTSTRAP", "BootstrapSettings", "build_row", "config_hash", "group_statistic", "identity_from_results", "ingest_results",
    "is_count", "iso_utc", "leaf_tasks", "prompt_hash", "task_config",
]

#: ``configs[task].metadata`` keys that are not run options: bookkeeping or prompt text.
NOT_OPTIONS = frozenset({"version", "config_source", "prompt_config", "stages_config"})
#: Task config keys that make up the prompt-template set (with the prompt metadata above).
PROMPT_KEYS = (
    "description", "doc_to_text", "doc_to_target", "doc_to_choice", "target_delimiter",
    "fewshot_delimiter", "gen_prefix", "fewshot_config",
)
SEED_KEYS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
GROUP_METHOD = (
    "percentile bootstrap over instances (logic_consistency.metrics.bootstrap_ci); a group resamples "
    "the pooled instances of its leaf tasks and recomputes lm-eval's mean of task means"
)


@dataclass(frozen=True)
class BootstrapSettings:
    """Parameters of every interval (recorded in the document)."""

    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0

    def as_json(self) -> dict[str, Any]:
        """The ``bootstrap`` object of a leaderboard document."""
        return {"confidence": self.confidence, "n_resamples": self.n_resamples, "seed": self.seed,
                "method": GROUP_METHOD}


#: The default interval parameters.
DEFAULT_BOOTSTRAP = BootstrapSettings()


def is_count(metric: str) -> bool:
    """Metrics named ``unparseable*`` are counts (summed over instances, no interval)."""
    return metric.startswith("unparseable")


def iso_utc(timestamp: float) -> str:
    """A UNIX timestamp as ISO 8601 in UTC, seconds precision (``2026-01-31T02:00:00Z``)."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _integral(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _interval(values: np.ndarray, bootstrap: BootstrapSettings) -> list[float] | None:
    if values.size < 2:
        return None
    low, high = bootstrap_ci(
        values, confidence=bootstrap.confidence, n_resamples=bootstrap.n_resamples, seed=bootstrap.seed
    )
    return [low, high]


def _display(metric: str, filter_name: str) -> str:
    return metric if filter_name == "none" else f"{metric},{filter_name}"


def _mismatch(run: RunOutput, task: str, key: str, official: float, what: str, value: float,
              n: int) -> ValueError:
    return ValueError(
        f"{run.results_path}: field 'results.{task}.{key}' is {official!r}, but the {what} over "
        f"{n} record(s) of {run.samples_paths[task].name} is {value!r}: the samples file does not "
        f"belong to this results file"
    )


def _official(run: RunOutput, task: str, key: str) -> float:
    value = _number(run.results["results"][task][key])
    if value is None:
        raise ValueError(
            f"{run.results_path}: field 'results.{task}.{key}' must be a finite number, got "
            f"{run.results['results'][task][key]!r}"
        )
    return value


def _higher_is_better(run: RunOutput, task: str, metric: str) -> bool | None:
    table = run.results.get("higher_is_better") or {}
    value = table.get(task, {}).get(metric) if isinstance(table.get(task), dict) else None
    return value if isinstance(value, bool) else None


def _task_entry(
    run: RunOutput, task: str, bootstrap: BootstrapSettings, values_out: dict[str, np.ndarray],
    progress: Any,
) -> dict[str, Any]:
    """The row entry of one leaf task; fills ``values_out[metric]`` with its per-instance values."""
    results = run.results["results"][task]
    lines = run.samples[task]
    metrics: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    for key, metric, filter_name in metric_keys(results):
        official = _official(run, task, key)
        values = np.asarray(metric_values(lines, metric, filter_name, run.samples_paths[task]), dtype=float)
        name = _display(metric, filter_name)
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
            stderr = _number(results.get(f"{metric}_stderr,{filter_name}"))
            metrics[name] = {
                "score": official,
                "ci95": _interval(values, bootstrap),
                "n": int(values.size),
                "higher_is_better": _higher_is_better(run, task, metric),
                "lm_eval_stderr": stderr,
            }
        progress.update(1)
    sample_len = results.get("sample_len")
    n_instances = sample_len if isinstance(sample_len, int) else len({line["doc_id"] for line in lines})
    return {
        "kind": "task",
        "alias": str(results.get("alias", task)),
        "version": _version(run, task),
        "subtasks": [],
        "n_instances": int(n_instances),
        "n_original": _n_samples(run, task, "original"),
        "unparseable": _integral(sum(float(count["total"]) for count in counts.values())),
        "metrics": metrics,
        "counts": counts,
    }


def _version(run: RunOutput, name: str) -> str | float | int | None:
    value = (run.results.get("versions") or {}).get(name)
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def _n_samples(run: RunOutput, task: str, which: str) -> int | None:
    entry = run.results["n-samples"].get(task)
    value = entry.get(which) if isinstance(entry, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


def group_statistic(
    values: np.ndarray, task_of: np.ndarray, task_weights: np.ndarray
) -> Callable[..., np.ndarray]:
    """The group score as a statistic of resampled instance *indices*, for ``bootstrap_ci``.

    lm-eval's group score is a weighted mean of its leaf tasks' means. Resampling instances from
    the pooled leaves and recomputing exactly that (tasks that drew no instance are left out and
    the weights of the others renormalised, as lm-eval does for tasks lacking a metric) keeps the
    interval inside the metric's range, unlike resampling linearised contributions.

    Args:
        values: Per-instance values of all contributing leaf tasks, concatenated.
        task_of: For each instance, the index of its task (0..T-1).
        task_weights: Weight of each task (``1/T`` each, or proportional to task size).

    Returns:
        ``statistic(indices, axis=1)``: one group score per row of resampled indices.
    """
    n_tasks = task_weights.size

    def statistic(indices: np.ndarray, axis: int = 1) -> np.ndarray:
        picked = indices.astype(np.int64)
        drawn_values, drawn_tasks = values[picked], task_of[picked]
        sums = np.zeros((picked.shape[0], n_tasks))
        counts = np.zeros((picked.shape[0], n_tasks))
        for task in range(n_tasks):
            mask = drawn_tasks == task
            sums[:, task] = np.where(mask, drawn_values, 0.0).sum(axis=axis)
            counts[:, task] = mask.sum(axis=axis)
        present = counts > 0
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=present)
        weights = np.where(present, task_weights, 0.0)
        return (weights * means).sum(axis=1) / weights.sum(axis=1)

    return statistic


def _group_interval(
    official: float, per_task: list[tuple[np.ndarray, int]], bootstrap: BootstrapSettings
) -> list[float] | None:
    """Interval of lm-eval's group mean from the leaf tasks' per-instance values.

    ``per_task`` holds, per contributing leaf task, its values and its ``sample_len`` (lm-eval's
    size weight). Returns ``None`` when neither weighting reproduces ``official`` or there are
    fewer than 2 instances.
    """
    means = np.array([values.mean() for values, _ in per_task])
    sizes = np.array([size for _, size in per_task], dtype=float)
    if math.isclose(float(means.mean()), official, rel_tol=1e-9, abs_tol=1e-9):
        weights = np.full(len(per_task), 1.0 / len(per_task))
    elif sizes.sum() > 0 and math.isclose(float((sizes * means).sum() / sizes.sum()), official,
                                          rel_tol=1e-9, abs_tol=1e-9):
        weights = sizes / sizes.sum()
    else:
        return None
    values = np.concatenate([task_values for task_values, _ in per_task])
    if values.size < 2:
        return None
    task_of = np.concatenate([np.full(task_values.size, index) for index, (task_values, _) in enumerate(per_task)])
    low, high = bootstrap_ci(
        np.arange(values.size), confidence=bootstrap.confidence, n_resamples=bootstrap.n_resamples,
        seed=bootstrap.seed, statistic=group_statistic(values, task_of, weights),
    )
    return [low, high]


def _group_entry(
    run: RunOutput, group: str, entries: Mapping[str, dict[str, Any]],
    values: Mapping[str, Mapping[str, np.ndarray]], bootstrap: BootstrapSettings, progress: Any,
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
        per_task = [
            (values[task][name], int(entries[task]["n_instances"]))
            for task in leaves
            if name in values[task] and values[task][name].size
        ]
        metrics[name] = {
            "score": official,
            "ci95": _group_interval(official, per_task, bootstrap) if per_task else None,
            "n": int(sum(task_values.size for task_values, _ in per_task)),
            "higher_is_better": _higher_is_better(run, group, metric),
            "lm_eval_stderr": _number(results.get(f"{metric}_stderr,{filter_name}")),
        }
        progress.update(1)
    counts: dict[str, dict[str, Any]] = {}
    for task in leaves:
        for name, count in entries[task]["counts"].items():
            slot = counts.setdefault(name, {"total": 0, "n": 0})
            slot["total"] = _integral(float(slot["total"]) + float(count["total"]))
            slot["n"] += count["n"]
    originals = [entries[task]["n_original"] for task in leaves]
    return {
        "kind": "group",
        "alias": str(results.get("alias", group)),
        "version": _version(run, group),
        "subtasks": leaves,
        "n_instances": int(sum(entries[task]["n_instances"] for task in leaves)),
        "n_original": int(sum(originals)) if originals and None not in originals else None,
        "unparseable": _integral(sum(float(entries[task]["unparseable"]) for task in leaves)),
        "metrics": metrics,
        "counts": counts,
    }


def _config(run: RunOutput, task: str) -> dict[str, Any]:
    config = run.results["configs"].get(task)
    if not isinstance(config, dict):
        raise ValueError(f"{run.results_path}: field 'configs.{task}' missing or not an object")
    return config


def _model_args(run: RunOutput) -> dict[str, str]:
    """``config.model_args`` as ``{key: value as text}`` (lm-eval records a string or an object)."""
    raw = run.results["config"].get("model_args")
    if isinstance(raw, dict):
        return {str(key): str(value) for key, value in raw.items()}
    if isinstance(raw, str):
        pairs = (part.split("=", 1) for part in raw.split(",") if "=" in part)
        return {key.strip(): value.strip() for key, value in pairs}
    return {}


def _same_text(value: Any, text: str) -> bool:
    return str(value).strip().lower() == text.strip().lower()


def task_config(run: RunOutput, task: str) -> dict[str, Any]:
    """``configs[task]`` without what is not a property of the task.

    lm-eval 0.4.13 copies every ``--model_args`` key into each task's ``metadata`` (``metadata =
    model_args | --metadata``), so ``model=smollm2-135m-instruct`` would make every model's task
    config different. Keys equal to a model argument are removed (a ``--metadata`` value that
    overrides one stays), as is the machine-specific ``metadata.config_source`` path.
    """
    config = dict(_config(run, task))
    metadata = config.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError(f"{run.results_path}: field 'configs.{task}.metadata' must be an object")
    model_args = _model_args(run)
    config["metadata"] = {
        key: value for key, value in metadata.items()
        if key != "config_source" and not (key in model_args and _same_text(value, model_args[key]))
    }
    return config


def _metadata(run: RunOutput, task: str) -> dict[str, Any]:
    return task_config(run, task)["metadata"]


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of a task config (pass :func:`task_config`'s cleaned config)."""
    return sha256_hex(dict(config))


def prompt_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the prompt-defining part of a task config (templates and prompt metadata)."""
    metadata = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    part = {key: config.get(key) for key in PROMPT_KEYS}
    part.update({key: metadata.get(key) for key in ("prompt_config", "stages_config")})
    return sha256_hex(part)


def _settings(run: RunOutput, suite_version: str) -> dict[str, Any]:
    config = run.results["config"]
    limit = _number(config.get("limit"))
    n_shot = run.results.get("n-shot") or {}
    tasks = {}
    for task in run.tasks:
        shots = n_shot.get(task)
        tasks[task] = {
            "config_hash": config_hash(task_config(run, task)),
            "version": _version(run, task),
            "num_fewshot": shots if isinstance(shots, int) and not isinstance(shots, bool) else None,
            "n_original": _n_samples(run, task, "original"),
            "n_effective": _n_samples(run, task, "effective"),
            "options": {k: v for k, v in _metadata(run, task).items() if k not in NOT_OPTIONS},
        }
    seeds = {key: config.get(key) for key in SEED_KEYS}
    fewshot_multiturn = run.results.get("fewshot_as_multiturn")
    return {
        "suite_version": suite_version,
        "lm_eval_version": _string(run.results.get("lm_eval_version")),
        "limit": limit,
        "system_instruction_sha": _string(run.results.get("system_instruction_sha")),
        "fewshot_as_multiturn": fewshot_multiturn if isinstance(fewshot_multiturn, bool) else None,
        "gen_kwargs": config.get("gen_kwargs"),
        "seeds": {key: value if isinstance(value, int) and not isinstance(value, bool) else None
                  for key, value in seeds.items()},
        "tasks": tasks,
    }


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _shared_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    option_sets = [entry["options"] for entry in settings["tasks"].values()]
    first, *rest = option_sets
    return {key: value for key, value in first.items() if all(other.get(key, object()) == value for other in rest)}


def _provenance(run: RunOutput, settings: Mapping[str, Any]) -> dict[str, Any]:
    results, config = run.results, run.results["config"]
    shared = _shared_options(settings)
    max_items, seed = shared.get("max_items"), shared.get("seed")
    run_time = results.get("total_evaluation_time_seconds")
    try:
        run_time_seconds = float(run_time) if run_time is not None else None
    except (TypeError, ValueError):
        run_time_seconds = None
    hashes = results.get("task_hashes") or {}
    return {
        "suite_version": settings["suite_version"],
        "lm_eval_version": settings["lm_eval_version"],
        "transformers_version": _string(results.get("transformers_version")),
        "git_hash": _string(results.get("git_hash")),
        "task_config_hashes": {task: entry["config_hash"] for task, entry in settings["tasks"].items()},
        "task_hashes": {str(k): str(v) for k, v in hashes.items()} if isinstance(hashes, dict) else {},
        # Per model, not per board: an instruct model run with its own template and a base model
        # run without it are compared on the same board (as on the Open LLM Leaderboard).
        "chat_template_applied": bool(results.get("chat_template") or results.get("chat_template_sha")),
        "chat_template_sha": _string(results.get("chat_template_sha")),
        "system_instruction_sha": _string(results.get("system_instruction_sha")),
        "limit": settings["limit"],
        "items_per_instance": max_items if isinstance(max_items, int) and not isinstance(max_items, bool) else None,
        "seed": seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        "run_options": shared,
        "date": _date(run),
        "run_time_seconds": run_time_seconds if run_time_seconds is None or run_time_seconds >= 0 else None,
        "results_file": str(run.results_path),
        "batch_size": config.get("batch_size"),
        "device": _string(config.get("device")),
    }


def _date(run: RunOutput) -> str:
    date = _number(run.results.get("date"))
    if date is None:
        raise ValueError(f"{run.results_path}: field 'date' (UNIX time of the run) missing or not a number")
    return iso_utc(date)


def _progress_total(run: RunOutput) -> int:
    return sum(len(metric_keys(run.results["results"][name])) for name in run.results["results"])


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
    with tqdm(total=_progress_total(run), desc=f"bootstrap {identity.name}", unit="metric",
              disable=not progress, leave=False) as bar:
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
    settings = _settings(run, suite_version)
    board = settings_id(settings)
    system_sha = settings["system_instruction_sha"]
    prompts = {task: prompt_hash(_config(run, task)) for task in run.tasks}
    prompt_set = short_id({"tasks": prompts, "system_instruction_sha": system_sha})
    provenance = _provenance(run, settings)
    return {
        "row_id": row_id(identity.name, identity.revision, identity.precision, prompt_set, board),
        "model": identity.as_json(),
        "prompt_set": {"id": prompt_set, "tasks": prompts},
        "settings_id": board,
        "settings": settings,
        "night": night,
        "measured_at": provenance["date"],
        "tasks": entries,
        **reports,
        "provenance": provenance,
    }


def identity_from_results(run: RunOutput, **overrides: Any) -> ModelIdentity:
    """The identity lm-eval recorded in ``config`` (``model``, ``model_args``), with overrides."""
    config = run.results["config"]
    backend = config.get("model")
    if not isinstance(backend, str) or not backend:
        raise ValueError(f"{run.results_path}: field 'config.model' missing or not a string")
    model_args = config.get("model_args")
    if model_args is not None and not isinstance(model_args, (str, dict)):
        raise ValueError(f"{run.results_path}: field 'config.model_args' must be a string or an object")
    try:
        return identify(backend, model_args, **{k: v for k, v in overrides.items() if v is not None})
    except ValueError as error:
        raise ValueError(f"{run.results_path}: field 'config.model_args': {error}") from None


def ingest_results(
    results_path: str | os.PathLike[str],
    *,
    identity: ModelIdentity | None = None,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    night: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    suite_version: str = SUITE_VERSION,
    progress: bool = False,
) -> dict[str, Any]:
    """Read one results file (and its samples) into a leaderboard row.

    Args:
        results_path: ``results_<stamp>.json`` written by ``lm_eval --output_path ... --log_samples``.
        identity: Who was measured; default: from the file's ``config`` plus ``name`` /
            ``revision`` / ``precision``.
        name: Display name override.
        revision: Revision override.
        precision: Precision override.
        night: Nightly build date of the row.
        bootstrap: Interval parameters.
        suite_version: Suite version to record.
        progress: Show a tqdm bar.

    Raises:
        FileNotFoundError: The results file does not exist.
        ValueError: Unreadable or mismatched files (file and field named).
    """
    run = read_run(Path(results_path))
    if identity is None:
        identity = identity_from_results(run, name=name, revision=revision, precision=precision)
    return build_row(run, identity, night=night, bootstrap=bootstrap, suite_version=suite_version,
                     progress=progress)
