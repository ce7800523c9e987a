"""``leaderboard build --executor ray``: every unit of the nightly build is one Ray task.

A unit is a model's whole run, or one of its shards (:mod:`.units`). Each Ray task asks for the
model's ``resources``, runs ``lm_eval`` in a temporary folder on its node and returns every file it
wrote (only the driver writes the runs folder, the board, the history and the page, under the build
lock); it keeps its own request cache, is retried ``--retries`` times (default 2) when its worker
dies or ``lm_eval`` fails, and holds ``num_concurrent`` slots of its endpoint's ``api_limits``
budget through one named actor per endpoint (:class:`~.endpoint_budget.EndpointBudget`) granting time-limited leases,
so a killed worker's slots come back.

Ctrl-C or SIGTERM on the driver cancels every task (``ray.cancel(force=True)``; their ``lm_eval``
dies with its parent, see :func:`~.runner.run_logged`) and shuts down a Ray it started itself. Ray
is imported only here and in :mod:`.endpoint_budget`, only when ``--executor ray`` is chosen. See docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from .endpoint_budget import EndpointBudget, lease
from .executor import outcome_line
from .grpc_probe import not_grpc
from .modellist import ModelSpec
from .nightly import BuildStopped
from .runner import RunOutcome, RunSettings
from .units import ModelRun, UnitJob, UnitResult, execute, finish_model, plan_model

if TYPE_CHECKING:  # Ray is imported only when --executor ray is chosen
    from ray import ObjectRef
    from ray.actor import ActorHandle

    #: A unit's pending Ray task.
    UnitRef = ObjectRef[UnitResult]

__all__ = [
    "DEFAULT_RETRIES",
    "NAMESPACE",
    "HeadWatch",
    "RayClusterError",
    "RayExecutor",
    "RayMissingError",
    "check_address",
    "check_feasible",
    "check_reachable",
    "require_ray",
    "signal_handlers_kept",
    "stop_behind",
    "wait_all",
]

INSTALL_HINT = "from a clone: pip install -e '.[ray]' (a published release: pip install \"logic-consistency[ray]\")"
NAMESPACE = "logic-consistency"
DEFAULT_RETRIES = 2
T = TypeVar("T")


#: Seconds to reach a Ray head before ``ray.init`` (which would sit through its GCS time-outs).
CONNECT_SECONDS = 5.0
#: Ray client's default port (``ray://host`` without one).
CLIENT_PORT = 10001


#: Seconds between checks that the Ray head's GCS still answers; two failed checks in a row end the
#: build (else Ray's driver would end the process itself after 60 s, naming neither head nor address).
HEAD_CHECK_SECONDS = 5.0


class RayMissingError(ModuleNotFoundError):
    """``--executor ray`` without Ray installed."""


class RayClusterError(ValueError):
    """The Ray cluster cannot run the build: a bad or unreachable address, a unit no node can ever
    place, or a head that died (one line, naming the address, the model or the resource)."""


def check_address(address: str | None) -> str | None:
    """``--ray-address``: ``None`` (start a local Ray), ``auto``, ``host:port`` or ``ray://host[:port]``.

    Raises:
        RayClusterError: Anything else (an empty value too), naming it.
    """
    if address is None or address == "auto":
        return address
    _host_port(address)
    return address


def _host_port(address: str) -> tuple[str, int]:
    client = address.startswith("ray://")
    host, _, port = (address[len("ray://") :] if client else address).rpartition(":")
    if client and not port.isdigit():
        host, port = (host + ":" + port if host else port), str(CLIENT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
        raise RayClusterError(
            f"--ray-address {address!r}: expected auto, host:port (a Ray head's GCS, e.g. 10.0.0.1:6379) "
            "or ray://host[:port]"
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str | None, seconds: float = CONNECT_SECONDS) -> None:
    """Within ``seconds``, that a Ray head listens at ``address`` (``auto`` / ``None``: Ray's own lookup).

    Raises:
        RayClusterError: Nothing answers there, naming the address and why.
    """
    if address is None or address == "auto":
        return
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=seconds) as connection:
            reason = not_grpc(connection, seconds)  # a server that is no Ray head: ray.init would wait 14 min
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise RayClusterError(
            f"--ray-address {address!r}: no Ray head answers at {host}:{port} ({reason} within {seconds:g} s); "
            "start one (ray start --head) or give the head's address"
        ) from None
    if reason is not None:
        raise RayClusterError(
            f"--ray-address {address!r}: {host}:{port} is not a Ray head: {reason}; give the head's GCS "
            "address (ray start --head prints it) or ray://host:10001"
        )


def require_ray() -> ModuleType:
    """Import Ray, or raise :class:`RayMissingError` with the install line."""
    try:
        import ray
    except ImportError as error:
        raise RayMissingError(f"--executor ray needs Ray, which is not installed ({error}): {INSTALL_HINT}") from None
    return ray


def stop_behind(error: BaseException) -> BaseException | None:
    """The stop ``error`` stands for, else ``None``: a :class:`BuildStopped` or ``KeyboardInterrupt`` in its
    chain of causes (a stop raised inside a Ray call comes out wrapped: a ``SystemError`` "returned a result
    with an exception set", a ``RaySystemError``, a ``ConnectionError``), or Ray's own SIGTERM exit."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, SystemExit):
            if current.code == signal.SIGTERM:  # Ray's driver handler: sys.exit(signum)
                return BuildStopped(signal.SIGTERM)
        elif not isinstance(current, Exception):
            return current
        current = current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """Keep the build's SIGTERM, SIGHUP and SIGINT handlers across ``ray.init``, and its stop path.

    ``ray.init`` installs, in the driver, a SIGTERM handler that calls ``sys.exit(15)``: exit status
    15, no message, bypassing the build's stop path (cancel every task, write nothing, exit 143).
    Re-installing the build's handlers after ``ray.init`` restores that path; a SIGTERM that arrives
    while Ray connects (its handler's ``SystemExit(15)``) is turned into the build's stop.
    """
    names = ("SIGTERM", "SIGHUP", "SIGINT")
    kept = {sig: signal.getsignal(sig) for sig in (getattr(signal, name) for name in names)}
    try:
        yield
    except BaseException as error:
        stop = stop_behind(error)
        if stop is None:
            raise
        raise stop from None
    finally:
        if threading.current_thread() is threading.main_thread():  # signal.signal works only there
            for sig, handler in kept.items():
                if handler is not None:
                    signal.signal(sig, handler)


@contextlib.contextmanager
def _shut_down_on_failure(ray: ModuleType) -> Iterator[None]:
    """A ``ray.init`` that ends in an exception (a stop while connecting) leaves no half-started Ray."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise


class UnitFailedError(RuntimeError):
    """A unit's ``lm_eval`` failed; raised in the Ray task so that Ray retries it."""

    def __init__(self, result: UnitResult) -> None:
        super().__init__(result)
        self.result = result

    def __str__(self) -> str:
        return f"{self.result.job.label}: {self.result.error}"


def run_unit(job: UnitJob, budget: ActorHandle | None) -> UnitResult:
    """The Ray task: run one unit under its endpoint budget; a failure (not a timeout) raises to retry."""
    import ray

    with lease(budget, job.spec.slots):
        result = dataclasses.replace(execute(job), node=ray.get_runtime_context().get_node_id())
    if result.error is not None and not result.timed_out:
        raise UnitFailedError(result)
    return result


@dataclass
class HeadWatch:
    """Checks, at most every :data:`HEAD_CHECK_SECONDS`, that the head's GCS (``host:port``) answers."""

    gcs: str
    label: str
    last: float = field(default_factory=time.monotonic)
    failures: int = 0

    def check(self) -> None:
        """Raise :class:`RayClusterError` naming the head once it has failed two checks in a row."""
        now = time.monotonic()
        if now - self.last < HEAD_CHECK_SECONDS:
            return
        self.last = now
        host, _, port = self.gcs.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=HEAD_CHECK_SECONDS):
                self.failures = 0
        except OSError as error:
            self.failures += 1
            if self.failures >= 2:
                raise RayClusterError(
                    f"lost the Ray head ({self.label}): its GCS at {self.gcs} no longer answers "
                    f"({error.strerror or type(error).__name__}); the build stopped and wrote nothing"
                ) from None


