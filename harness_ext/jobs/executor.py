"""The one executor protocol of the suite: the board's build and both improve studies hand their
independent units of work to an :class:`Executor`, chosen in one place (:func:`executor_for`).

As vLLM has one executor base with peer implementations, there is one base and two peers:
:class:`LocalExecutor` runs the units here, one after another, in order; :class:`RayExecutor` runs
each as a Ray task on the suite's one Ray session (:mod:`.ray_session`). A :class:`Unit` is a label,
the resources it asks for (Ray's names) and its ``work``, a picklable callable that receives where it
runs (:data:`Placement`) and returns the unit's result. What a result or a failure means is the
caller's: the board's failure codes, its endpoint budgets and its shards, the study's rows and its
merged weights stay above, in the unit and in the ``failed`` hook.
"""

from __future__ import annotations

import contextlib
import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar, Generic, Literal, TypeVar, overload

from .ray_session import DEFAULT_RETRIES, NAMESPACE, RaySession, alive_nodes, ray_session, require_ray

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "Placement",
    "RayExecutor",
    "Unit",
    "UnitError",
    "executor_for",
]

R = TypeVar("R")

#: Where a unit ran, as its work receives it: ``{"executor": "local", "host": ..., "pid": ...}``, or
#: ``{"executor": "ray", "node": ..., "task": ...}`` (Ray's node and task ids).
Placement = Mapping[str, Any]


@dataclass(frozen=True)
class Unit(Generic[R]):
    """One independent piece of work.

    Attributes:
        label: What messages and failures name (a model, a shard, a row, a chain).
        work: Runs the unit where the executor put it; picklable for :class:`RayExecutor` (a
            module-level function, or a ``functools.partial`` of one).
        resources: What it asks a node for, in Ray's names (``CPU``, default 1; ``GPU``, ``memory``,
            custom resources). :class:`LocalExecutor` runs it here whatever it asks.
        retry_on: Exceptions of ``work`` after which Ray runs it again (a dead worker always is), up to
            the executor's ``retries``.
    """

    label: str
    work: Callable[[Placement], R]
    resources: Mapping[str, float] = field(default_factory=dict)
    retry_on: tuple[type[Exception], ...] = ()


class UnitError(RuntimeError):
    """A unit raised (past its retries), or its Ray worker died.

    Attributes:
        label: The unit's label.
        cause: What ``work`` raised, or Ray's error where the worker was lost.
        lost: Whether the unit's process was lost (not an error of ``work`` itself).
    """

    def __init__(self, label: str, cause: BaseException, *, lost: bool = False) -> None:
        super().__init__(f"{label}: {type(cause).__name__}: {cause}")
        self.label = label
        self.cause = cause
        self.lost = lost


#: A failed unit's result instead of the error (the other units go on), or a raise that stops them all.
Failed = Callable[[int, UnitError], R]
#: Called as each unit ends, with its index and result (locally in order; on Ray as they end).
Ended = Callable[[int, R], None]


def _raise(_: int, error: UnitError) -> Any:
    raise error


class Executor(ABC):
    """Runs independent units: :meth:`run` returns one result per unit, in the units' order.

    Attributes:
        kind: The name :func:`executor_for` knows it by (``--executor``).
        remote: Whether units run in other processes, maybe other machines: their work must then be
            picklable and return what it wrote (no shared file system is assumed).
    """

    kind: ClassVar[str]
    remote: ClassVar[bool]

    @contextlib.contextmanager
    def session(self) -> Iterator[RaySession | None]:
        """Opened around :meth:`run` (by it, or by a caller that first looks at :meth:`nodes`)."""
        yield None

    def nodes(self) -> list[dict[str, float]]:
        """The resources of each node a unit may run on (in an open session); here: none is checked."""
        return []

    def shared(self, cls: type, name: str, *args: Any) -> Any:
        """A named object the units share (Ray: a named actor of ``cls``, made once); ``None`` here, where
        units run one at a time."""
        return None

    @abstractmethod
    def run(self, units: Sequence[Unit[R]], *, ended: Ended[R] | None = None, failed: Failed[R] = _raise) -> list[R]:
        """One result per unit, in order; a unit that fails gives ``failed``'s result, or its raise.

        Raises:
            UnitError: A unit failed and ``failed`` re-raised it (the default); the others are stopped.
            KeyboardInterrupt, Stopped: A stop; every unit is stopped first.
        """


@dataclass(frozen=True)
class LocalExecutor(Executor):
    """Runs the units here, one after another, in order (a stop passes through at once)."""

    kind: ClassVar[str] = "local"
    remote: ClassVar[bool] = False

    def run(self, units: Sequence[Unit[R]], *, ended: Ended[R] | None = None, failed: Failed[R] = _raise) -> list[R]:
        """See :meth:`Executor.run`."""
        placement = {"executor": self.kind, "host": socket.gethostname(), "pid": os.getpid()}
        results = []
        for index, unit in enumerate(units):
            try:
                result = unit.work(placement)
            except Exception as error:  # a stop (KeyboardInterrupt, Stopped) is no unit's failure: it passes
                try:
                    result = failed(index, UnitError(unit.label, error))
                except UnitError as raised:
                    raise raised from error
            if ended is not None:
                ended(index, result)
            results.append(result)
        return results


