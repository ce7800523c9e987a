"""The one way the suite starts a child process: the board's ``lm_eval`` runs and shard merges, an
improve study's ``lm_eval`` runs, and the short helper commands both ask (an embedded model's
checksum, a task's document count).

Every child gets its own process group, so a stop reaches what it started too (SIGTERM, then SIGKILL
after :data:`KILL_GRACE_SECONDS`), and on Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, so the kernel
kills it when its parent dies, even by SIGKILL (the death signal is per process: what the child
itself starts is reached through the group instead). :func:`run_logged` appends the child's output,
credentials redacted, to a kept log, stops it past its ``timeout`` and stops it before re-raising a
stop of the parent (Ctrl-C, or :class:`Stopped` for SIGTERM and SIGHUP under :func:`stop_signals_raise`).
A caller holding a lock the child must keep (the build lock) passes its descriptors (``pass_fds``) and
records the child's group while it runs (``track``), for :func:`end_group` by whoever takes the lock
over from a dead caller: a wrapper script's children are in that group, out of the death signal's
reach. :func:`start_child` starts a long-running child (a server) the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from logic_consistency.credentials import Redactor

__all__ = [
    "CHILD_MARKS",
    "KILL_GRACE_SECONDS",
    "STDERR_TAIL_LINES",
    "STOP_SIGNALS",
    "Captured",
    "ProcessResult",
    "Stopped",
    "death_signal_setter",
    "default_lm_eval",
    "end_group",
    "group_members",
    "run_captured",
    "run_logged",
    "start_child",
    "stop_group",
    "stop_signals_raise",
]

#: Lines of a child's stderr kept for its caller's error message (a failed row's record, an error).
STDERR_TAIL_LINES = 30
#: Seconds between SIGTERM and SIGKILL when a child is stopped.
KILL_GRACE_SECONDS = 10.0
#: ``prctl`` option: the signal a process receives when its parent thread exits (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Signals treated like Ctrl-C: what ``timeout``, systemd, CI cancellation and a closed terminal send.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
#: Variables every child gets on top of its environment: the marks of the build locks this process holds
#: (``leaderboard/run/lock.py`` sets them), so that a descendant which left the group (``setsid``) is found.
CHILD_MARKS: dict[str, str] = {}


class Stopped(BaseException):  # noqa: N818 - a stop request like KeyboardInterrupt, not an error
    """SIGTERM or SIGHUP arrived; raised where the program was, so a running child is stopped first.

    A ``BaseException`` (like :class:`KeyboardInterrupt`) so that no ``except Exception`` swallows it.

    Attributes:
        signum: The signal number; a command exits with ``128 + signum`` (143, 129).
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Stopped` (handlers restored after).

    Only the main thread can install handlers; elsewhere the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def default_lm_eval() -> str:
    """The ``lm_eval`` next to this Python (the venv's), else the one on ``PATH``."""
    found = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or shutil.which("lm_eval")
    return found or "lm_eval"


def death_signal_setter() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the kernel SIGKILL the child when its parent dies (Linux), else ``None``.

    ``prctl`` is looked up here, in the parent, so that the child only makes one system call
    between ``fork`` and ``exec`` (no import, no allocation).
    """
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    kill = int(signal.SIGKILL)

    def set_death_signal() -> None:  # pragma: no cover - runs in the child
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)

    return set_death_signal


def _kill_group(process: subprocess.Popen[Any], sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(process: subprocess.Popen[Any]) -> None:
    """SIGTERM the child's process group, then SIGKILL it if it has not exited after a grace period."""
    _kill_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(process, signal.SIGKILL)
        process.wait()


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``, read from ``/proc`` on Linux; elsewhere
    ``[pgid]`` while the group can still be signalled, else ``[]``."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").is_file():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            members.append(int(entry.name))
    return members


def _group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def end_group(pgid: int, *, grace: float = KILL_GRACE_SECONDS) -> bool:
    """End process group ``pgid`` (started by a process that may be gone) and wait until it has ended:
    SIGTERM, SIGKILL after ``grace`` seconds. Returns whether it ended (a process stuck in the kernel
    may outlast SIGKILL); a group already gone ends at once."""
    if not group_members(pgid):
        return True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if _group_gone(pgid, grace):
        return True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    return _group_gone(pgid, grace)


def start_child(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    pass_fds: Sequence[int] = (),
    text: bool = False,
) -> subprocess.Popen[Any]:
    """``command`` in a new process group (session) with the death signal: the one place a child starts.

    The caller stops it with :func:`stop_group` (what it started too), or waits for it; ``text``:
    its pipes carry text (UTF-8), not bytes.
    """
    return subprocess.Popen(
        list(command),
        text=text,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env={**(env if env is not None else os.environ), **CHILD_MARKS},
        start_new_session=True,
        pass_fds=tuple(pass_fds),
        preexec_fn=death_signal_setter(),
    )


@dataclass(frozen=True)
class ProcessResult:
    """How a logged child ended."""

    returncode: int | None
    stderr_tail: str
    timed_out: bool
    seconds: float


def _stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def run_logged(
    command: Sequence[str],
    *,
    log_file: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    on_output: Callable[[str], None] | None = None,
    redactor: Redactor | None = None,
    shown: Sequence[str] | None = None,
    pass_fds: Sequence[int] = (),
    track: Callable[[int], AbstractContextManager[object]] | None = None,
) -> ProcessResult:
    """Run ``command`` in its own process group, appending its output to ``log_file``.

    Args:
        command: Program and arguments.
        log_file: Receives stdout and stderr (appended, after a line echoing the command).
        env: Environment (default: this process's).
        timeout: Seconds before the whole process group is stopped (``None``: no limit).
        on_output: Called with each output line (progress display).
        redactor: Replaces credentials in the command echo and each output line before they are
            logged, kept or shown (default: the key environment variables of ``env``).
        shown: The command as the log's echo shows it (default: ``command``): publish by allowlist,
            e.g. only the public model arguments.
        pass_fds: Descriptors the child inherits (a lock it must hold until it has exited).
        track: Given the child's process group id, a context held while the child runs (the build
            lock records the group, for :func:`end_group` by whoever takes a dead build's lock over).

    Returns:
        Exit status (``None`` if it had to be stopped), the last stderr lines, whether it timed out.

    Raises:
        KeyboardInterrupt: Re-raised after stopping the process group; so is any other exception
            raised meanwhile, e.g. :class:`Stopped` for SIGTERM / SIGHUP.
    """
    log_file.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    lock = threading.Lock()
    clean = redactor or Redactor.from_environment(env)
    with log_file.open("ab") as log:
        log.write(clean.text(f"\n=== {_stamp(time.time())} $ {' '.join(shown or command)}\n").encode())
        log.flush()
        with contextlib.ExitStack() as tracked:  # left when the child has ended
            process = start_child(command, env=env, pass_fds=pass_fds)
            try:
                if track is not None:
                    tracked.enter_context(track(process.pid))
            except BaseException:
                stop_group(process)
                raise
            return _pump_and_wait(process, log, lock, clean, tail, on_output, timeout, started)


def _pump_and_wait(
    process: subprocess.Popen[bytes],
    log: IO[bytes],
    lock: threading.Lock,
    clean: Redactor,
    tail: deque[str],
    on_output: Callable[[str], None] | None,
    timeout: float | None,
    started: float,
) -> ProcessResult:
    """Copy the child's output to ``log`` (redacted) until it ends; stop its group past ``timeout``
    or on any exception of the parent (re-raised)."""

    def pump(stream: IO[bytes], keep: bool) -> None:
        for raw in stream:
            data = clean.text(raw.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")
            with lock:
                log.write(data)
            text = data.decode("utf-8", errors="replace").rstrip("\n")
            last = [piece for piece in text.split("\r") if piece.strip()]
            if not last:
                continue
            if keep:
                tail.append(last[-1])
            if on_output is not None:
                on_output(last[-1])

    assert process.stdout is not None and process.stderr is not None
    threads = [
        threading.Thread(target=pump, args=(process.stdout, False), daemon=True),
        threading.Thread(target=pump, args=(process.stderr, True), daemon=True),
    ]
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_group(process)
    except BaseException:
        stop_group(process)
        raise
    finally:
        for thread in threads:
            thread.join(timeout=5)
    returncode = None if timed_out else process.returncode
    return ProcessResult(returncode, "\n".join(tail), timed_out, time.monotonic() - started)


@dataclass(frozen=True)
class Captured:
    """A short helper command's exit status and output (decoded as UTF-8)."""

    returncode: int
    stdout: str
    stderr: str


def run_captured(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,  # noqa: A002 - subprocess's name for it
) -> Captured:
    """Run a short helper command to its end and return its output (nothing is logged); ``input`` is
    written to its standard input (default: none, ``/dev/null``).

    Raises:
        subprocess.TimeoutExpired: Past ``timeout`` (the process group is stopped first).
        KeyboardInterrupt: Re-raised after stopping the process group (any other exception too).
    """
    process = start_child(command, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
    try:
        out, err = process.communicate(input, timeout=timeout)
    except BaseException:
        stop_group(process)
        raise
    return Captured(process.returncode, out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"))
