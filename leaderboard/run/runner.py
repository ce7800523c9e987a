"""Running one model of the nightly build: its ``lm_eval`` subprocess, its log, its row or failure.

Each model runs through the suite's one starter of child processes
(:mod:`logic_consistency.harness_ext.jobs.processes`): in its own process group, so a model that
cannot load, crashes or hangs past its ``timeout`` is stopped (SIGTERM, then SIGKILL after
:data:`~logic_consistency.harness_ext.jobs.processes.KILL_GRACE_SECONDS`) without taking the build down, and with the parent-death signal, so it
never outlives the build. Here it also inherits the build lock's descriptor
(:func:`~.lock.held_lock_fds`), so the lock is released only once the run has gone too.
:mod:`.units` turns a run into a leaderboard row (:mod:`..board.ingest`) or a failure record, and
:mod:`.executor` runs the units. Writing the board is :mod:`.nightly`'s job.
"""

from __future__ import annotations

import re
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.credentials import Redactor, is_key_name
from logic_consistency.harness_ext.jobs import processes
from logic_consistency.harness_ext.jobs.processes import (
    ProcessResult,
    run_captured,
)
from logic_consistency.harness_ext.publish.lm_eval_command import LmEvalCommand
from logic_consistency.harness_ext.shards.shard import Shard
from logic_consistency.outputs import atomic_write

from ..board.failures import failure_error
from ..board.identity import sha256_hex
from ..board.ingest import BootstrapSettings, iso_utc
from ..board.modelid import ModelIdentity, identify, parse_model_args, published_model_args, slug
from .lock import child_group_recorded, held_lock_fds
from .modellist import ModelSpec

RUNS_DIR = "runs"


def run_logged(command: Sequence[str], **options: Any) -> ProcessResult:
    """:func:`~logic_consistency.harness_ext.jobs.processes.run_logged` (the one way a child starts),
    the child inheriting the build lock's descriptors (:func:`~.lock.held_lock_fds`): the lock is
    released only once the run has gone too, even when the build was killed; and its process group
    recorded in the lock while it runs (:func:`~.lock.child_group_recorded`), so that the build taking
    a dead build's lock over ends it (a wrapper script's children included) before writing anything."""
    return processes.run_logged(command, pass_fds=held_lock_fds(), track=child_group_recorded, **options)


def lm_eval_run(
    spec: ModelSpec,
    *,
    lm_eval: str,
    output_path: Path,
    cache_path: Path,
    shard: Shard | None = None,
    build_id: str = "",
    env: Mapping[str, str] | None = None,
) -> LmEvalCommand:
    """One model's ``lm_eval`` run (or one shard of it) as the build starts it: the suite's one run
    description (:class:`~logic_consistency.harness_ext.publish.lm_eval_command.LmEvalCommand`), which
    builds its command line, the line its log shows and its environment."""
    return LmEvalCommand(
        model=spec.backend, model_args=spec.model_args, tasks=spec.tasks, output_path=output_path, lm_eval=lm_eval,
        metadata=spec.metadata or None, batch_size=spec.batch_size, limit=spec.limit,
        apply_chat_template=spec.apply_chat_template, use_cache=cache_path, extra_args=tuple(spec.extra_args),
        shard=shard, build_id=build_id, env=dict(env or {}),
    )  # fmt: skip


def scrub_outputs(folder: Path, redactor: Redactor, *, since: float, keep: Path | None = None) -> list[str]:
    """Rewrite (atomically) each file under ``folder`` changed since ``since`` that holds a secret of ``redactor``.

    Defence in depth for what ``lm_eval`` wrote (results, samples): credentials in its model
    arguments are refused before it starts (:mod:`.modellist`), so only the values of the key
    environment variables could reach its files. ``keep`` (the run's log, redacted as it is written)
    is skipped.

    Returns:
        One line per file rewritten: its path and how many replacements (issue 54: never silently).
    """
    literal = Redactor(redactor.secrets, patterns=False)
    changed = []
    for path in sorted(folder.rglob("*")) if literal.secrets and folder.is_dir() else []:
        if path == keep or not path.is_file() or path.stat().st_mtime < since:
            continue
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        before = literal.replacements
        clean = literal.text(text)
        if clean != text:
            atomic_write(path, [clean.encode("utf-8", errors="surrogateescape")])
            count = literal.replacements - before
            changed.append(f"note: {path}: {count} replacement(s) of a credential, written as [redacted NAME]")
    return changed


