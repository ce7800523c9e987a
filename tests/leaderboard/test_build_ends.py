"""Every build ends: a default per-model timeout kills a trickling run's whole process group, and a
build lock whose holder is gone or past its deadline is taken over (with a warning), never blocking
the next night."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.cli.leaderboard import add_cli
from logic_consistency.harness_ext.jobs.processes import KILL_GRACE_SECONDS
from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.lock import BuildLockedError, build_lock
from logic_consistency.leaderboard.run.modellist import DEFAULT_TIMEOUT_SECONDS, load_model_list
from logic_consistency.leaderboard.run.nightly import build, build_deadline

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_signals import _alive, _wait  # noqa: E402 - this folder's process-table helpers

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")

BOOT = BootstrapSettings(n_resamples=300)

#: A stand-in for lm_eval whose "endpoint" trickles: it and a helper it starts each write a byte
#: every 0.2 s forever (a per-read timeout would never fire). The helper's pid goes to a file.
TRICKLING_LM_EVAL = """\
#!{python}
import os, subprocess, sys, time
trickle = "import sys, time\\nwhile True:\\n    sys.stderr.write('.'); sys.stderr.flush(); time.sleep(0.2)\\n"
helper = subprocess.Popen([sys.executable, "-c", trickle])
with open({pids!r}, "a") as out:
    out.write(f"{{os.getpid()}} {{helper.pid}}\\n")
exec(trickle)
"""


def _models(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_default_timeout_is_set_stated_and_overridable(tmp_path: Path) -> None:
    listed = _models(
        tmp_path,
        "timeout: 600\nmodels:\n  - {name: a, model: dummy}\n  - {name: b, model: dummy, timeout: 60}\n"
        "  - {name: c, model: dummy, timeout: null}\n",
    )
    assert [s.timeout for s in load_model_list(listed)] == [600.0, 60.0, DEFAULT_TIMEOUT_SECONDS]
    assert [s.timeout for s in load_model_list(listed, {"timeout": 5.0})] == [5.0, 5.0, 5.0]
    bare = _models(tmp_path, "models:\n  - {name: a, model: dummy}\n")
    assert load_model_list(bare)[0].timeout == DEFAULT_TIMEOUT_SECONDS == 21600
    for bad in ("1e300", "-1", ".nan", ".inf", "true"):
        with pytest.raises(ValueError, match="'timeout' must be"):
            load_model_list(_models(tmp_path, f"timeout: {bad}\nmodels:\n  - {{name: a, model: dummy}}\n"))
    import argparse

    parser = argparse.ArgumentParser()
    add_cli(parser.add_subparsers())
    build_help = parser._subparsers._group_actions[0].choices["leaderboard"]  # type: ignore[union-attr]
    text = build_help._subparsers._group_actions[0].choices["build"].format_help()  # type: ignore[union-attr]
    assert "21600 = 6 hours" in " ".join(text.split())
    manual = (Path(__file__).resolve().parents[2] / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    assert "21600 = 6 hours" in manual


def test_a_trickling_run_is_killed_with_its_children_and_the_next_build_runs(tmp_path: Path) -> None:
    pids = tmp_path / "pids.txt"
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(TRICKLING_LM_EVAL.format(python=sys.executable, pids=str(pids)), encoding="utf-8")
    fake.chmod(0o755)
    models = _models(tmp_path, "models:\n  - {name: trickle, model: dummy, timeout: 2}\n")
    out = tmp_path / "board"
    lines: list[str] = []
    first = build(
        out, model_list=models, night="2026-05-01", lm_eval=str(fake), bootstrap=BOOT, progress=False, log=lines.append
    )
    # the run (started after the pre-flight checks) ends at its deadline, not when the trickle stops
    assert first.failed[0].seconds < 2 + KILL_GRACE_SECONDS + 10, first.failed[0].seconds
    assert first.failed[0].failure is not None
    assert first.failed[0].failure["error"]["code"] == "timeout"  # the board holds a code (issue 46)
    log = first.failed[0].log_file.read_text(encoding="utf-8")
    assert "failure timeout: timed out after 2 s; stopped" in log and "." in log  # it did trickle
    for pid in map(int, pids.read_text().split()):
        assert _wait(lambda pid=pid: not _alive(pid), 15), f"process {pid} of the run outlived its deadline"
    # the next night's build runs on the same folder (the lock was released)
    second = build(
        out, model_list=models, night="2026-05-02", lm_eval=str(fake), bootstrap=BOOT, progress=False, log=lines.append
    )
    assert [n["night"] for n in second.document["nights"]] == ["2026-05-01", "2026-05-02"]
    assert len(second.document["failures"]) == 1  # the newer failure of the same model
    assert not any("taking over" in line for line in lines)


def test_the_build_deadline_covers_every_timeout() -> None:
    specs = load_model_list(None, {"timeout": 100.0})
    assert build_deadline(specs) > 100.0 * len(specs) + 2 * KILL_GRACE_SECONDS * len(specs)


HOLDER = """\
import sys, threading, time
from pathlib import Path
from logic_consistency.harness_ext.jobs.processes import run_logged
from logic_consistency.leaderboard.run.lock import BuildLockedError, build_lock, child_group_recorded, held_lock_fds
folder, ready, go, deadline, wrapper = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
with build_lock(folder, deadline_seconds=deadline) as lock:
    def run():  # as runner.run_logged starts a model run: the lock's descriptor, its group recorded
        run_logged([wrapper, ready], log_file=folder / "run.log", pass_fds=held_lock_fds(), track=child_group_recorded)
    threading.Thread(target=run, daemon=True).start()
    while not go.exists():
        time.sleep(0.05)
    try:
        lock.check()
        print("still mine")
    except BuildLockedError as error:
        print(f"refused: {error}")
