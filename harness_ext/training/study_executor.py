"""How a study's units run: a :class:`StudyExecutor` over one peer of the suite's executor protocol
(:mod:`..jobs.executor`), chosen in one place (:func:`study_executor`, from ``improve --executor``):
:data:`run_locally` runs each unit here, in order; ``--executor ray`` each as one Ray task.

A unit is a REPAIR row, GV's round 0, one GV chain, or a kept row's merged weights (:mod:`.study`). On
Ray its task asks for ``num_gpus`` (``--gpus-per-row``; default 1 where the cluster has a GPU, else 0) and one
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
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NoReturn

from ..jobs.executor import Executor, Unit, UnitError, executor_for
from ..jobs.ray_session import DEFAULT_RETRIES, RayClusterError, alive_nodes, require_ray

__all__ = [
    "RanOn",
    "StudyExecutor",
    "StudyUnit",
    "StudyUnitError",
    "cluster_gpus",
    "run_locally",
    "study_executor",
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


class StudyUnitError(RuntimeError):
    """A unit of the study failed: names the unit (its row, or its chain) and the error."""

    def __init__(self, unit: str, error: str) -> None:
        super().__init__(f"{unit}: {error}")
        self.unit = unit


def _failed_here(index: int, error: UnitError) -> NoReturn:
    raise StudyUnitError(error.label, f"{type(error.cause).__name__}: {error.cause}") from error.cause


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


@dataclass(frozen=True)
class StudyExecutor:
    """Runs a study's units on ``units``, an executor of the one protocol (:func:`study_executor` chooses
    it): one list of row summaries per unit, in the units' order. What it adds is the study's: a failing
    unit fails the study naming its row; on Ray each unit asks for one CPU and ``gpus_per_row`` GPUs
    (``None``: 1 where a node has a GPU, else 0), checked against the cluster before any unit runs.

    Raises:
        StudyUnitError: A unit failed (naming it and its error; the others are stopped).
        RayClusterError: A bad or unreachable address, a ``--gpus-per-row`` no node has, a lost head.
        KeyboardInterrupt: Every unit is stopped first.
    """

    units: Executor
    gpus_per_row: float | None = None

    def __call__(self, units: Sequence[StudyUnit]) -> list[Rows]:
        """One list of rows per unit, in order."""
        if not units:
            return []
        if not self.units.remote:
            return self.units.run([Unit(unit.name, unit.work) for unit in units], failed=_failed_here)
        with self.units.session() as session:
            assert session is not None  # a remote executor's session is Ray's
            asked = {"CPU": 1.0, "GPU": self._gpus(session.ray)}
            return self.units.run([Unit(unit.name, unit.work, asked) for unit in units], failed=_unit_failed)

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


def study_executor(
    kind: str = "local",
    *,
    address: str | None = None,
    gpus_per_row: float | None = None,
    retries: int = DEFAULT_RETRIES,
    init_options: Mapping[str, Any] | None = None,
) -> StudyExecutor:
    """The one place a study's executor is chosen (``improve --executor``, ``--ray-address``,
    ``--gpus-per-row``): the peer named ``kind`` (:func:`~..jobs.executor.executor_for`) under a
    :class:`StudyExecutor`.

    Raises:
        ValueError: An unknown ``kind``, or Ray's settings given to the local executor (naming them).
    """
    if kind == "local":
        given = [
            flag for flag, value in (("--gpus-per-row", gpus_per_row), ("--ray-address", address)) if value is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)}: applies to --executor ray only (this study runs --executor local)")
    ray = {"address": address, "retries": retries, "job": "study", "ending": LOST_HEAD_ENDING,
           "init_options": dict(init_options or {}), "importer": _ray}  # fmt: skip
    return StudyExecutor(executor_for(kind, **({} if kind == "local" else ray)), gpus_per_row)


#: The default: each unit here, one after another, in order; a failing unit stops the rest.
run_locally = study_executor()
