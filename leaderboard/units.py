"""Units of work of the nightly build: a model's whole run, or one shard of it, and their results.

A model with ``shards: N`` (model list or ``--shards``) runs as ``N`` units, each an ordinary
``lm_eval`` process with ``LOGIC_CONSISTENCY_SHARD=i/N`` (:mod:`logic_consistency.harness_ext.shards`:
shard ``i`` evaluates every task's documents ``i, i+N, ...`` after ``--limit`` chose them), its own
request cache (``<cache>-shard<i>of<N>``) and its own folder ``runs/<night>/<model>/shard-<i>-of-<N>``.
When every shard has succeeded, :mod:`logic_consistency.harness_ext.shard_merge` (in a subprocess:
it loads lm-eval and the tasks' data, never the model) recomputes every score over the union of
their samples into ``runs/<night>/<model>/merged``, which is ingested like any run. A shard that
fails keeps the model off tonight's board; the failure names the shard.

:func:`execute` runs one :class:`UnitJob` anywhere (this process, or a Ray worker, which then
returns the files it wrote: the board needs no shared file system). :func:`finish_model` turns a
model's unit results into its :class:`~.runner.RunOutcome` on the driver.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.common import RESULTS_PATTERN, find_files
from logic_consistency.harness_ext.shards import ENV_METRICS, ENV_SHARD
from logic_consistency.outputs import atomic_write

from .ingest import ingest_results
from .modelid import ModelIdentity, slug
from .modellist import ModelSpec
from .runner import (
    RUNS_DIR,
    RunOutcome,
    RunSettings,
    _failure,
    _known_error,
    cache_name,
    identify_spec,
    lm_eval_command,
    run_logged,
)

__all__ = ["UnitJob", "UnitResult", "execute", "finish_model", "identify_spec", "model_jobs", "run_sharded"]

#: The per-shard metrics file (pickle) in a shard's folder.
METRICS_FILE = "shard_metrics.pkl"
LOG_FILE = "lm_eval.log"
MERGED_DIR = "merged"


@dataclass(frozen=True)
class UnitJob:
    """One ``lm_eval`` process of a model's run (picklable: it may run on a Ray worker).

    Attributes:
        spec: The model.
        lm_eval: The ``lm_eval`` executable (the same path on every node).
        cache_path: The unit's request cache (lm-eval adds ``_rank0.db``).
        shard: ``(index, count)``, or ``None`` for the whole run.
        output_dir: Where ``lm_eval`` writes; ``None``: a temporary folder whose files are returned.
    """

    spec: ModelSpec
    lm_eval: str
    cache_path: str
    shard: tuple[int, int] | None = None
    output_dir: str | None = None

    @property
    def label(self) -> str:
        """``name`` or ``name shard i/N`` (in messages and failures)."""
        return self.spec.name if self.shard is None else f"{self.spec.name} shard {self.shard[0]}/{self.shard[1]}"

    @property
    def folder(self) -> str:
        """The unit's folder under the model's run folder (``""`` for the whole run)."""
        return "" if self.shard is None else f"shard-{self.shard[0]}-of-{self.shard[1]}"


@dataclass(frozen=True)
class UnitResult:
    """How a unit ended: exit status, stderr tail, and the results file it wrote (relative path).

    ``files`` holds every file it wrote (relative path -> bytes) when it ran in a temporary folder;
    ``message`` overrides the failure message (a Ray task that died); ``node`` is the Ray node it ran on.
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

    @property
    def error(self) -> str | None:
        """Why the unit failed, or ``None``."""
        if self.message is not None:
            return self.message
        if self.timed_out:
            return f"timed out after {self.job.spec.timeout:g} s; stopped"
        if self.returncode != 0:
            return _known_error(self.stderr_tail) or f"lm_eval exited with status {self.returncode}"
        if self.results_file is None:
            return "lm_eval exited 0 but wrote no results_*.json"
        return None


def _results_written(folder: Path, before: dict[Path, float]) -> str | None:
    written = [p for p in find_files(folder, RESULTS_PATTERN) if p not in before or p.stat().st_mtime > before[p]]
    return str(max(written, key=lambda p: p.stat().st_mtime).relative_to(folder)) if written else None


def _execute_in(job: UnitJob, out: Path, on_output: Callable[[str], None] | None) -> UnitResult:
    command = lm_eval_command(job.spec, lm_eval=job.lm_eval, output_path=out, cache_path=Path(job.cache_path))
    env = {**os.environ, **job.spec.env}
    if job.shard is not None:
        env[ENV_SHARD] = f"{job.shard[0]}/{job.shard[1]}"
        env[ENV_METRICS] = str(out / METRICS_FILE)
    before = {path: path.stat().st_mtime for path in find_files(out, RESULTS_PATTERN)} if out.is_dir() else {}
    process = run_logged(command, log_file=out / LOG_FILE, env=env, timeout=job.spec.timeout, on_output=on_output)
    return UnitResult(
        job, process.returncode, process.timed_out, process.stderr_tail, process.seconds, _results_written(out, before)
    )


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