def embedded_sha_subprocess(name: str) -> str:
    """GGUF sha256 of an embedded model, resolved (converted on first use) in a subprocess."""
    import json

    completed = run_captured([sys.executable, "-m", "logic_consistency.harness_ext.models.embedded", name])
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        raise ValueError(f"cannot resolve embedded model {name!r}: {lines[-1] if lines else 'no output'}")
    folder = Path(completed.stdout.strip().splitlines()[-1])
    manifest = json.loads((folder / "logic_consistency_model.json").read_text(encoding="utf-8"))
    return str(manifest["gguf_sha256"])


@dataclass(frozen=True)
class RunOutcome:
    """One model's run: a row, or a failure record (its full message is in the log only); ``notes``: lines
    for the build's log (a file the redaction rewrote)."""

    spec: ModelSpec
    row: dict[str, Any] | None
    failure: dict[str, Any] | None
    seconds: float
    log_file: Path
    notes: tuple[str, ...] = ()


def failure_record(
    spec: ModelSpec,
    night: str,
    code: str,
    *,
    board: Path,
    detail: str,
    log_file: Path | None = None,
    **error: Any,
) -> dict[str, Any]:
    """The board's record of a model's failed run: a code of the closed vocabulary, never free text.

    ``detail`` (the full message, which may hold what an endpoint or a URL wrote) goes to the run's
    local log only, redacted (:func:`log_failure`); the record holds the published model arguments
    (:func:`~..board.modelid.published_model_args`: an undeclared endpoint's host as a label), the
    log's path relative to ``board`` and :func:`..board.failures.failure_error` of ``code`` and ``error``
    (``returncode``, ``http_status``, ``error_class``, ``field``, ``shard``).
    """
    log_failure(log_file, code, detail)
    relative = None
    if log_file is not None and log_file.is_relative_to(board):
        relative = log_file.relative_to(board).as_posix()
    return {
        "name": spec.name,
        "backend": spec.backend,
        "model_args": published_model_args(
            spec.backend, spec.model_args, name=spec.name, public_endpoint=spec.public_endpoint
        ),
        "night": night,
        "failed_at": iso_utc(time.time()),
        "error": failure_error(code, **error),
        "log_file": relative,
    }


def log_failure(log_file: Path | None, code: str, detail: str) -> None:
    """Append the failure's full message to the run's local log, redacted (the board has only ``code``)."""
    if log_file is None:
        return
    clean = Redactor.from_environment().text(detail)
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with log_file.open("a", encoding="utf-8") as log:
            log.write(f"\n=== {iso_utc(time.time())} failure {code}: {clean}\n")
    except OSError:  # the log is a convenience; the board's record stands without it
        pass


#: ``--model_args`` keys that change how fast or where a model runs, never its answers: left out of
#: the cache key so that e.g. a new batch size still reuses the cache. Every other key is in it (an
#: unknown key starts a fresh cache rather than risk answers of another model).
NEUTRAL_MODEL_ARGS = frozenset(
    {
        "batch_size",
        "max_batch_size",
        "device",
        "device_map",
        "parallelize",
        "num_concurrent",
        "max_retries",
        "timeout",
        "gpu_memory_utilization",
        "tensor_parallel_size",
        "data_parallel_size",
        "swap_space",
        "verbose",
        "logits_cache",
    }
)


