"""How a study's units run: :class:`StudyExecutor` (what the driver calls), :func:`run_locally` (each unit
here, in order) or ``improve --executor ray``'s :class:`RayStudyExecutor` (each unit one Ray task), both
on the suite's one executor protocol (:mod:`..jobs.executor`, chosen by its ``executor_for``).

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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NoReturn, Protocol

from ..jobs.executor import Unit, UnitError, executor_for
from ..jobs.ray_session import DEFAULT_RETRIES, RayClusterError, alive_nodes, require_ray

__all__ = [
    "RanOn",
    "RayStudyExecutor",
    "StudyExecutor",
    "StudyUnit",
    "StudyUnitError",
    "cluster_gpus",
    "run_locally",
]

#: What a unit records of where it ran (``ran_on`` in its rows' ``row.json``): the executor, and the
#: host and process here, or Ray's node and task ids.
RanOn = Mapping[str, Any]


@dataclass(frozen=True)
class StudyUnit:
    """One independent unit of a study: it trains and evaluates its rows, writing only their folders.

    Attributes:
        name: What a failure names (the row, or the chain).
        rows: The rows it runs, in order (their ``row.json`` are written last, by the unit).
        work: Runs the unit where the executor put it; returns its rows' summaries. Picklable (a
            module-level function, or a ``functools.partial`` of one), so that a Ray task can run it.
    """

    name: str
    rows: tuple[str, ...]
    work: Callable[[RanOn], list[dict[str, Any]]]


class StudyExecutor(Protocol):
    """Runs a study's units: one list of row summaries per unit, in the units' order.

    Raises:
        StudyUnitError: A unit failed (naming it and its error; the others are stopped).
        KeyboardInterrupt: Every unit is stopped first.
    """

    def __call__(self, units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]: ...


class StudyUnitError(RuntimeError):
    """A unit of the study failed: names the unit (its row, or its chain) and the error."""

    def __init__(self, unit: str, error: str) -> None:
        super().__init__(f"{unit}: {error}")
        self.unit = unit


def _failed_here(index: int, error: UnitError) -> NoReturn:
    raise StudyUnitError(error.label, f"{type(error.cause).__name__}: {error.cause}") from error.cause


def run_locally(units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]:
    """The default :class:`StudyExecutor`: each unit here, one after another, in order, on the local peer
    of the one executor protocol (:mod:`..jobs.executor`); a failing unit stops the rest."""
    return executor_for("local").run([Unit(unit.name, unit.work) for unit in units], failed=_failed_here)


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
    """Runs a study's units as Ray tasks (see the module docstring); a :class:`StudyExecutor`.

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
