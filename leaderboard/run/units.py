"""Units of work of the nightly build: a model's whole run, or one shard of it, and their results.

A model with ``shards: N`` (model list or ``--shards``) runs as ``N`` units, each an ordinary
``lm_eval`` process with ``LOGIC_CONSISTENCY_SHARD=i/N`` (:mod:`logic_consistency.harness_ext.shards.shard`:
shard ``i`` evaluates every task's documents ``i, i+N, ...`` after ``--limit`` chose them), its own
request cache (``<cache>-shard<i>of<N>``) and its own folder ``runs/<night>/<model>/shard-<i>-of-<N>``.
When every shard has succeeded, :mod:`logic_consistency.harness_ext.shards.merge` (a subprocess that
never loads the model) recomputes every score over their samples' union into ``.../merged``. A shard that
fails keeps the model off tonight's board; the failure names the shard.

Every executor (:mod:`.executor`) runs a model the same way: :func:`plan_model` (identity and
units), :func:`execute` per unit (in this process, or on a Ray worker, which then returns the files
it wrote: the board needs no shared file system) and :func:`finish_model` on the driver, which
stores, redacts, merges and ingests.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.common import RESULTS_PATTERN, find_files
from logic_consistency.credentials import KEY_VARIABLES, Redactor
from logic_consistency.harness_ext.jobs.processes import run_captured
from logic_consistency.harness_ext.publish import failure_facts
from logic_consistency.harness_ext.publish.lm_eval_command import SHARD_METRICS_FILE, LmEvalCommand, child_environment
from logic_consistency.harness_ext.shards.shard import Shard
from logic_consistency.outputs import atomic_write

from ..board.ingest import ingest_results
from ..board.modelid import ModelIdentity, slug
from .modellist import ModelSpec
from .placement import capped_shards
from .runner import (
    RUNS_DIR,
    RunOutcome,
    RunSettings,
    cache_name,
    failure_record,
    identify_spec,
    lm_eval_run,
    no_metric_defined,
    run_logged,
    scrub_outputs,
)

__all__ = [
    "ModelRun",
    "UnitJob",
    "UnitResult",
    "cap_shards",
    "documents_subprocess",
    "execute",
    "finish_model",
    "plan_model",
    "run_dir",
]

#: The per-shard metrics file (JSON, never pickle) in a shard's folder.
METRICS_FILE = SHARD_METRICS_FILE
LOG_FILE = "lm_eval.log"
MERGE_LOG = "merge.log"
MERGED_DIR = "merged"


@dataclass(frozen=True)
class UnitJob:
    """One ``lm_eval`` process of a model's run (picklable: it may run on a Ray worker).

    Attributes:
        spec: The model.
        lm_eval: The ``lm_eval`` executable (the same path on every node).
        cache_path: The unit's request cache (lm-eval adds ``_rank0.db``).
        shard: The unit's shard, or ``None`` for the whole run.
        output_dir: Where ``lm_eval`` writes; ``None``: a temporary folder whose files are returned.
        env: What the unit's ``lm_eval`` gets over its node's environment: the model list's ``env``
            and the driver's credential variables (in memory only; never printed: ``repr=False``).
        build_id: The build this unit belongs to (recorded in a shard's results; the merge checks it).
    """

    spec: ModelSpec
    lm_eval: str
    cache_path: str
    shard: Shard | None = None
    output_dir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    build_id: str = ""

    @property
    def label(self) -> str:
        """``name`` or ``name shard i/N`` (in messages and failures)."""
        return self.spec.name if self.shard is None else f"{self.spec.name} shard {self.shard}"

    @property
    def folder(self) -> str:
        """The unit's folder under the model's run folder (``""`` for the whole run)."""
        return "" if self.shard is None else self.shard.folder

    def lm_eval_run(self, out: Path) -> LmEvalCommand:
        """The unit's ``lm_eval`` run writing into ``out``: its command line, the line its log shows and its
        environment (the node's, then :attr:`env`, then its shard's switches: a whole run never inherits a
        shard left in the build's environment, which would publish a fraction of the documents as the row)."""
        return lm_eval_run(self.spec, lm_eval=self.lm_eval, output_path=out, cache_path=Path(self.cache_path),
                           shard=self.shard, build_id=self.build_id, env=self.env)  # fmt: skip


@dataclass(frozen=True)
class UnitResult:
    """How a unit ended: exit status, stderr tail, and the results file it wrote (relative path).

    ``files`` holds every file it wrote (relative path -> bytes) when it ran in a temporary folder;
    ``message`` overrides the failure message (a Ray task that died) and ``code`` names it on the board
    (:mod:`..board.failures`; default ``worker_lost``); ``node`` is the Ray node it ran on. ``facts``: what its
    ``lm_eval`` recorded of the exception it ended with (``publish/failure_facts.py``), never read from its output.
    """

    job: UnitJob
    returncode: int | None
    timed_out: bool
    stderr_tail: str
    seconds: float
    results_file: str | None
    files: dict[str, bytes] = field(default_factory=dict)
    message: str | None = None
    node: str | None = None
    code: str | None = None
    facts: failure_facts.FailureFacts | None = None

    @property
    def error(self) -> str | None:
        """Why the unit failed, or ``None``."""
        if self.message is not None:
            return self.message
        if self.timed_out:
            return f"timed out after {self.job.spec.timeout:g} s; stopped"
        if self.returncode != 0:
            cache = self.facts is not None and self.facts.request_cache and self.facts.message
            return cache or f"lm_eval exited with status {self.returncode}"
        if self.results_file is None:
            return "lm_eval exited 0 but wrote no results_*.json"
        return None

    def failure(self) -> tuple[str, dict[str, Any]] | None:
        """Why the unit failed as the board records it: a code and its closed-vocabulary fields, or ``None``."""
        if self.error is None:
            return None
        shard = None if self.job.shard is None else str(self.job.shard)
        if self.message is not None:
            code = self.code or "worker_lost"
            return code, {"shard": shard, "field": "env" if code == "missing_credential" else None}
        if self.timed_out:
            return "timeout", {"shard": shard, "field": "timeout"}
        if self.returncode != 0:
            code, extra = self._exit_failure()
            return code, {"shard": shard, **extra}
        return "no_results", {"shard": shard, "returncode": self.returncode}

    def _exit_failure(self) -> tuple[str, dict[str, Any]]:
        """What ``lm_eval``'s non-zero exit was, from the facts its process recorded, never from its output (an endpoint's
        words): the suite's cache error, an HTTP status the backend received, or another failure (no record: killed)."""
        facts = self.facts
        if facts is None:
            return "lm_eval_failed", {"returncode": self.returncode}
        code = "request_cache" if facts.request_cache else "lm_eval_failed"
        if code == "lm_eval_failed" and facts.http_status is not None:
            code = "endpoint_http_error"
        return code, {"returncode": self.returncode, "http_status": facts.http_status, "error_class": facts.error_class}


def _results_written(folder: Path, before: dict[Path, float]) -> str | None:
    written = [p for p in find_files(folder, RESULTS_PATTERN) if p not in before or p.stat().st_mtime > before[p]]
    return str(max(written, key=lambda p: p.stat().st_mtime).relative_to(folder)) if written else None


#: Backends of hosted APIs that send every request with a key: without it, every call is refused
#: (the variable each reads: :data:`~logic_consistency.credentials.KEY_VARIABLES`). The
#: OpenAI-compatible ``lc-chat`` and ``local-*`` backends send one only when it is set.
KEY_REQUIRED = frozenset(
    {"openai-completions", "openai-chat-completions", "anthropic-chat", "anthropic-chat-completions",
     "anthropic-completions", "azure-openai-chat-completions", "textsynth"}
)  # fmt: skip


def missing_credential(job: UnitJob, env: Mapping[str, str]) -> str | None:
    """Why the unit cannot call its backend (the key variable it reads is unset), or ``None``."""
    variable = KEY_VARIABLES.get(job.spec.backend)
    if job.spec.backend in KEY_REQUIRED and variable is not None and not env.get(variable, "").strip():
        return (
            f"backend {job.spec.backend} needs {variable}, which is set neither in the build's environment "
            "nor in the model's env (nor on the node); no model call was made"
        )
    return None


def _execute_in(job: UnitJob, out: Path, on_output: Callable[[str], None] | None) -> UnitResult:
    run = job.lm_eval_run(out)
    env = run.environment(os.environ)
    missing = missing_credential(job, env)
    if missing is not None:  # before lm_eval starts: never a call billed to no key, or to another's
        return UnitResult(job, None, False, "", 0.0, None, message=missing, code="missing_credential")
    before = {path: path.stat().st_mtime for path in find_files(out, RESULTS_PATTERN)} if out.is_dir() else {}
    record = out / failure_facts.FAILURE_FILE  # where the run records its failure (LmEvalCommand.switches)
    record.unlink(missing_ok=True)  # an earlier build's record in this folder is not this run's
    process = run_logged(  # the log's echo shows the public model arguments only (publish by allowlist)
        run.argv(), log_file=out / LOG_FILE, env=env, timeout=job.spec.timeout, on_output=on_output, shown=run.shown()
    )
    facts = failure_facts.read_failure(record) if process.returncode not in (0, None) else None
    written, tail = _results_written(out, before), process.stderr_tail
    return UnitResult(job, process.returncode, process.timed_out, tail, process.seconds, written, facts=facts)


def execute(job: UnitJob, *, on_output: Callable[[str], None] | None = None) -> UnitResult:
    """Run one unit; with ``output_dir=None`` in a temporary folder whose files the result carries.

    Raises:
        OSError: ``lm_eval`` cannot be started.
        KeyboardInterrupt: Re-raised after stopping the run (see :func:`~.runner.run_logged`).
    """
    if job.output_dir is not None:
        return _execute_in(job, Path(job.output_dir), on_output)
    with tempfile.TemporaryDirectory(prefix="lc-unit-") as folder:
        result = _execute_in(job, Path(folder), on_output)
        files = {str(p.relative_to(folder)): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}
    return dataclasses.replace(result, files=files)


def run_dir(spec: ModelSpec, settings: RunSettings) -> Path:
    """``out/runs/<night>/<model slug>``."""
    return settings.out / RUNS_DIR / settings.night / slug(spec.name)


@dataclass
class ModelRun:
    """One model of the build once planned: its identity, its units and, as they end, their results."""

    spec: ModelSpec
    identity: ModelIdentity
    jobs: list[UnitJob]
    started: float
    since: float
    results: list[UnitResult] = field(default_factory=list)

    @property
    def done(self) -> bool:
        """Whether every unit has ended."""
        return len(self.results) == len(self.jobs)


def driver_environment(spec: ModelSpec, settings: RunSettings) -> dict[str, str]:
    """What a unit takes from the driver: the credential variables of the build, then the model's ``env``."""
    return {**settings.credentials, **spec.env}


#: Seconds the document count may take (it loads the tasks' data, as each ``lm_eval`` does).
COUNT_SECONDS = 600.0


def documents_subprocess(spec: ModelSpec) -> int:
    """The most documents one ``lm_eval`` run of ``spec`` evaluates of any task
    (:mod:`logic_consistency.harness_ext.shards.count`, in a subprocess with the model's ``env``).

    A ``--samples`` file (not a mapping) is not read: the count is then of ``limit`` alone, an upper bound.

    Raises:
        ValueError: The tasks cannot be loaded here (the last line of the error).
        subprocess.TimeoutExpired: Past :data:`COUNT_SECONDS` (the subprocess is stopped).
    """
    options = spec.lm_eval_options
    samples = options.get("samples")
    request = {
        "tasks": [name.strip() for name in spec.tasks.split(",") if name.strip()],
        "metadata": spec.metadata,
        "limit": spec.limit,
        "samples": samples if isinstance(samples, dict) else None,
        "include_path": options.get("include_path"),
    }
    env = child_environment(os.environ, spec.env)  # no shard: the count is of the whole run's documents
    command = [sys.executable, "-m", "logic_consistency.harness_ext.shards.count", json.dumps(request)]
    completed = run_captured(command, env=env, timeout=COUNT_SECONDS)
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines or not lines[-1].isdigit():
        errors = completed.stderr.strip().splitlines()
        raise ValueError(errors[-1] if errors else f"exit status {completed.returncode}, no count")
    return int(lines[-1])


def cap_shards(
    spec: ModelSpec,
    log: Callable[[str], None],
    known: dict[str, int] | None = None,
    count: Callable[[ModelSpec], int] = documents_subprocess,
) -> ModelSpec:
    """``spec`` with no more shards than the most documents any of its tasks evaluates (``count``), so
    that no unit starts ``lm_eval`` for no document; a note says so. When they cannot be counted here
    (e.g. the data only on a Ray cluster's nodes), a warning, and only ``limit`` caps them.

    ``known``: counts already made in this build (models with the same tasks, options and ``env``
    are counted once).
    """
    if spec.shards == 1:
        return spec
    key = json.dumps(
        [spec.tasks, spec.metadata, spec.limit, spec.env, spec.lm_eval_options], sort_keys=True, default=repr
    )
    known = {} if known is None else known
    try:
        documents = known[key] if key in known else known.setdefault(key, count(spec))
        why = f"its tasks have at most {documents} documents{'' if spec.limit is None else f' under limit {spec.limit:g}'}"
    except (ValueError, OSError, subprocess.TimeoutExpired) as error:
        documents = capped_shards(spec.shards, spec.limit)
        log(f"warning: {spec.name}: cannot count its documents here ({error}); only its limit caps its shards")
        why = f"limit {spec.limit:g} leaves no document to the others"
    shards = max(1, min(spec.shards, documents))
    if shards == spec.shards:
        return spec
    log(
        f"note: {spec.name}: shards {spec.shards} capped to {shards}: {why} (a shard past them would start lm_eval for none)"
    )
    return dataclasses.replace(spec, shards=shards)


def plan_model(spec: ModelSpec, settings: RunSettings, *, local: bool) -> ModelRun | RunOutcome:
    """The model's identity and units (one, or ``spec.shards``, each with its own cache), or its failure.

    ``local``: the units write straight into the run folder; else into a temporary folder, returned.
    """
    started, since = time.monotonic(), time.time() - 1
    try:
        identity = identify_spec(spec, settings)
    except (ValueError, OSError, KeyError, IndexError, ImportError) as error:
        log_file = run_dir(spec, settings) / LOG_FILE
        failure = failure_record(
            spec, settings.night, "identify", board=settings.out, detail=f"cannot identify the model: {error}",
            log_file=log_file, error_class=type(error).__name__,
        )  # fmt: skip
        return RunOutcome(spec, None, failure, time.monotonic() - started, log_file)
    cache = settings.cache_dir / cache_name(spec, identity)
    folder = run_dir(spec, settings)
    env = driver_environment(spec, settings)
    shards: list[Shard | None] = [None] if spec.shards == 1 else list(Shard.every(spec.shards))
    jobs = []
    for shard in shards:
        suffix = "" if shard is None else shard.cache_suffix
        job = UnitJob(spec, settings.lm_eval, f"{cache}{suffix}", shard, None, env, settings.build_id)
        jobs.append(dataclasses.replace(job, output_dir=str(folder / job.folder) if local else None))
    return ModelRun(spec, identity, jobs, started, since)


def _store(result: UnitResult, folder: Path) -> None:
    """Write the files a remote unit returned into its folder on the driver."""
    for relative, data in result.files.items():
        atomic_write(folder / relative, [data])


def _merge(model: ModelRun, folder: Path) -> Path:
    """Merge the shards in a subprocess (lm-eval and the tasks, no model); the merged results file."""
    spec = model.spec
    shards = [
        [str(folder / r.job.folder / str(r.results_file)), str(folder / r.job.folder / METRICS_FILE)]
        for r in model.results
    ]
    merge_spec = {
        "shards": shards,
        "out": str(folder / MERGED_DIR),
        "tasks": spec.tasks,
        "model_args": spec.model_args,
        "metadata": spec.metadata,
    }
    spec_file = atomic_write(folder / "merge.json", [json.dumps(merge_spec, indent=1).encode()])
    command = [sys.executable, "-m", "logic_consistency.harness_ext.shards.merge", str(spec_file)]
    process = run_logged(command, log_file=folder / MERGE_LOG, env=child_environment(os.environ, spec.env))
    if process.returncode != 0:
        raise ValueError(f"merging the shards failed (status {process.returncode}): {process.stderr_tail[-500:]}")
    written = find_files(folder / MERGED_DIR, RESULTS_PATTERN)
    return max(written, key=lambda path: path.stat().st_mtime)


def _first_failure(model: ModelRun) -> tuple[str, str, dict[str, Any]] | None:
    """The first failed unit's code, message (naming its shard) and closed-vocabulary fields, or ``None``."""
    for result in model.results:
        if (why := result.failure()) is not None:
            prefix = "" if result.job.shard is None else f"{result.job.label}: "
            return why[0], f"{prefix}{result.error}", why[1]
    return None


def finish_model(model: ModelRun, settings: RunSettings) -> RunOutcome:
    """A model's outcome once its units have ended, on the driver: the one place a run becomes a row.

    Stores what remote units returned, redacts every file kept under the run folder
    (:func:`~.runner.scrub_outputs`: the credential variables of the build and of the model's
    ``env``), names the first failed unit, merges the shards, ingests, and refuses a row with no metric.
    """
    spec, folder = model.spec, run_dir(model.spec, settings)
    log_file = folder / (LOG_FILE if spec.shards == 1 else MERGE_LOG)
    redactor = Redactor.from_environment({**os.environ, **driver_environment(spec, settings)})
    model.results.sort(key=lambda result: result.job.shard.index if result.job.shard is not None else 0)
    notes: list[str] = []  # a file the redaction rewrote: said in the build's log

    def failed(code: str, detail: str, **error: Any) -> RunOutcome:
        failure = failure_record(
            spec, settings.night, code, board=settings.out, detail=detail, log_file=log_file, **error
        )
        return RunOutcome(spec, None, failure, time.monotonic() - model.started, log_file, tuple(notes))

    for result in model.results:
        _store(result, folder / result.job.folder)
    notes += scrub_outputs(folder, redactor, since=model.since)
    if (first := _first_failure(model)) is not None:
        return failed(first[0], first[1], **first[2])
    try:
        if spec.shards == 1:
            newest = folder / str(model.results[0].results_file)
        else:
            try:
                newest = _merge(model, folder)
            except (ValueError, FileNotFoundError, OSError) as error:
                return failed("merge_failed", str(error), error_class=type(error).__name__)
            notes += scrub_outputs(folder, redactor, since=model.since)
        row = ingest_results(newest, identity=model.identity, night=settings.night, bootstrap=settings.bootstrap)
    except (ValueError, FileNotFoundError, OSError) as error:
        return failed("unreadable_results", f"unreadable results: {error}", error_class=type(error).__name__)
    if no_metric_defined(row):
        detail = f"no metric is defined in any task of {newest.name} (every reading undefined): nothing to rank"
        return failed("no_metric", detail)
    return RunOutcome(spec, row, None, time.monotonic() - model.started, log_file, tuple(notes))