"""

#: A wrapper script given as ``--lm-eval`` (issue 46, item 7): it starts "the real run" (here a
#: ``sleep``) and waits. The parent-death signal reaches the wrapper, not what it started.
WRAPPER = """\
#!/bin/sh
sleep 600 &
echo $! > "$1.tmp" && mv "$1.tmp" "$1"
wait
"""


def _holder(tmp_path: Path, deadline: float) -> tuple[subprocess.Popen[str], int, Path]:
    """A build holding the lock, with one model run (a wrapper script and its child) recorded in it;
    returns the build, the wrapper's child's pid, and the file that lets the build go on."""
    ready, go, wrapper = tmp_path / "ready", tmp_path / "go", tmp_path / "lm_eval_wrapper"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    process = children.start(
        [sys.executable, "-c", HOLDER, str(tmp_path / "board"), str(ready), str(go), str(deadline), str(wrapper)],
        stdout=subprocess.PIPE,
        text=True,
    )
    lock = tmp_path / "board" / ".leaderboard.lock"
    assert _wait(lambda: ready.exists() and json.loads(lock.read_text() or "{}").get("groups")), "no run recorded"
    return process, int(ready.read_text()), go


@pytest.mark.slow
def test_a_live_holder_within_its_deadline_blocks_and_is_named(tmp_path: Path) -> None:
    holder, child, go = _holder(tmp_path, 3600)
    try:
        with pytest.raises(BuildLockedError, match=rf"another leaderboard build is running.*pid {holder.pid} on host"):
            with build_lock(tmp_path / "board"):
                pass
        go.touch()
        assert holder.communicate(timeout=30)[0].strip() == "still mine"
    finally:
        os.kill(child, signal.SIGKILL)
        holder.kill()


@pytest.mark.slow
def test_a_lock_whose_holder_is_gone_is_taken_over_with_a_warning(tmp_path: Path) -> None:
    """The holder is SIGKILLed; a run it started (the child) still holds the descriptor."""
    holder, child, _ = _holder(tmp_path, 3600)
    groups = json.loads((tmp_path / "board" / ".leaderboard.lock").read_text())["groups"]
    holder.kill()
    holder.wait()
    warnings: list[str] = []
    try:
        assert _wait(lambda: _alive(child)), "the wrapper's child should outlive the build (the bug of issue 46.7)"
        with build_lock(tmp_path / "board", warn=warnings.append) as lock:
            assert not _alive(child), "the old build's run was not ended before the takeover"
            lock.check()
            record = json.loads(lock.path.read_text(encoding="utf-8"))
            assert record["pid"] == os.getpid() and record["deadline"] is None and record["groups"] == []
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
    assert len(warnings) == 1, warnings
    assert f"taking over the stale lock of the build with pid {holder.pid} on host" in warnings[0]
    assert "its process is gone" in warnings[0] and f"ending its runs' process groups {groups} first" in warnings[0]


@pytest.mark.slow
def test_a_lock_past_its_deadline_is_taken_over_and_the_old_build_writes_nothing(tmp_path: Path) -> None:
    holder, child, go = _holder(tmp_path, 1)
    warnings: list[str] = []
    try:
        time.sleep(2.2)  # past the holder's deadline (recorded to the second)
        with build_lock(tmp_path / "board", deadline_seconds=60, warn=warnings.append) as lock:
            assert not _alive(child)  # the stuck build's run is ended too, before this build writes
            lock.check()
            go.touch()
            answer = holder.communicate(timeout=30)[0].strip()
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        holder.kill()
    assert len(warnings) == 1 and f"pid {holder.pid}" in warnings[0] and "past its deadline" in warnings[0]
    assert answer.startswith("refused: ") and "taken over by another build" in answer
    assert f"pid {os.getpid()}" in answer
    with build_lock(tmp_path / "board", warn=warnings.append):  # released normally: no second warning
        pass
    assert len(warnings) == 1


def test_a_model_run_is_started_with_its_group_recorded_in_the_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's one starter of model runs hands the lock's descriptors and its group recorder over."""
    from logic_consistency.harness_ext.jobs import processes
    from logic_consistency.leaderboard.run import runner
    from logic_consistency.leaderboard.run.lock import child_group_recorded

    given: dict[str, object] = {}
    monkeypatch.setattr(processes, "run_logged", lambda command, **options: given.update(options))
    runner.run_logged(["lm_eval"], log_file=Path("unused.log"))
    assert given["track"] is child_group_recorded and "pass_fds" in given