def demand(spec: ModelSpec) -> dict[str, float]:
    """What one unit of ``spec`` asks a node for, in Ray's resource names (``CPU``, ``GPU``, ``memory``, custom)."""
    resources = spec.resources
    asked = {
        "CPU": resources.get("num_cpus", 1.0),
        "GPU": resources.get("num_gpus", 0.0),
        "memory": resources.get("memory", 0.0),
        **resources.get("custom", {}),
    }
    return {name: float(amount) for name, amount in asked.items() if amount}


def check_feasible(ray: ModuleType, specs: Sequence[ModelSpec]) -> None:
    """Refuse, before any unit runs, a model whose unit no alive node of the cluster can ever hold.

    Ray would keep such a task pending forever (it cannot know whether a node will join). The check
    is against the nodes alive now: on an autoscaling cluster, start the node type first.

    Raises:
        RayClusterError: Naming the model and the resources no node has enough of.
    """
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    for spec in specs:
        asked = demand(spec)
        if any(all(node.get(name, 0.0) >= amount for name, amount in asked.items()) for node in nodes):
            continue
        largest = {name: max((node.get(name, 0.0) for node in nodes), default=0.0) for name in asked}
        short = [name for name, amount in asked.items() if largest[name] < amount] or sorted(asked)
        shown = ", ".join(f"{name} {asked[name]:g} (largest node: {largest[name]:g})" for name in short)
        raise RayClusterError(
            f"{spec.name}: no node of the Ray cluster ({len(nodes)} alive) can ever run its units, "
            f"which ask for {shown}; lower the model's resources or add such a node"
        )


