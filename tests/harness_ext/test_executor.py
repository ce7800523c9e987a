"""The one executor protocol (``harness_ext/jobs/executor.py``), in process: the local peer runs the units
here in order, a failure goes to the caller's hook (its result, or a stop of every unit), a stop is no
unit's failure; the Ray peer, on a stand-in for Ray that runs each task at once, asks for each unit's
resources and retries, records the node, and turns a task's error or a lost worker into the hook's
call; ``executor_for`` is the one chooser. The real cluster: tests/leaderboard/test_ray_cluster.py,
tests/test_improve_ray.py."""

from __future__ import annotations

import sys
import types
from functools import partial
from typing import Any

import pytest

from logic_consistency.harness_ext.jobs.executor import (
    LocalExecutor,
    Placement,
    RayExecutor,
    Unit,
    UnitError,
    executor_for,
    task_options,
)


def _echo(name: str, placement: Placement) -> tuple[str, str]:
    return name, str(placement["executor"])


def _fail(error: Exception, placement: Placement) -> Any:
    raise error


def test_the_local_peer_runs_the_units_here_in_order_and_reports_each_as_it_ends() -> None:
    ended: list[int] = []
    units = [Unit(name, partial(_echo, name)) for name in ("a", "b", "c")]
    results = executor_for("local").run(units, ended=lambda index, _: ended.append(index))
    assert results == [("a", "local"), ("b", "local"), ("c", "local")] and ended == [0, 1, 2]


def test_a_failure_is_the_hooks_result_or_stops_the_later_units() -> None:
    ran: list[str] = []
    units = [Unit("a", partial(_fail, OSError("no lm_eval"))), Unit("b", lambda _: ran.append("b") or "b")]
    assert LocalExecutor().run(units, failed=lambda index, error: f"{index} {error}") == [
        "0 a: OSError: no lm_eval",
        "b",
    ]
    with pytest.raises(UnitError, match=r"^a: OSError: no lm_eval$") as raised:
        LocalExecutor().run(units)
    assert isinstance(raised.value.cause, OSError) and not raised.value.lost and ran == ["b"]


def test_a_stop_is_no_units_failure() -> None:
    hooked: list[UnitError] = []
    with pytest.raises(KeyboardInterrupt):
        LocalExecutor().run([Unit("a", partial(_fail, KeyboardInterrupt()))], failed=lambda _, e: hooked.append(e))
    assert hooked == []


def test_executor_for_is_the_one_chooser() -> None:
    assert isinstance(executor_for("local"), LocalExecutor)
    chosen = executor_for("ray", address="auto", retries=0, job="study")
    assert isinstance(chosen, RayExecutor) and (chosen.address, chosen.retries, chosen.remote) == ("auto", 0, True)
    with pytest.raises(ValueError, match="--executor 'slurm': expected one of local, ray"):
        executor_for("slurm")
    with pytest.raises(ValueError, match="--executor local takes no address"):
        executor_for("local", address="auto")


def test_a_units_resources_are_rays_task_options() -> None:
    unit = Unit("m", print, {"CPU": 0.0, "GPU": 1.0, "memory": 2e9, "a100": 1.0}, retry_on=(OSError,))
    assert task_options(unit, 2) == {
        "num_cpus": 0.0,
        "num_gpus": 1.0,
        "memory": 2e9,
        "resources": {"a100": 1.0},
        "max_retries": 2,
        "retry_exceptions": [OSError],
    }
    assert task_options(Unit("m", print), 0) == {"num_cpus": 1.0, "max_retries": 0, "retry_exceptions": False}


class _RayError(Exception):
    pass


class _RaySystemError(_RayError):
    pass


class _RayTaskError(_RayError):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"task failed: {cause}")
        self.cause = cause


def _fake_ray(asked: list[dict[str, Any]]) -> types.SimpleNamespace:
    """A Ray that runs each task when it is submitted (a worker lost where the work raises ``MemoryError``)."""
    errors = {"RayError": _RayError, "RayTaskError": _RayTaskError, "RaySystemError": _RaySystemError}
    ray = types.SimpleNamespace(exceptions=types.SimpleNamespace(**errors))
    ray.is_initialized = lambda: True  # joined already: no init, no shutdown
    ray.get_runtime_context = lambda: types.SimpleNamespace(get_node_id=lambda: "node-1", get_task_id=lambda: "t")

    def submit(function: Any, options: dict[str, Any], work: Any) -> tuple[str, Any]:
        asked.append(options)
        try:
            return "done", function(work)
        except MemoryError as error:
            return "lost", _RayError(f"worker died: {error}")
        except Exception as error:
            return "raised", _RayTaskError(error)

    def remote(function: Any) -> Any:
        def with_options(**options: Any) -> Any:
            return types.SimpleNamespace(remote=lambda work: submit(function, options, work))

        return types.SimpleNamespace(options=with_options)

    def get(ref: tuple[str, Any]) -> Any:
        if ref[0] == "done":
            return ref[1]
        raise ref[1]

    ray.remote = remote
    ray.get = get
    ray.wait = lambda refs, num_returns, timeout: (refs[:num_returns], refs[num_returns:])
    return ray


def test_the_ray_peer_asks_for_each_units_resources_and_hands_failures_to_the_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[dict[str, Any]] = []
    ray = _fake_ray(asked)
    monkeypatch.setitem(sys.modules, "ray", ray)  # the task's own ``import ray`` (never a real Ray here)
    units = [
        Unit("a", partial(_echo, "a"), {"GPU": 1.0}),
        Unit("b", partial(_fail, ValueError("bad row"))),
        Unit("c", partial(_fail, MemoryError("oom"))),
    ]
    failures: list[UnitError] = []
    executor = executor_for("ray", retries=1, importer=lambda: ray)
    results = executor.run(units, failed=lambda _, error: failures.append(error) or error.label)
    assert results == [("a", "ray"), "b", "c"], [str(failure) for failure in failures]
    assert [task["num_gpus"] for task in asked[:1]] == [1.0] and {task["max_retries"] for task in asked} == {1}
    assert [(type(f.cause).__name__, f.lost) for f in failures] == [("ValueError", False), ("_RayError", True)]
    with pytest.raises(UnitError, match="^b: ValueError: bad row$"):
        executor.run(units[1:2])
