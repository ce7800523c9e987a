"""What a leaderboard row records besides scores: the run's settings, the task configs and their
hashes, and the provenance (versions, dates, options) of one lm-eval run."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from logic_consistency.harness_ext.models.args import split_model_args
from logic_consistency.harness_ext.models.provenance import adapter_provenance
from logic_consistency.harness_ext.publish.allowlist import public_args, public_metadata, public_path
from logic_consistency.options import SUITE_OPTIONS

from .identity import check_name, sha256_hex, short_id
from .merge import shared_options
from .nights import check_timestamp
from .results import RunOutput

__all__ = [
    "NOT_OPTIONS",
    "PROMPT_KEYS",
    "SEED_KEYS",
    "config_hash",
    "documents_id",
    "endpoint_model",
    "iso_utc",
    "n_samples",
    "number",
    "prompt_hash",
    "provenance",
    "raw_task_config",
    "run_settings",
    "task_config",
    "task_version",
]

LOG = logging.getLogger(__name__)

#: ``configs[task].metadata`` keys that are not run options: bookkeeping or prompt text.
NOT_OPTIONS = frozenset({"version", "config_source", "prompt_config", "stages_config"})
#: Task config keys that make up the prompt-template set (with the prompt metadata above).
PROMPT_KEYS = (
    "description",
    "doc_to_text",
    "doc_to_target",
    "doc_to_choice",
    "target_delimiter",
    "fewshot_delimiter",
    "gen_prefix",
    "fewshot_config",
)
SEED_KEYS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")


def iso_utc(timestamp: float) -> str:
    """A UNIX timestamp as ISO 8601 in UTC, seconds precision (``2026-01-31T02:00:00Z``)."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def task_version(run: RunOutput, name: str) -> str | float | int | None:
    value = (run.results.get("versions") or {}).get(name)
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def n_samples(run: RunOutput, task: str, which: str) -> int | None:
    entry = run.results["n-samples"].get(task)
    value = entry.get(which) if isinstance(entry, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def raw_task_config(run: RunOutput, task: str) -> dict[str, Any]:
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
        return {key: value for key, value in split_model_args(raw) if value is not None}
    return {}


def _same_text(value: Any, text: str) -> bool:
    return str(value).strip().lower() == text.strip().lower()


def task_config(run: RunOutput, task: str) -> dict[str, Any]:
    """``configs[task]`` without what is not a property of the task.

    lm-eval 0.4.13 copies every ``--model_args`` key into each task's ``metadata`` (``metadata =
    model_args | --metadata``), so ``model=smollm2-135m-instruct`` would make every model's task
    config different. Keys equal to a model argument are removed (a ``--metadata`` value that
    overrides one stays), as is the machine-specific ``metadata.config_source`` path. A suite option
    (:data:`logic_consistency.options.SUITE_OPTIONS`) always stays: a ``seed`` given in
    ``--model_args`` reaches the tasks through that merge and draws the items, so the row records it.
    """
    config = dict(raw_task_config(run, task))
    metadata = config.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError(f"{run.results_path}: field 'configs.{task}.metadata' must be an object")
    model_args = _model_args(run)
    config["metadata"] = {
        key: value
        for key, value in metadata.items()
        if key != "config_source"
        and (key in SUITE_OPTIONS or not (key in model_args and _same_text(value, model_args[key])))
    }
    return config


def _metadata(run: RunOutput, task: str) -> dict[str, Any]:
    return task_config(run, task)["metadata"]


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of a task config (pass :func:`task_config`'s cleaned config)."""
    return sha256_hex(dict(config))


def prompt_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the prompt-defining part of a task config (templates and prompt metadata)."""
    metadata: Mapping[str, Any] = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
    part = {key: config.get(key) for key in PROMPT_KEYS}
    part.update({key: metadata.get(key) for key in ("prompt_config", "stages_config")})
    return sha256_hex(part)


def documents_id(run: RunOutput, task: str, limit: float | None) -> str | None:
    """The id of the documents a run evaluated, when they were a selection (``lm_eval --samples``).

    lm-eval records ``--samples`` nowhere in the results file, and renumbers the selected documents
    from 0 in the samples file; but it logs each document's ``doc_hash``. So when no ``limit`` was
    given and fewer documents were evaluated than the task has, the sorted set of their hashes
    identifies the selection: two runs on different documents get different ids (and boards).
    ``None`` for a whole task, or its first ``limit`` documents (``limit`` says which).

    Raises:
        ValueError: A sample line of a selection has no ``doc_hash`` (file and line named).
    """
    original, effective = n_samples(run, task, "original"), n_samples(run, task, "effective")
    if limit is not None or original is None or effective is None or effective >= original:
        return None
    hashes = set()
    for line, record in enumerate(run.samples[task], start=1):
        value = record.get("doc_hash")
        if not isinstance(value, str):
            raise ValueError(
                f"{run.samples_paths[task]} record {line}: field 'doc_hash' missing or not a string; the run "
                f"evaluated {effective} of {original} documents (lm_eval --samples) and the hashes say which"
            )
        hashes.add(value)
    return short_id(sorted(hashes))


def run_settings(run: RunOutput, suite_version: str) -> dict[str, Any]:
    config = run.results["config"]
    limit = number(config.get("limit"))
    n_shot = run.results.get("n-shot") or {}
    tasks = {}
    for task in run.tasks:
        shots = n_shot.get(task)
        tasks[task] = {
            "config_hash": config_hash(task_config(run, task)),
            "version": task_version(run, task),
            "num_fewshot": shots if isinstance(shots, int) and not isinstance(shots, bool) else None,
            "n_original": n_samples(run, task, "original"),
            "n_effective": n_samples(run, task, "effective"),
            # the allowlist: only declared options with plain values (harness_ext.publish), at any depth
            "options": public_metadata(_metadata(run, task), also=public_args(config.get("model"))).value,
        }
        documents = documents_id(run, task, limit)
        if documents is not None:  # only then: the settings (and ids) of every other row stay as they were
            tasks[task]["documents"] = documents
    seeds = {key: config.get(key) for key in SEED_KEYS}
    # Not here: how a model is prompted (its chat template, the system instruction, few-shot as
    # multi-turn, which lm-eval turns on with --apply_chat_template). Those are properties of the
    # model's row (provenance), so an instruct model with its template and a base model without
    # one are ranked on one board, as on the Open LLM Leaderboard (schema 2.0; README).
    return {
        "suite_version": suite_version,
        "lm_eval_version": _string(run.results.get("lm_eval_version")),
        "limit": limit,
        "gen_kwargs": config.get("gen_kwargs"),
        "seeds": {
            key: value if isinstance(value, int) and not isinstance(value, bool) else None
            for key, value in seeds.items()
        },
        "tasks": tasks,
    }


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _run_time_seconds(value: Any) -> float | None:
    """lm-eval's ``total_evaluation_time_seconds`` as a number >= 0, else ``None``."""
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is None or seconds >= 0 else None


def provenance(run: RunOutput, settings: Mapping[str, Any]) -> dict[str, Any]:
    results, config = run.results, run.results["config"]
    shared = shared_options(settings)
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
        "fewshot_as_multiturn": _flag(results.get("fewshot_as_multiturn")),
        "limit": settings["limit"],
        "items_per_instance": _integer(shared.get("max_items")),
        "seed": _integer(shared.get("seed")),
        "run_options": shared,
        "date": _date(run),
        "run_time_seconds": _run_time_seconds(results.get("total_evaluation_time_seconds")),
        # by declaration, never the folder it lies in (a home folder): local:<SHA-256 of the path>/<file name>
        "results_file": public_path(str(run.results_path)),
        "batch_size": config.get("batch_size"),
        "device": _string(config.get("device")),
        "endpoint_model": endpoint_model(run),
        **adapter_provenance(_model_args(run), shown_path=public_path),  # peft=ADAPTER: the adapter's base and recipe
    }


def endpoint_model(run: RunOutput) -> str | None:
    """The model name an API endpoint reported (``config.endpoint_model``, recorded by API backends),
    or ``None``; logs a warning when it is not the model asked for (``model=`` in ``model_args``).

    Several reported names (a list) are joined with ``", "``. A results file without the field
    (older runs, local backends) gives ``None``.

    Raises:
        ValueError: The field is neither a string nor a list of strings, or holds a control character.
    """
    raw = run.results["config"].get("endpoint_model")
    if raw is None:
        return None
    names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else None
    if names is None or not all(isinstance(name, str) for name in names):
        raise ValueError(f"{run.results_path}: field 'config.endpoint_model' must be a string or a list of strings")
    reported = ", ".join(sorted(set(names)))
    check_name(reported, f"{run.results_path}: field 'config.endpoint_model'")
    requested = _model_args(run).get("model")
    if requested is not None and set(names) != {requested}:
        LOG.warning(
            "%s: the endpoint answered as %r, but the run asked for model=%r; the row records both "
            "(provenance.endpoint_model)",
            run.results_path,
            reported,
            requested,
        )
    return reported


def _date(run: RunOutput) -> str:
    date = number(run.results.get("date"))
    if date is None:
        raise ValueError(f"{run.results_path}: field 'date' (UNIX time of the run) missing or not a number")
    moment = check_timestamp(date, where=f"{run.results_path}: field 'date'")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