#: A run that leaves the build's process group (issue 46, leftover): it forks a child that calls
#: ``setsid`` (its own session, out of every group the build ends), prints its pid and exits.
SETSID_RUN = """\
import os, time
pid = os.fork()
if pid == 0:
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(120)
    os._exit(0)
print(pid, flush=True)
"""


@pytest.mark.slow
def test_a_descendant_that_called_setsid_ends_with_the_build(tmp_path: Path) -> None:
    """Every child carries the lock's mark in its environment; the build's end ends every process carrying it."""
    escaped = 0
    try:
        with build_lock(tmp_path / "board"):
            started = children.run([sys.executable, "-c", SETSID_RUN], capture_output=True, text=True, timeout=30)
            escaped = int(started.stdout)
            assert os.getsid(escaped) == escaped and _alive(escaped)  # out of the run's group and session
        assert _wait(lambda: not _alive(escaped), 15), "the setsid descendant outlived the build"
    finally:
        if escaped and _alive(escaped):
            os.kill(escaped, signal.SIGKILL)


@pytest.mark.slow
def test_what_a_killed_build_left_outside_its_lock_is_ended_by_the_next_build(tmp_path: Path) -> None:
    """A free lock whose holder was killed: a descendant that let go of the lock's descriptor (setsid and
    closed files) still runs; the next build ends it before it writes, naming it."""
    import socket

    from logic_consistency.leaderboard.run.descendants import MARK_VARIABLE

    mark = "0123456789abcdef" * 2
    board = tmp_path / "board"
    board.mkdir()
    record = {"pid": 2**22 + 1, "host": socket.gethostname(), "started": "2026-01-01T00:00:00Z", "mark": mark}
    lock_file = board / ".leaderboard.lock"
    lock_file.touch()  # the record names this folder and this lock file (device, inode): it is theirs
    record.update(
        folder=[board.stat().st_dev, board.stat().st_ino], lock=[lock_file.stat().st_dev, lock_file.stat().st_ino]
    )
    lock_file.write_text(json.dumps(record), encoding="utf-8")
    left = children.start(
        [sys.executable, "-c", "import time; time.sleep(120)"], env={**os.environ, MARK_VARIABLE: mark}
    )
    warnings: list[str] = []
    try:
        assert _wait(lambda: f"{MARK_VARIABLE}={mark}".encode() in Path(f"/proc/{left.pid}/environ").read_bytes())
        with build_lock(board, warn=warnings.append) as lock:
            assert not _alive(left.pid) or left.poll() is not None
            assert json.loads(lock.path.read_text(encoding="utf-8"))["mark"] != mark
    finally:
        children.stop(left)
    assert len(warnings) == 1 and f"ending the processes [{left.pid}] left by the build with pid" in warnings[0]
