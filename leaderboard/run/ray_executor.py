"""``leaderboard build --executor ray``: every unit of the nightly build is one Ray task.

A unit is a model's whole run, or one of its shards (:mod:`.units`). Each Ray task asks for the
model's ``resources``, runs ``lm_eval`` in a temporary folder on its node and returns every file it
wrote (only the driver writes the runs folder, the board, the history and the page, under the build
lock); it keeps its own request cache, is retried ``--retries`` times (default 2) when its worker
dies or ``lm_eval`` fails, and holds ``num_concurrent`` slots of its endpoint's ``api_limits``
budget through one named actor per endpoint (:class:`~.endpoint_budget.EndpointBudget`) granting time-limited leases,
so a killed worker's slots come back.

Ctrl-C or SIGTERM on the driver cancels every task (their ``lm_eval`` dies with its parent) and shuts
down a Ray it started itself: the session (connect, address checks, head watch, waiting, error
translation) is the one :mod:`logic_consistency.harness_ext.jobs.ray_session`, shared with ``improve
--executor ray``. Ray is imported only when ``--executor ray`` is chosen. See docs/cluster.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from logic_consistency.harness_ext.jobs.ray_session import (
    DEFAULT_RETRIES,
    NAMESPACE,
    RayClusterError,
    RaySession,
    check_address,
    check_reachable,
    ray_session,
    require_ray,
)

from .endpoint_budget import EndpointBudget, lease
from .executor import outcome_line
from .modellist import ModelSpec
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
    "RayClusterError",
    "RayExecutor",
    "check_address",
    "check_feasible",
    "check_reachable",
    "require_ray",
]

#: What a lost head means for a build (the end of its error line).
LOST_HEAD_ENDING = "the build stopped and wrote nothing"


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
        with ray_session(
            ray, self.address, job="build", ending=LOST_HEAD_ENDING, init_options=self.init_options
        ) as session:
            check_feasible(ray, specs)
            return self._run(session, specs, settings, log)

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
        self, session: RaySession, specs: Sequence[ModelSpec], settings: RunSettings, log: Callable[[str], None]
    ) -> list[RunOutcome]:
        ray = session.ray
        outcomes: dict[str, RunOutcome] = {}
        pending = self._submit(ray, specs, settings, outcomes)

        def ended(ref: UnitRef, what: tuple[ModelRun, UnitJob]) -> None:
            model, job = what
            model.results.append(_result(ray, ref, job))
            if model.done:
                outcomes[model.spec.name] = _finish(model, settings, log)

        session.wait_all(pending, ended)
        return [outcomes[spec.name] for spec in specs]


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
    return UnitResult(job, None, False, "", 0.0, None, message=message, code="worker_lost")