def model_jobs(spec: ModelSpec, settings: RunSettings, identity: ModelIdentity, *, local: bool) -> list[UnitJob]:
    """The units of one model: the whole run, or its ``spec.shards`` shards (each with its own cache)."""
    cache = settings.cache_dir / cache_name(spec, identity)
    folder = run_dir(spec, settings)
    if spec.shards == 1:
        return [UnitJob(spec, settings.lm_eval, str(cache), None, str(folder) if local else None)]
    jobs = []
    for index in range(spec.shards):
        job = UnitJob(spec, settings.lm_eval, f"{cache}-shard{index}of{spec.shards}", (index, spec.shards))
        jobs.append(dataclasses.replace(job, output_dir=str(folder / job.folder) if local else None))
    return jobs


def _store(result: UnitResult, folder: Path) -> None:
    """Write the files a remote unit returned into its folder on the driver."""
    for relative, data in result.files.items():
        atomic_write(folder / relative, [data])


def _merge(spec: ModelSpec, folder: Path, results: Sequence[UnitResult]) -> Path:
    """Merge the shards in a subprocess (lm-eval and the tasks, no model); the merged results file."""
    shards = [
        [str(folder / r.job.folder / str(r.results_file)), str(folder / r.job.folder / METRICS_FILE)] for r in results
    ]
    merge_spec = {
        "shards": shards,
        "out": str(folder / MERGED_DIR),
        "tasks": spec.tasks,
        "model_args": spec.model_args,
        "metadata": spec.metadata,
    }
    spec_file = atomic_write(folder / "merge.json", [json.dumps(merge_spec, indent=1).encode()])
    command = [sys.executable, "-m", "logic_consistency.harness_ext.shard_merge", str(spec_file)]
    process = run_logged(command, log_file=folder / "merge.log", env={**os.environ, **spec.env})
    if process.returncode != 0:
        raise ValueError(f"merging the shards failed (status {process.returncode}): {process.stderr_tail[-500:]}")
    written = find_files(folder / MERGED_DIR, RESULTS_PATTERN)
    return max(written, key=lambda path: path.stat().st_mtime)


def finish_model(
    spec: ModelSpec, settings: RunSettings, identity: ModelIdentity, results: Sequence[UnitResult], started: float
) -> RunOutcome:
    """A model's outcome from its units' results (stored, merged if sharded, ingested), on the driver."""
    folder = run_dir(spec, settings)
    log_file = folder / LOG_FILE if spec.shards == 1 else folder / "merge.log"

    def failed(message: str, **kwargs: Any) -> RunOutcome:
        failure = _failure(spec, settings.night, message, log_file=log_file, **kwargs)
        return RunOutcome(spec, None, failure, time.monotonic() - started, log_file)

    for result in results:
        _store(result, folder / result.job.folder)
    for result in results:
        if result.error is not None:
            prefix = "" if result.job.shard is None else f"{result.job.label}: "
            return failed(prefix + result.error, returncode=result.returncode, stderr_tail=result.stderr_tail)
    try:
        if spec.shards == 1:
            newest = folder / str(results[0].results_file)
        else:
            newest = _merge(spec, folder, results)
        row = ingest_results(newest, identity=identity, night=settings.night, bootstrap=settings.bootstrap)
    except (ValueError, FileNotFoundError, OSError) as error:
        return failed(f"unreadable results: {error}", returncode=0)
    return RunOutcome(spec, row, None, time.monotonic() - started, log_file)


def run_sharded(
    spec: ModelSpec, settings: RunSettings, *, on_output: Callable[[str], None] | None = None
) -> RunOutcome:
    """Run a model's shards one after another in this process's machine, then merge and ingest."""
    started = time.monotonic()
    try:
        identity = identify_spec(spec, settings)
    except (ValueError, OSError, KeyError, IndexError, ImportError) as error:
        failure = _failure(spec, settings.night, f"cannot identify the model: {error}")
        return RunOutcome(spec, None, failure, time.monotonic() - started, run_dir(spec, settings) / LOG_FILE)
    results = []
    for job in model_jobs(spec, settings, identity, local=True):
        try:
            results.append(execute(job, on_output=on_output))
        except OSError as error:
            failure = _failure(spec, settings.night, f"{job.label}: cannot start {job.lm_eval}: {error}")
            return RunOutcome(spec, None, failure, time.monotonic() - started, Path(str(job.output_dir)) / LOG_FILE)
    return finish_model(spec, settings, identity, results, started)
