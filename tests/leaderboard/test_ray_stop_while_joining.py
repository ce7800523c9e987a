"""SIGTERM while the build joins the Ray cluster ends as a stop (exit status 143, the "interrupted" line),
however Ray wraps the stop raised inside its calls: a ``SystemError`` around it ("returned a result
with an exception set"), a ``RaySystemError`` or ``ConnectionError`` whose cause it is, or Ray's own
``SystemExit(15)``. A stand-in for Ray sends the real signal from inside ``ray.init`` or ``ray.nodes``."""

from __future__ import annotations

import os
import signal
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.cli.app import main
from logic_consistency.leaderboard.run import ray_executor


class _RaySystemError(Exception):
    """Stands for ``ray.exceptions.RaySystemError``."""


def _sigterm_wrapped_in(wrapper: type[BaseException] | None) -> None:
    """Send SIGTERM to this process; the build's handler raises its stop here, which Ray then wraps."""
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at once
    except BaseException as stop:
        if wrapper is None:
            raise
        raise wrapper("<built-in method get_all_node_info> returned a result with an exception set") from stop
    raise AssertionError("no signal arrived")


def _fake_ray(where: str, wrapper: type[BaseException] | None) -> Any:
    ray = types.SimpleNamespace(exceptions=types.SimpleNamespace(RaySystemError=_RaySystemError))
    ray.is_initialized = lambda: False
    ray.shutdown = lambda: None
    ray.init = lambda **_: _sigterm_wrapped_in(wrapper) if where == "init" else None
    ray.nodes = lambda: _sigterm_wrapped_in(wrapper) if where == "nodes" else []
    return ray


def _ray_exit(**_: Any) -> None:  # Ray's own SIGTERM handler in the driver: sys.exit(signum)
    raise SystemExit(signal.SIGTERM)


@pytest.mark.parametrize(
    "where, wrapper",
    [
        ("init", SystemError),
        ("init", ConnectionError),
        ("init", None),
        ("nodes", SystemError),
        ("nodes", _RaySystemError),
        ("nodes", ConnectionError),
    ],
    ids=[
        "init-SystemError",
        "init-ConnectionError",
        "init-plain",
        "nodes-SystemError",
        "nodes-RaySystemError",
        "nodes-ConnectionError",
    ],
)
def test_sigterm_while_joining_is_a_stop(
    where: str, wrapper: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ray_executor, "require_ray", lambda: _fake_ray(where, wrapper))
    status = _build(tmp_path)
    err = capsys.readouterr().err
    assert status == 143, err
    assert "interrupted by SIGTERM" in err.strip().splitlines()[-1], err
    assert not (tmp_path / "lb" / "leaderboard.json").exists()


def test_rays_own_sigterm_exit_while_joining_is_a_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ray = _fake_ray("", None)
    ray.init = _ray_exit
    monkeypatch.setattr(ray_executor, "require_ray", lambda: ray)
    assert _build(tmp_path) == 143
    assert "interrupted by SIGTERM" in capsys.readouterr().err


def _build(tmp: Path) -> int:
    if threading.current_thread() is not threading.main_thread():  # the build's handlers go on the main thread
        pytest.skip("a real SIGTERM needs the build's handlers, which only the main thread installs")
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: m, model: dummy, tasks: logic_consistency_summeval, limit: 1}\n")
    argv = ["leaderboard", "build", "--models", str(models), "--out", str(tmp / "lb"), "--no-progress"]
    return main([*argv, "--executor", "ray", "--lm-eval", "/bin/false", "--night", "2026-01-01"])
