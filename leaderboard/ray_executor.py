"""``leaderboard build --executor ray``: every unit of the nightly build is one Ray task.

A unit is a model's whole run, or one of its shards (:mod:`.units`). Each Ray task asks for the
model's ``resources``, runs ``lm_eval`` in a temporary folder on its node and returns every file it
wrote (only the driver writes the runs folder, the board, the history and the page, under the build
lock); it keeps its own request cache, is retried ``--retries`` times (default 2) when its worker
dies or ``lm_eval`` fails, and holds ``num_concurrent`` slots of its endpoint's ``api_limits``
budget through one named actor per endpoint (:class:`EndpointBudget`) granting time-limited leases,
so a killed worker's slots come back.

Ctrl-C or SIGTERM on the driver cancels every task (``ray.cancel(force=True)``; their ``lm_eval``
dies with its parent, see :func:`~.runner.run_logged`) and shuts down a Ray it started itself. Ray
is imported only here, only when ``--executor ray`` is chosen. See docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .modelid import ModelIdentity
from .modellist import ModelSpec
from .runner import RunOutcome, RunSettings, _failure
from .units import UnitJob, UnitResult, execute, finish_model, identify_spec, model_jobs, run_dir

__all__ = ["DEFAULT_RETRIES", "NAMESPACE", "EndpointBudget", "RayExecutor", "RayMissingError", "require_ray"]

INSTALL_HINT = "from a clone: pip install -e '.[ray]' (a published release: pip install \"logic-consistency[ray]\")"
NAMESPACE = "logic-consistency"
DEFAULT_RETRIES = 2
#: Seconds an endpoint lease lasts without renewal (a dead holder's slots come back after it).
LEASE_SECONDS = 30.0


class RayMissingError(ModuleNotFoundError):
    """``--executor ray`` without Ray installed."""


def require_ray() -> Any:
    """Import Ray, or raise :class:`RayMissingError` with the install line."""
    try:
        import ray
    except ImportError as error:
        raise RayMissingError(f"--executor ray needs Ray, which is not installed ({error}): {INSTALL_HINT}") from None
    return ray


class EndpointBudget:
    """A cluster-wide counting semaphore of one API endpoint, with leases (a Ray named actor)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.leases: dict[str, tuple[int, float]] = {}
        self.peak = 0

    def _expire(self) -> None:
        now = time.monotonic()
        self.leases = {token: lease for token, lease in self.leases.items() if lease[1] > now}

    def acquire(self, token: str, slots: int, ttl: float) -> bool:
        """Take ``slots`` for ``ttl`` seconds if they are free."""
        self._expire()
        if sum(slots for slots, _ in self.leases.values()) + slots > self.limit:
            return False
        self.leases[token] = (slots, time.monotonic() + ttl)
        self.peak = max(self.peak, sum(slots for slots, _ in self.leases.values()))
        return True

    def renew(self, token: str, ttl: float) -> None:
        """Extend a lease."""
        if token in self.leases:
            self.leases[token] = (self.leases[token][0], time.monotonic() + ttl)

    def release(self, token: str) -> None:
        """Give a lease back."""
        self.leases.pop(token, None)

    def usage(self) -> tuple[int, int]:
        """Slots in use now, and the most ever in use at once."""
        self._expire()
        return sum(slots for slots, _ in self.leases.values()), self.peak


