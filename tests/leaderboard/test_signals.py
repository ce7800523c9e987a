"""``leaderboard build`` under SIGTERM, SIGHUP and SIGKILL: no model process survives, the board is kept.

A slow fake ``lm_eval`` (a small Python script) stands in for the model run: it records its pid,
the pid of a child it starts (the way lm_eval may start helpers) and its open descriptors, then
sleeps. The build is a real ``logic-consistency leaderboard build`` subprocess; what survives is
read from the process table (``/proc``).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.run.lock import BuildLockedError, build_lock
from logic_consistency.outputs import atomic_write_json

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc"),
    pytest.mark.slow,  # each test starts a build and its children
]

LOGIC_CONSISTENCY = Path(sys.executable).parent / "logic-consistency"

SLOW_LM_EVAL = """\
#!{python}
import json, os, subprocess, sys, time
from pathlib import Path
args = sys.argv[1:]
model = Path(args[args.index("--output_path") + 1]).name.rsplit("-", 1)[0]  # runs/<night>/<name>-<hash>
state = Path({state!r})
helper = None
if model == "slow-with-helper":
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid
fds = sorted(os.readlink(f"/proc/self/fd/{{fd}}") for fd in os.listdir("/proc/self/fd")
             if os.path.islink(f"/proc/self/fd/{{fd}}"))
tmp = state.with_suffix(".tmp")
tmp.write_text(json.dumps({{"pid": os.getpid(), "helper": helper, "fds": fds}}))
os.replace(tmp, state)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie awaiting its parent counts as dead)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "State:\tZ" not in status


def _wait(condition: Any, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def _start_build(tmp_path: Path, model: str, hand_board: dict[str, Any]) -> tuple[subprocess.Popen[str], Path, Path]:
    state = tmp_path / "fake_state.json"
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(SLOW_LM_EVAL.format(python=sys.executable, state=str(state)), encoding="utf-8")
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  - {{name: {model}, model: dummy}}\n", encoding="utf-8")
    board = tmp_path / "board" / "leaderboard.json"
    atomic_write_json(board, hand_board)
    build = children.start(
        [
            str(LOGIC_CONSISTENCY),
            "leaderboard",
            "build",
            "--models",
            str(models),
            "--out",
            str(board.parent),
            "--lm-eval",
            str(fake),
            "--night",
            "2026-06-01",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert _wait(state.exists, 120), "the fake lm_eval never started"  # after the pre-flight checks (lm-eval imports)
    return build, state, board


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_term_and_hup_stop_the_model_and_its_children_and_keep_the_board(
    tmp_path: Path, sig: signal.Signals, status: int, hand_board: dict[str, Any]
) -> None:
    build, state, board = _start_build(tmp_path, "slow-with-helper", hand_board)
    before = board.read_bytes()
    fake = json.loads(state.read_text())
    assert _alive(fake["pid"]) and _alive(fake["helper"])
    # The run inherits the build lock's descriptor: the lock outlives the build as long as the run does.
    assert str(board.parent / ".leaderboard.lock") in fake["fds"]
    build.send_signal(sig)
    _, err = build.communicate(timeout=60)
    assert build.returncode == status, err
    assert f"interrupted by {sig.name}" in err and "previous leaderboard is unchanged" in err
    assert _wait(lambda: not _alive(fake["pid"]) and not _alive(fake["helper"]), 15), "a model process survived"
    assert board.read_bytes() == before
    with build_lock(board.parent):  # released
        pass


def test_sigkill_of_the_build_kills_the_model_run(tmp_path: Path, hand_board: dict[str, Any]) -> None:
    build, state, board = _start_build(tmp_path, "slow", hand_board)
    before = board.read_bytes()
    fake = json.loads(state.read_text())
    assert _alive(fake["pid"])
    build.kill()
    build.communicate(timeout=60)
    assert build.returncode == -signal.SIGKILL
    # The kernel's parent-death signal kills the orphan; until it has gone, the folder stays locked.
    assert _wait(lambda: not _alive(fake["pid"]), 15), "lm_eval survived the SIGKILL of its build"
    assert board.read_bytes() == before
    assert _wait(lambda: _lock_free(board.parent), 15)


def _lock_free(folder: Path) -> bool:
    try:
        with build_lock(folder):
            return True
    except BuildLockedError:
        return False


def _flock_free(lock_file: Path) -> bool:
    """Whether an ``flock`` of the lock file itself (not :func:`build_lock`, which takes stale locks over) is free."""
    with lock_file.open("a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return True


def test_a_child_of_a_killed_build_keeps_the_lock_held_but_the_next_build_takes_it_over(tmp_path: Path) -> None:
    """A child the death signal missed (e.g. a helper of lm_eval) keeps the old lock held; since its
    build is gone, the next build takes the stale lock over (with a warning) instead of waiting for it."""
    folder, ready = tmp_path / "board", tmp_path / "child.pid"
    holder = (
        "import subprocess, sys, time\n"
        "from logic_consistency.leaderboard.run.lock import build_lock, held_lock_fds\n"
        f"with build_lock({str(folder)!r}):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], pass_fds=held_lock_fds())\n"
        f"    open({str(ready)!r}, 'w').write(str(child.pid))\n"
        "    time.sleep(600)\n"
    )
    build = children.start([sys.executable, "-c", holder])
    assert _wait(lambda: ready.exists() and ready.read_text() != "")
    child = int(ready.read_text())
    build.kill()
    build.wait()
    warnings: list[str] = []
    try:
        assert _alive(child)
        assert not _flock_free(folder / ".leaderboard.lock"), (
            "the lock was released while a child of the killed build runs"
        )
        with build_lock(folder, warn=warnings.append):
            pass
    finally:
        os.kill(child, signal.SIGKILL)
    assert len(warnings) == 1 and f"pid {build.pid}" in warnings[0], warnings
    assert _wait(lambda: _lock_free(folder), 15)


def test_a_build_on_a_copy_of_a_running_builds_folder_leaves_the_original_build_alone(
    tmp_path: Path, hand_board: dict[str, Any]
) -> None:
    """``cp -a`` of a board folder while its build runs, then a build on the copy: the copied lock record names
    the original build's mark, but it is not the copy's record (another folder and lock file): nothing is ended."""
    build, state, board = _start_build(tmp_path, "slow", hand_board)
    fake = json.loads(state.read_text())
    copy = tmp_path / "copy"
    try:
        children.run(["cp", "-a", str(board.parent), str(copy)], check=True, timeout=60)
        quick = tmp_path / "quick_lm_eval"
        quick.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(3)\n", encoding="utf-8")
        quick.chmod(0o755)
        command = [str(LOGIC_CONSISTENCY), "leaderboard", "build", "--models", str(tmp_path / "models.yaml")]
        command += ["--out", str(copy), "--lm-eval", str(quick), "--night", "2026-06-02", "--no-progress"]
        on_copy = children.run(command, capture_output=True, text=True, timeout=300)
        assert on_copy.returncode == 1, on_copy.stderr[-3000:]  # its own model failed (exit 3), as it should
        assert "is not this folder's" in on_copy.stderr and str(fake["pid"]) in on_copy.stderr
        time.sleep(1)
        assert _alive(fake["pid"]), "the build on the copy ended the original build's model run"
        assert build.poll() is None  # the original build still runs, its lock still its own
    finally:
        build.send_signal(signal.SIGTERM)
        build.communicate(timeout=60)
    assert _wait(lambda: not _alive(fake["pid"]), 15)
