"""Who runs the build's units: the board's side of the suite's one executor protocol
(:mod:`logic_consistency.harness_ext.jobs.executor`, chosen by its ``executor_for``).

Every executor runs a model the same way (:mod:`.units`): :func:`~.units.plan_model`, then each unit
as a :class:`~logic_consistency.harness_ext.jobs.executor.Unit` of the executor (:func:`run_unit`: its
``lm_eval`` under its endpoint budget), then :func:`~.units.finish_model` on the driver (store, redact,
merge, ingest). What is the board's stays here: a unit's failure codes (:func:`failed_unit`,
:func:`start_failed`), its placement (:mod:`.placement`: the model list's ``resources``, checked
against the cluster before any unit runs) and its endpoint budget (:mod:`.endpoint_budget`).
:func:`build_executor` chooses the peer in one place: the local one runs one model after another, so
that each model's time is its own (with its progress bar); the Ray one every unit of the build at once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from logic_consistency.harness_ext.jobs.executor import Executor as UnitExecutor
from logic_consistency.harness_ext.jobs.executor import Placement, Unit, UnitError, executor_for
from logic_consistency.harness_ext.jobs.ray_session import DEFAULT_RETRIES

from .endpoint_budget import EndpointBudget, lease
from .modellist import ModelSpec
from .placement import check_feasible, unit_resources
from .runner import RunOutcome, RunSettings, failure_record
from .units import LOG_FILE, ModelRun, UnitJob, UnitResult, execute, finish_model, plan_model

__all__ = ["BuildExecutor", "UnitFailedError", "build_executor", "outcome_line", "run_unit"]


class UnitFailedError(RuntimeError):
    """A unit's ``lm_eval`` failed; raised in the unit so that Ray retries it."""

    def __init__(self, result: UnitResult) -> None:
        super().__init__(result)
        self.result = result

    def __str__(self) -> str:
        return f"{self.result.job.label}: {self.result.error}"