@contextlib.contextmanager
def _lease(budget: Any, slots: int) -> Iterator[None]:
    """Hold ``slots`` of ``budget`` (an :class:`EndpointBudget` actor handle, or ``None``) meanwhile."""
    if budget is None:
        yield
        return
    import ray

    token = uuid.uuid4().hex
    while not ray.get(budget.acquire.remote(token, slots, LEASE_SECONDS)):
        time.sleep(0.2)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(LEASE_SECONDS / 3):
            budget.renew.remote(token, LEASE_SECONDS)

    renewer = threading.Thread(target=renew, daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        ray.get(budget.release.remote(token))


@contextlib.contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    """Keep the build's SIGTERM, SIGHUP and SIGINT handlers across ``ray.init``.

    Ray's core worker installs its own fatal-signal handler for SIGTERM in the driver (it logs and
    exits with status 1), which would bypass the build's stop path: cancel every task, write nothing,
    exit 143. Re-installing the Python handlers restores that path.
    """
    names = ("SIGTERM", "SIGHUP", "SIGINT")
    kept = {sig: signal.getsignal(sig) for sig in (getattr(signal, name) for name in names)}
    try:
        yield
    finally:
        if threading.current_thread() is threading.main_thread():  # signal.signal works only there
            for sig, handler in kept.items():
                if handler is not None:
                    signal.signal(sig, handler)


class UnitFailedError(RuntimeError):
    """A unit's ``lm_eval`` failed; raised in the Ray task so that Ray retries it."""

    def __init__(self, result: UnitResult) -> None:
        super().__init__(result)
        self.result = result

    def __str__(self) -> str:
        return f"{self.result.job.label}: {self.result.error}"


def run_unit(job: UnitJob, budget: Any) -> UnitResult:
    """The Ray task: run one unit under its endpoint budget; a failure (not a timeout) raises to retry."""
    import ray

    with _lease(budget, job.spec.slots):
        result = dataclasses.replace(execute(job), node=ray.get_runtime_context().get_node_id())
    if result.error is not None and not result.timed_out:
        raise UnitFailedError(result)
    return result


def _task_options(spec: ModelSpec, retries: int) -> dict[str, Any]:
    resources = spec.resources
    options: dict[str, Any] = {
        "num_cpus": resources.get("num_cpus", 1.0),
        "max_retries": retries,
        "retry_exceptions": [UnitFailedError],
    }
    for key in ("num_gpus", "memory"):
        if key in resources:
            options[key] = resources[key]
    if resources.get("custom"):
        options["resources"] = dict(resources["custom"])
    return options


@dataclass
class _Model:
    spec: ModelSpec
    identity: ModelIdentity
    units: int
    started: float
    results: list[UnitResult] = field(default_factory=list)


@dataclass
class RayExecutor:
    """Runs the build's units as Ray tasks (see the module docstring).

    Attributes:
        address: ``None``: start a local Ray; ``"auto"`` or ``"ray://host:port"``: join a cluster.
        retries: Retries per unit (worker death or ``lm_eval`` failure).
    """

    address: str | None = None
    retries: int = DEFAULT_RETRIES
    init_options: dict[str, Any] = field(default_factory=dict)

    def run(
        self, specs: Sequence[ModelSpec], settings: RunSettings, *, log: Callable[[str], None] = lambda _: None
    ) -> list[RunOutcome]:
        """Run every model's units on the cluster; one outcome per model, in ``specs`` order."""
        ray = require_ray()
        started_here = not ray.is_initialized()
        if started_here:
            with _signal_handlers_kept():
                ray.init(
                    address=self.address,
                    namespace=NAMESPACE,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                    **self.init_options,
                )
        try:
            return self._run(ray, specs, settings, log)
        finally:
            if started_here:
                ray.shutdown()

    def _budget(self, ray: Any, spec: ModelSpec) -> Any:
        if spec.endpoint is None or spec.api_limit is None:
            return None
        actor = ray.remote(num_cpus=0)(EndpointBudget)
        return actor.options(name=f"api:{spec.endpoint}", namespace=NAMESPACE, get_if_exists=True).remote(
            spec.api_limit
        )

    def _submit(
        self, ray: Any, specs: Sequence[ModelSpec], settings: RunSettings, outcomes: dict[str, RunOutcome]
    ) -> tuple[dict[Any, tuple[_Model, UnitJob]], dict[str, _Model]]:
        task = ray.remote(run_unit)
        pending: dict[Any, tuple[_Model, UnitJob]] = {}
        models: dict[str, _Model] = {}
        for spec in specs:
            started = time.monotonic()
            try:
                identity = identify_spec(spec, settings)
            except (ValueError, OSError, KeyError, IndexError, ImportError) as error:
                failure = _failure(spec, settings.night, f"cannot identify the model: {error}")
                outcomes[spec.name] = RunOutcome(spec, None, failure, 0.0, run_dir(spec, settings))
                continue
            jobs = model_jobs(spec, settings, identity, local=False)
            model = models[spec.name] = _Model(spec, identity, len(jobs), started)
            budget = self._budget(ray, spec)
            for job in jobs:
                pending[task.options(**_task_options(spec, self.retries)).remote(job, budget)] = (model, job)
        return pending, models

    def _run(
        self, ray: Any, specs: Sequence[ModelSpec], settings: RunSettings, log: Callable[[str], None]
    ) -> list[RunOutcome]:
        outcomes: dict[str, RunOutcome] = {}
        pending, _models = self._submit(ray, specs, settings, outcomes)
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    model, job = pending.pop(ref)
                    model.results.append(_result(ray, ref, job))
                    if len(model.results) == model.units:
                        outcomes[model.spec.name] = _finish(model, settings, log)
        except BaseException as error:
            for ref in pending:
                ray.cancel(ref, force=True)
            # a stop signal's exception raised inside ray.wait comes out wrapped in a SystemError
            # ("returned a result with an exception set"): re-raise the stop itself
            stop = error.__cause__
            if isinstance(error, SystemError) and stop is not None and not isinstance(stop, Exception):
                raise stop from None
            raise
        return [outcomes[spec.name] for spec in specs]


def _finish(model: _Model, settings: RunSettings, log: Callable[[str], None]) -> RunOutcome:
    """Every unit of ``model`` has ended: its outcome (merged and ingested on the driver), logged."""
    model.results.sort(key=lambda result: result.job.shard or (0, 1))
    outcome = finish_model(model.spec, settings, model.identity, model.results, model.started)
    status = "ok" if outcome.failure is None else f"FAILED: {outcome.failure['error']['message']}"
    nodes = sorted({str(result.node) for result in model.results if result.node})
    log(f"[{settings.night}] {model.spec.name}: {status} ({outcome.seconds:.0f} s; ray nodes {nodes})")
    return outcome


def _result(ray: Any, ref: Any, job: UnitJob) -> UnitResult:
    """The unit's result; a task that failed after its retries becomes a failed result naming why."""
    try:
        result: UnitResult = ray.get(ref)
        return result
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, UnitFailedError):
            return cause.result
        message = f"Ray task failed: {type(cause or error).__name__}: {str(cause or error).strip()[-300:]}"
    except ray.exceptions.RayError as error:
        message = f"Ray task failed: {type(error).__name__}: {str(error).strip()[-300:]}"
    return UnitResult(job, None, False, "", 0.0, None, message=message)