def _task_options(spec: ModelSpec, retries: int) -> dict[str, Any]:
    resources = spec.resources
    options: dict[str, Any] = {
        "num_cpus": resources.get("num_cpus", 1.0),
        "max_retries": retries,
        "retry_exceptions": [UnitFailedError],
    }
    for key in ("num_gpus", "memory"):  # memory: Ray reserves it for placement; it does not cap the process
        if key in resources:
            options[key] = resources[key]
    if resources.get("custom"):
        options["resources"] = dict(resources["custom"])
    return options


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
        """Run every model's units on the cluster; one outcome per model, in ``specs`` order.

        Raises:
            RayClusterError: A bad or unreachable address, a unit no alive node can ever place (before
                any unit runs), or a head that died meanwhile.
        """
        ray = require_ray()
        started_here = not ray.is_initialized()
        if started_here:
            check_reachable(check_address(self.address))
            with signal_handlers_kept(), _shut_down_on_failure(ray):
                ray.init(
                    address=self.address,
                    namespace=NAMESPACE,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                    **self.init_options,
                )
        try:
            check_feasible(ray, specs)
            return self._run(ray, specs, settings, log)
        except Exception as error:
            stop = stop_behind(error)  # SIGTERM while joining: a stop, not a lost head
            if stop is not None:
                raise stop from None
            if not isinstance(error, (OSError, ray.exceptions.RaySystemError)):
                raise
            where = self.address or "the local Ray this build started"
            raise RayClusterError(
                f"lost the Ray head ({where}): {type(error).__name__}: {str(error).strip()[-200:]}; "
                "the build stopped and wrote nothing"
            ) from None
        finally:
            if started_here:
                with contextlib.suppress(Exception):  # a dead head: nothing left to shut down
                    ray.shutdown()

    def _budget(self, ray: ModuleType, spec: ModelSpec) -> ActorHandle | None:
        if spec.endpoint is None or spec.api_limit is None:
            return None
        actor = ray.remote(num_cpus=0)(EndpointBudget)
        return actor.options(name=f"api:{spec.endpoint}", namespace=NAMESPACE, get_if_exists=True).remote(
            spec.api_limit
        )

    def _submit(
        self, ray: ModuleType, specs: Sequence[ModelSpec], settings: RunSettings, outcomes: dict[str, RunOutcome]
    ) -> dict[UnitRef, tuple[ModelRun, UnitJob]]:
        task = ray.remote(run_unit)
        pending: dict[UnitRef, tuple[ModelRun, UnitJob]] = {}
        for spec in specs:
            model = plan_model(spec, settings, local=False)
            if not isinstance(model, ModelRun):
                outcomes[spec.name] = model
                continue
            budget = self._budget(ray, spec)
            for job in model.jobs:
                pending[task.options(**_task_options(spec, self.retries)).remote(job, budget)] = (model, job)
        return pending

    def _run(
        self, ray: ModuleType, specs: Sequence[ModelSpec], settings: RunSettings, log: Callable[[str], None]
    ) -> list[RunOutcome]:
        outcomes: dict[str, RunOutcome] = {}
        pending = self._submit(ray, specs, settings, outcomes)

        def ended(ref: UnitRef, what: tuple[ModelRun, UnitJob]) -> None:
            model, job = what
            model.results.append(_result(ray, ref, job))
            if model.done:
                outcomes[model.spec.name] = _finish(model, settings, log)

        wait_all(ray, pending, self.address or "the local Ray this build started", ended)
        return [outcomes[spec.name] for spec in specs]


def wait_all(ray: ModuleType, pending: dict[Any, T], head: str, ended: Callable[[Any, T], None]) -> None:
    """Wait for every task of ``pending`` (its reference -> what it runs), calling ``ended`` as each one
    ends, while watching the head (``head`` names it in the error). On any error (one ``ended`` raises
    for a failed task, a dead head, a stop signal) the tasks still pending are cancelled and the error
    re-raised: the board's build and an improve study's units both end this way."""
    gcs = getattr(ray.get_runtime_context(), "gcs_address", None)  # none through a ray:// client
    watch = HeadWatch(gcs, head) if gcs else None
    try:
        while pending:
            if watch is not None:
                watch.check()
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                ended(ref, pending.pop(ref))
    except BaseException as error:
        for ref in pending:
            with contextlib.suppress(Exception):  # a dead head cannot cancel: its tasks died with it
                ray.cancel(ref, force=True)
        # a stop signal's exception raised inside ray.wait comes out wrapped (a SystemError "returned a
        # result with an exception set"): re-raise the stop itself
        stop = stop_behind(error)
        if stop is None or stop is error:
            raise
        raise stop from None


def _finish(model: ModelRun, settings: RunSettings, log: Callable[[str], None]) -> RunOutcome:
    """Every unit of ``model`` has ended: its outcome (stored, merged and ingested on the driver), logged."""
    outcome = finish_model(model, settings)
    nodes = sorted({str(result.node) for result in model.results if result.node})
    log(outcome_line(outcome, settings.night, f"ray nodes {nodes}"))
    return outcome


def _result(ray: ModuleType, ref: UnitRef, job: UnitJob) -> UnitResult:
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