def run_remote(work: Callable[[Placement], R]) -> R:
    """The Ray task of every unit: ``work`` with Ray's node and task ids."""
    import ray

    context = ray.get_runtime_context()
    return work({"executor": "ray", "node": context.get_node_id(), "task": context.get_task_id()})


def task_options(unit: Unit[Any], retries: int) -> dict[str, Any]:
    """Ray's options of ``unit``'s task: its resources, and its retries."""
    custom = dict(unit.resources)
    options: dict[str, Any] = {
        "num_cpus": custom.pop("CPU", 1.0),
        "max_retries": retries,
        "retry_exceptions": list(unit.retry_on) or False,
    }
    for name, option in (("GPU", "num_gpus"), ("memory", "memory")):  # memory: reserved, not a cap
        if name in custom:
            options[option] = custom.pop(name)
    if custom:
        options["resources"] = custom
    return options


@dataclass
class RayExecutor(Executor):
    """Runs each unit as a Ray task (on :mod:`.ray_session`'s session); a failure cancels the others
    unless ``failed`` gives its result.

    Attributes:
        address: ``None``: start a local Ray; ``"auto"``, ``host:port`` or ``"ray://host:port"``: join one.
        retries: Retries of a unit whose worker died (or that raised one of its ``retry_on``).
        job: What runs (``build``, ``study``), as "the local Ray this <job> started" names the head.
        ending: What a lost head means for the job (the end of its error line).
        init_options: More ``ray.init`` arguments.
        importer: Imports Ray (the caller's, so that a test can stand in for it).
    """

    kind: ClassVar[str] = "ray"
    remote: ClassVar[bool] = True

    address: str | None = None
    retries: int = DEFAULT_RETRIES
    job: str = "job"
    ending: str = "the job stopped"
    init_options: Mapping[str, Any] = field(default_factory=dict)
    importer: Callable[[], ModuleType] = require_ray
    _open: RaySession | None = field(default=None, init=False, repr=False)

    @contextlib.contextmanager
    def session(self) -> Iterator[RaySession]:
        """Start or join Ray for the block (:func:`~.ray_session.ray_session`), unless already in one."""
        if self._open is not None:
            yield self._open
            return
        with ray_session(
            self.importer(), self.address, job=self.job, ending=self.ending, init_options=self.init_options
        ) as opened:
            self._open = opened
            try:
                yield opened
            finally:
                self._open = None

    def nodes(self) -> list[dict[str, float]]:
        """The resources of every alive node of the cluster."""
        with self.session() as opened:
            return alive_nodes(opened.ray)

    def shared(self, cls: type, name: str, *args: Any) -> Any:
        """The named actor ``name`` of ``cls`` (made with ``args`` unless it exists), holding no CPU."""
        with self.session() as opened:
            actor = opened.ray.remote(num_cpus=0)(cls)
            return actor.options(name=name, namespace=NAMESPACE, get_if_exists=True).remote(*args)

    def run(self, units: Sequence[Unit[R]], *, ended: Ended[R] | None = None, failed: Failed[R] = _raise) -> list[R]:
        """See :meth:`Executor.run`.

        Raises:
            RayClusterError: A bad or unreachable address, or a head lost meanwhile.
        """
        if not units:
            return []
        with self.session() as opened:
            ray = opened.ray
            task = ray.remote(run_remote)
            pending = {
                task.options(**task_options(unit, self.retries)).remote(unit.work): n for n, unit in enumerate(units)
            }
            results: dict[int, R] = {}

            def done(ref: Any, index: int) -> None:
                results[index] = _result(ray, ref, units[index], index, failed)
                if ended is not None:
                    ended(index, results[index])

            opened.wait_all(pending, done)
            return [results[n] for n in range(len(units))]


def _result(ray: ModuleType, ref: Any, unit: Unit[R], index: int, failed: Failed[R]) -> R:
    """The unit's result; a task that failed (its own error, or its worker's death after the retries)
    gives ``failed``'s result."""
    try:
        result: R = ray.get(ref)
        return result
    except ray.exceptions.RayTaskError as error:
        failure = UnitError(unit.label, getattr(error, "cause", None) or error)
    except ray.exceptions.RayError as error:
        failure = UnitError(unit.label, error, lost=True)
    return failed(index, failure)


#: The executors by ``--executor`` name.
EXECUTORS: Mapping[str, type[Executor]] = {"local": LocalExecutor, "ray": RayExecutor}


@overload
def executor_for(kind: Literal["ray"], **options: Any) -> RayExecutor: ...


@overload
def executor_for(kind: str, **options: Any) -> Executor: ...


def executor_for(kind: str, **options: Any) -> Executor:
    """The one place an executor is chosen: the peer named ``kind`` (:data:`EXECUTORS`) with ``options``
    (:class:`RayExecutor`'s fields; the local one takes none).

    Raises:
        ValueError: An unknown ``kind``, or options the local executor does not take, naming them.
    """
    if kind not in EXECUTORS:
        raise ValueError(f"--executor {kind!r}: expected one of {', '.join(EXECUTORS)}")
    if kind == "local" and options:
        raise ValueError(f"--executor local takes no {', '.join(sorted(options))}")
    return EXECUTORS[kind](**options)