def cache_key(identity: ModelIdentity, model_args: str | Mapping[str, Any] | None) -> str:
    """SHA-256 of everything about a model that changes its answers to the same request text.

    lm-eval's request cache (``--use_cache``) is keyed by the request alone, so the file must belong
    to one model. The key is the model's **private** identity: backend, the full revision
    or checksum, precision and every ``--model_args`` entry as given (``model_args``: the model
    list's, not the public projection of ``identity``, which drops e.g. a gateway's deployment path),
    other than :data:`NEUTRAL_MODEL_ARGS` and key-like arguments (a rotated key keeps the cache); a
    credential of this process in a value is replaced by its name first. Only the hash is written (the
    file name), never the arguments. (The chat template and system instruction need not be in it:
    they are part of every request's text.)
    """
    clean = Redactor.from_environment(patterns=False)  # literal only: two gateway tokens stay two
    args = {
        key: clean.text(str(value))
        for key, value in parse_model_args(model_args).items()
        if key not in NEUTRAL_MODEL_ARGS and not is_key_name(key)  # a rotated key keeps the cache
    }
    return sha256_hex(
        {
            "backend": identity.backend,
            "revision": identity.revision,
            "precision": identity.precision,
            "model_args": args,
        }
    )


def cache_name(spec: ModelSpec, identity: ModelIdentity) -> str:
    """``<name slug>-<revision, readable prefix>-<first 16 hex of cache_key>``: the request cache of one model.

    The readable part is only for people; the hash of the private identity decides
    (:func:`cache_key` of ``spec.model_args``), so revisions sharing a prefix (``release-2024-01-a`` /
    ``-b``), a change of precision or one entry pointed at another gateway path get different caches.
    """
    revision = re.sub(r"[^A-Za-z0-9._-]+", "-", identity.revision).strip("-.")[:24] or "rev"
    return f"{slug(spec.name)}-{revision}-{cache_key(identity, spec.model_args)[:16]}"


@dataclass(frozen=True)
class RunSettings:
    """What every model of one build is run with (:func:`.nightly.build` makes it once per build).

    Attributes:
        night: The build's night (``YYYY-MM-DD``): the rows' ``night`` and the runs' folder.
        out: The leaderboard folder; lm-eval writes to ``out/runs/<night>/<model slug>``.
        cache_dir: The folder of lm-eval's request caches (one file per model identity).
        lm_eval: The ``lm_eval`` executable.
        bootstrap: Interval parameters of the rows.
        embedded_sha: Resolves an embedded model's GGUF sha256 (injectable for tests).
        build_id: Names this build (recorded in every shard's results, so a merge refuses a mix).
        credentials: The driver's credential variables (:data:`~logic_consistency.credentials.KEY_VARIABLES`),
            handed to every unit: a Ray worker's ``lm_eval`` gets them, not its node's.
    """

    night: str
    out: Path
    cache_dir: Path
    lm_eval: str
    bootstrap: BootstrapSettings
    embedded_sha: Callable[[str], str] = embedded_sha_subprocess
    build_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)


def identify_spec(spec: ModelSpec, settings: RunSettings) -> ModelIdentity:
    """The model's identity from its model-list entry (raises what :func:`~..board.modelid.identify` raises)."""
    return identify(
        spec.backend,
        spec.model_args,
        name=spec.name,
        revision=spec.revision,
        precision=spec.precision,
        embedded_sha=settings.embedded_sha,
        public_endpoint=spec.public_endpoint,
    )


def no_metric_defined(row: Mapping[str, Any]) -> bool:
    """Whether no task or group of ``row`` has a metric with a score (counts are not metrics).

    lm-eval drops a metric whose aggregate is undefined (NaN) from its results, so a run in which
    every reading was bad yields a row of tasks without metrics: a failure on the board, not a success.
    """
    return not any(entry.get("metrics") for entry in row.get("tasks", {}).values())
