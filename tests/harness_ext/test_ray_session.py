"""The one Ray session (``harness_ext/jobs/ray_session.py``) under the study's executor, with a stand-in
for Ray (no cluster): the study gets the board's error translation (a lost head is one line naming it
and what the study keeps), a stop wrapped by Ray comes out as the stop, and a Ray the study started is
shut down whatever happens (issue 41, item 5)."""

from __future__ import annotations

import signal
import types
from typing import Any

import pytest

from logic_consistency.harness_ext.jobs.processes import Stopped
from logic_consistency.harness_ext.jobs.ray_session import RayClusterError, ray_session
from logic_consistency.harness_ext.training import study_executor as study_executor_module
from logic_consistency.harness_ext.training.study_executor import StudyUnit, study_executor


class _RaySystemError(Exception):
    """Stands for ``ray.exceptions.RaySystemError``."""


def _fake_ray(nodes: Any) -> types.SimpleNamespace:
    """A Ray whose ``init`` records its options and whose ``nodes`` is ``nodes`` (a callable)."""
    calls: list[str] = []
    ray = types.SimpleNamespace(calls=calls, exceptions=types.SimpleNamespace(RaySystemError=_RaySystemError))
    ray.is_initialized = lambda: False
    ray.init = lambda **options: calls.append(f"init {options['namespace']}")
    ray.shutdown = lambda: calls.append("shutdown")
    ray.nodes = nodes
    return ray


def _unit() -> StudyUnit:
    return StudyUnit("gv_round_0", ("gv_round_0",), lambda ran_on: [])


def _lost(*_: Any) -> Any:
    raise ConnectionError("GCS at 10.0.0.1:6379 went away")


def test_a_lost_head_is_one_line_naming_what_the_study_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _fake_ray(_lost)
    monkeypatch.setattr(study_executor_module, "require_ray", lambda: ray)
    with pytest.raises(RayClusterError) as lost:
        study_executor("ray")([_unit()])
    assert str(lost.value) == (
        "lost the Ray head (the local Ray this study started): ConnectionError: GCS at 10.0.0.1:6379 went away; "
        "the study stopped; its finished rows are kept (run the same command to resume)"
    )
    assert ray.calls == ["init logic-consistency", "shutdown"]


def test_a_stop_wrapped_by_ray_is_the_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrapped(*_: Any) -> Any:
        try:
            raise Stopped(signal.SIGTERM)
        except Stopped as stop:
            raise _RaySystemError("returned a result with an exception set") from stop

    ray = _fake_ray(wrapped)
    monkeypatch.setattr(study_executor_module, "require_ray", lambda: ray)
    with pytest.raises(Stopped) as stopped:
        study_executor("ray")([_unit()])
    assert stopped.value.signum == signal.SIGTERM and ray.calls[-1] == "shutdown"


def test_an_error_of_the_job_itself_passes_untranslated_and_a_joined_ray_is_left_running() -> None:
    ray = _fake_ray(lambda: [])
    ray.is_initialized = lambda: True  # connected before: not this session's to shut down
    with pytest.raises(ValueError, match="the job's own"), ray_session(ray, None, job="study", ending="-"):
        raise ValueError("the job's own")
    assert ray.calls == []


def test_a_bad_address_is_refused_before_ray_starts() -> None:
    ray = _fake_ray(lambda: [])
    with (
        pytest.raises(RayClusterError, match="--ray-address 'nowhere'"),
        ray_session(ray, "nowhere", job="x", ending="-"),
    ):
        pass
    assert ray.calls == []