class StartFailed(Exception):  # noqa: N818 - the outcome it carries is the model's, not an error of the build
    """Here, a unit's ``lm_eval`` could not start: the model's outcome, its other units not run."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__(outcome.spec.name)
        self.outcome = outcome


def run_unit(
    job: UnitJob, budget: Any, placement: Placement, *, on_output: Callable[[str], None] | None = None
) -> UnitResult:
    """A unit's work: its ``lm_eval`` under its endpoint budget (``None``: none), the node it ran on
    recorded; a failure (not a timeout) raises :class:`UnitFailedError`, so that Ray retries it."""
    with lease(budget, job.spec.slots):
        result = dataclasses.replace(execute(job, on_output=on_output), node=placement.get("node"))
    if result.error is not None and not result.timed_out:
        raise UnitFailedError(result)
    return result


def failed_unit(job: UnitJob, error: UnitError) -> UnitResult:
    """A failed unit's result: the last try's, or (its worker lost, or an error of the unit's own) one
    naming why, with the code ``worker_lost``."""
    if isinstance(error.cause, UnitFailedError):
        return error.cause.result
    cause = error.cause
    message = f"Ray task failed: {type(cause).__name__}: {str(cause).strip()[-300:]}"
    return UnitResult(job, None, False, "", 0.0, None, message=message, code="worker_lost")


def start_failed(model: ModelRun, job: UnitJob, error: OSError, settings: RunSettings) -> RunOutcome:
    """The model's outcome when its unit's ``lm_eval`` cannot start here."""
    message = f"{job.label + ': ' if job.shard else ''}cannot start {job.lm_eval}: {error}"
    log_file = Path(str(job.output_dir)) / LOG_FILE
    failure = failure_record(
        model.spec, settings.night, "start_failed", board=settings.out, detail=message, log_file=log_file,
        error_class=type(error).__name__, shard=None if job.shard is None else str(job.shard),
    )  # fmt: skip
    return RunOutcome(model.spec, None, failure, time.monotonic() - model.started, log_file)


def outcome_line(outcome: RunOutcome, night: str, where: str) -> str:
    """The build's status line of one model."""
    error = outcome.failure["error"] if outcome.failure is not None else None
    status = "ok" if error is None else f"FAILED [{error['code']}]: {error['message']}"
    return f"[{night}] {outcome.spec.name}: {status} ({outcome.seconds:.0f} s; {where})"


def _where(model: ModelRun, outcome: RunOutcome, remote: bool) -> str:
    if not remote:
        return f"log {outcome.log_file}"
    return f"ray nodes {sorted({str(result.node) for result in model.results if result.node})}"


@dataclasses.dataclass
class _Batch:
    """Some models of the build, planned, as units of the executor; each finished as its last unit ends."""

    units: UnitExecutor
    settings: RunSettings
    log: Callable[[str], None]
    outcomes: dict[str, RunOutcome]
    owners: list[tuple[ModelRun, UnitJob]] = dataclasses.field(default_factory=list)

    def units_of(self, model: ModelRun, on_output: Callable[[str], None] | None) -> list[Unit[UnitResult]]:
        """The model's units, each holding its endpoint's budget (one named object per endpoint)."""
        spec, budget = model.spec, None
        if spec.endpoint is not None and spec.api_limit is not None:
            budget = self.units.shared(EndpointBudget, f"api:{spec.endpoint}", spec.api_limit)
        self.owners += [(model, job) for job in model.jobs]
        resources = unit_resources(spec.resources)
        return [
            Unit(job.label, partial(run_unit, job, budget, on_output=on_output), resources, (UnitFailedError,))
            for job in model.jobs
        ]

    def ended(self, index: int, result: UnitResult) -> None:
        model = self.owners[index][0]
        model.results.append(result)
        if model.done:
            outcome = finish_model(model, self.settings)
            for note in outcome.notes:
                self.log(note)
            self.log(outcome_line(outcome, self.settings.night, _where(model, outcome, self.units.remote)))
            self.outcomes[model.spec.name] = outcome

    def failed(self, index: int, error: UnitError) -> UnitResult:
        model, job = self.owners[index]
        if self.units.remote or isinstance(error.cause, UnitFailedError):
            return failed_unit(job, error)
        if isinstance(error.cause, OSError):  # here: the model ends now, its other units not run
            raise StartFailed(start_failed(model, job, error.cause, self.settings)) from error.cause
        raise error.cause  # a fault of the build itself, as before any executor

    def run(self, specs: Sequence[ModelSpec], on_output: Callable[[str], None] | None = None) -> None:
        """Plan ``specs`` and run their units to the end (``on_output``: each line a unit's ``lm_eval``
        writes, here only)."""
        self.owners = []  # the executor's unit indexes are this run's
        units: list[Unit[UnitResult]] = []
        for spec in specs:
            planned = plan_model(spec, self.settings, local=not self.units.remote)
            if isinstance(planned, RunOutcome):
                self.log(outcome_line(planned, self.settings.night, f"log {planned.log_file}"))
                self.outcomes[spec.name] = planned
                continue
            units += self.units_of(planned, on_output)
        try:
            self.units.run(units, ended=self.ended, failed=self.failed)
        except StartFailed as stopped:
            self.log(outcome_line(stopped.outcome, self.settings.night, f"log {stopped.outcome.log_file}"))
            self.outcomes[stopped.outcome.spec.name] = stopped.outcome


@dataclasses.dataclass
class BuildExecutor:
    """Runs every model of a build on ``units``, an executor of the one protocol (see the module docstring).
    What it adds is the build's: models planned and finished on the driver, one by one with a progress bar
    here, placement checked before any unit runs on Ray, each unit's endpoint budget and failure codes.

    Attributes:
        units: Where the units run (:func:`~logic_consistency.harness_ext.jobs.executor.executor_for`).
        progress: tqdm bar over models (``None``: only on a terminal).
    """

    units: UnitExecutor
    progress: bool | None = None

    def run(
        self, specs: Sequence[ModelSpec], settings: RunSettings, *, log: Callable[[str], None] = lambda _: None
    ) -> list[RunOutcome]:
        """One outcome per model of ``specs``, in that order; never raises for a failing model.

        Raises:
            KeyboardInterrupt, BuildStopped: A stop; every unit is stopped first.
            RayClusterError: On Ray, a bad or unreachable address, a unit no alive node can ever place
                (before any unit runs), or a head that died meanwhile.
        """
        outcomes: dict[str, RunOutcome] = {}
        batch = _Batch(self.units, settings, log, outcomes)
        with self.units.session():
            if self.units.remote:
                check_feasible(self.units.nodes(), specs)
                batch.run(specs)  # every unit of the build at once
                return [outcomes[spec.name] for spec in specs]
            self._one_by_one(batch, specs)
        return [outcomes[spec.name] for spec in specs]

    def _one_by_one(self, batch: _Batch, specs: Sequence[ModelSpec]) -> None:
        """Here: one model after another (its time its own), its ``lm_eval``'s last line on the bar."""
        disable = None if self.progress is None else not self.progress
        with tqdm(list(specs), desc=f"night {batch.settings.night}", unit="model", disable=disable) as bar:
            for spec in bar:
                bar.set_postfix_str(f"{spec.name}: starting", refresh=True)
                last = [0.0]

                def show(line: str, name: str = spec.name, last: list[float] = last) -> None:
                    now = time.monotonic()
                    if now - last[0] > 0.5:
                        last[0] = now
                        bar.set_postfix_str(f"{name}: {line.strip()[-60:]}", refresh=True)

                batch.run([spec], on_output=show)


def build_executor(
    kind: str = "local",
    *,
    address: str | None = None,
    retries: int = DEFAULT_RETRIES,
    init_options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> BuildExecutor:
    """The one place a build's executor is chosen (``leaderboard build --executor``, ``--ray-address``,
    ``--retries``): the peer named ``kind`` (:func:`~logic_consistency.harness_ext.jobs.executor.executor_for`)
    under a :class:`BuildExecutor`. ``local``: one model after another, a sharded model's shards one by one;
    ``ray``: every unit of the build at once (:mod:`.ray_executor`; Ray is imported only then).

    Raises:
        ValueError: An unknown ``kind``.
    """
    ray: dict[str, Any] = {}
    if kind != "local":  # deferred: Ray is an optional extra
        from .ray_executor import LOST_HEAD_ENDING, importer

        ray = {"address": address, "retries": retries, "job": "build", "ending": LOST_HEAD_ENDING,
               "init_options": dict(init_options or {}), "importer": importer}  # fmt: skip
    return BuildExecutor(executor_for(kind, **ray), progress)
