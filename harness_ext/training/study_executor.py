"""``logic-consistency improve --executor ray``: each unit of an improve study is one Ray task, on the
suite's one executor protocol (:mod:`..jobs.executor`, chosen by its ``executor_for``; the local peer
runs them under :func:`.study.run_locally`).

A unit is a REPAIR row, GV's round 0, one GV chain, or a kept row's merged weights (:mod:`.study`). The
task asks for ``num_gpus`` (``--gpus-per-row``; default 1 where the cluster has a GPU, else 0) and one
CPU, and runs the unit's own function on its node: it trains (or merges), runs ``lm_eval`` (which dies
with the task's process) and writes only its rows' folders under ``--out``, so ``--out`` and the base
model must be paths every node sees. The task's arguments are the study's options and its training
examples: no environment value. A task is retried on worker death (not on an error of its own: a
failing unit fails the study, naming its row and error). Ctrl-C or a failing unit cancels every other
task (``ray.cancel(force=True)``); a Ray this command started is shut down. The session (connecting,
the checks of the address, the head watch, waiting, the translation of a lost head into one error line)
is the one the board's build uses too (:mod:`logic_consistency.harness_ext.jobs.ray_session`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NoReturn

from ..jobs.executor import Unit, UnitError, executor_for
from ..jobs.ray_session import DEFAULT_RETRIES, RayClusterError, alive_nodes, require_ray
from .study import StudyUnit, StudyUnitError

__all__ = ["RayStudyExecutor", "cluster_gpus"]

#: What a lost head means for a study (the end of its error line).
LOST_HEAD_ENDING = "the study stopped; its finished rows are kept (run the same command to resume)"

#: The rows of each unit.
Rows = list[dict[str, Any]]


def _unit_failed(index: int, error: UnitError) -> NoReturn:
    """A failed unit fails the study, naming the unit and the end of its error's text (or of Ray's, where
    its worker was lost)."""
    cause = error.cause
    if error.lost:
        why = f"Ray task failed: {type(cause).__name__}: {str(cause).strip()[-300:]}"
        raise StudyUnitError(error.label, why) from None
    raise StudyUnitError(error.label, f"{type(cause).__name__}: {str(cause).strip()[-600:]}") from None


def cluster_gpus(ray: ModuleType) -> float:
    """The most GPUs any alive node of the cluster has (0: a CPU cluster)."""
    return max((float(node.get("GPU", 0.0)) for node in alive_nodes(ray)), default=0.0)


def _ray() -> ModuleType:
    """Ray, through this module's :func:`require_ray` (looked up at each call: a test stands in for it)."""
    return require_ray()


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

    def __call__(self, units: Sequence[StudyUnit]) -> list[Rows]:
        """One list of rows per unit, in order.

        Raises:
            RayClusterError: A bad or unreachable address, a ``--gpus-per-row`` no node has, a lost head.
            StudyUnitError: A unit failed (the others were cancelled).
        """
        if not units:
            return []
        executor = executor_for(
            "ray",
            address=self.address,
            retries=self.retries,
            job="study",
            ending=LOST_HEAD_ENDING,
            init_options=self.init_options,
            importer=_ray,
        )
        with executor.session() as session:
            asked = {"CPU": 1.0, "GPU": self._gpus(session.ray)}
            return executor.run([Unit(unit.name, unit.work, asked) for unit in units], failed=_unit_failed)

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
