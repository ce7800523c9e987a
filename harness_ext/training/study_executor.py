"""``logic-consistency improve --executor ray``: each unit of an improve study is one Ray task.

A unit is a REPAIR row, GV's round 0, or one GV chain (:mod:`.study`). The task
asks for ``num_gpus`` (``--gpus-per-row``; default 1 where the cluster has a GPU, else 0) and one CPU,
and runs the unit's own function on its node: it trains, runs ``lm_eval`` (which dies with the task's
process) and writes only its rows' folders under ``--out``, so ``--out`` and the base model must be
paths every node sees. The task's arguments are the study's options and its training examples: no
environment value. A task is retried on worker death (not on an error of its own: a failing unit
fails the study, naming its row and error). Ctrl-C or a failing unit cancels every other task
(``ray.cancel(force=True)``); a Ray this command started is shut down. The session (connecting, the
checks of the address, the head watch, waiting, the translation of a lost head into one error line) is
the one the board's build uses too (:mod:`logic_consistency.harness_ext.jobs.ray_session`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..jobs.ray_session import DEFAULT_RETRIES, RayClusterError, RaySession, ray_session, require_ray
from .study import RanOn, StudyUnit, StudyUnitError

__all__ = ["RayStudyExecutor", "cluster_gpus", "run_study_unit"]

#: What a lost head means for a study (the end of its error line).
LOST_HEAD_ENDING = "the study stopped; its finished rows are kept (run the same command to resume)"


def run_study_unit(unit: StudyUnit) -> list[dict[str, Any]]:
    """The Ray task: run ``unit`` here, recording Ray's node and task ids in its rows."""
    import ray

    context = ray.get_runtime_context()
    ran_on: RanOn = {"executor": "ray", "node": context.get_node_id(), "task": context.get_task_id()}
    return unit.work(ran_on)


def cluster_gpus(ray: ModuleType) -> float:
    """The most GPUs any alive node of the cluster has (0: a CPU cluster)."""
    return max((float(n.get("Resources", {}).get("GPU", 0.0)) for n in ray.nodes() if n.get("Alive")), default=0.0)


@dataclass
class RayStudyExecutor:
    """Runs a study's units as Ray tasks (see the module docstring); a :class:`~.study.StudyExecutor`.

    Attributes:
        address: ``None``: start a local Ray; ``"auto"``, ``host:port`` or ``"ray://host:port"``: join one.
        gpus_per_row: ``num_gpus`` of each unit (``None``: 1 where a node has a GPU, else 0).
        retries: Retries of a unit whose worker died.
    """

    address: str | None = None
    gpus_per_row: float | None = None
    retries: int = DEFAULT_RETRIES
    init_options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]:
        """One list of rows per unit, in order.

        Raises:
            RayClusterError: A bad or unreachable address, a ``--gpus-per-row`` no node has, a lost head.
            StudyUnitError: A unit failed (the others were cancelled).
        """
        if not units:
            return []
        with ray_session(
            require_ray(), self.address, job="study", ending=LOST_HEAD_ENDING, init_options=self.init_options
        ) as session:
            return self._run(session, units)

    def _gpus(self, ray: ModuleType) -> float:
        most = cluster_gpus(ray)
        if self.gpus_per_row is None:
            return 1.0 if most >= 1 else 0.0
        if self.gpus_per_row > most:
            raise RayClusterError(
                f"--gpus-per-row {self.gpus_per_row:g}: no node of the Ray cluster has that many GPUs "
                f"(largest node: {most:g}); lower --gpus-per-row or add such a node"
            )
        return self.gpus_per_row

    def _run(self, session: RaySession, units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]:
        ray = session.ray
        options = {"num_cpus": 1, "num_gpus": self._gpus(ray), "max_retries": self.retries, "retry_exceptions": False}
        task = ray.remote(run_study_unit).options(**options)
        pending = {task.remote(unit): n for n, unit in enumerate(units)}
        results: dict[int, list[dict[str, Any]]] = {}

        def ended(ref: Any, n: int) -> None:
            results[n] = _result(ray, ref, units[n])

        session.wait_all(pending, ended)
        return [results[n] for n in range(len(units))]


def _result(ray: ModuleType, ref: Any, unit: StudyUnit) -> list[dict[str, Any]]:
    """The unit's rows; a task that failed (its own error, or its worker's death after the retries) names it."""
    try:
        rows: list[dict[str, Any]] = ray.get(ref)
        return rows
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None) or error
        raise StudyUnitError(unit.name, f"{type(cause).__name__}: {str(cause).strip()[-600:]}") from None
    except ray.exceptions.RayError as error:
        raise StudyUnitError(
            unit.name, f"Ray task failed: {type(error).__name__}: {str(error).strip()[-300:]}"
        ) from None
