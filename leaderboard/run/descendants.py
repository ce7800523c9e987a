"""A build's descendants, found by the mark in their environment, even after they left its process group.

Every child a build starts carries :data:`MARK_VARIABLE` (the random ``mark`` of the build lock, set in
``harness_ext.jobs.processes.CHILD_MARKS`` while the lock is held by :mod:`.lock`), and so does everything
it starts in turn: a process that called ``setsid`` (a wrapper's real run, a daemon) is outside the process
group a stop reaches, but not outside its environment. :func:`end_marked` ends them all, when the build
ends and when a later build takes the folder over from a dead one. Linux reads the environment a process
started with from ``/proc/PID/environ``; other systems have no such file, and there only the recorded
process groups are ended (a descendant that called ``setsid`` escapes them). A descendant that clears its
environment (``env -i``) escapes the mark too. ``PR_SET_CHILD_SUBREAPER`` would only reparent orphans to
a build that is still alive, not to one that was SIGKILLed, so the mark is used instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from logic_consistency.harness_ext.jobs.processes import KILL_GRACE_SECONDS

__all__ = ["MARKS_READABLE", "MARK_VARIABLE", "end_marked", "marked_processes"]

#: The environment variable that marks every child of a build (``harness_ext.jobs.processes.CHILD_MARKS``):
#: the random ``mark`` of each build lock held when it started (space-separated). A child inherits it, and so
#: does what it starts, a process that called ``setsid`` or left the group included.
MARK_VARIABLE = "LOGIC_CONSISTENCY_BUILD_MARK"

#: Whether this system shows a process's environment (``/proc/PID/environ``): where it does, only the
#: processes carrying a build's mark are ever ended; elsewhere its recorded process groups are.
MARKS_READABLE = Path("/proc/self/environ").exists()


def marked_processes(mark: str) -> list[int]:
    """This user's live processes (but this one) whose environment carries ``mark`` in :data:`MARK_VARIABLE`.

    Read from ``/proc/PID/environ`` (the environment a process started with) on Linux; elsewhere there is no
    such file and the list is empty: only the recorded process groups are ended (a descendant that called
    ``setsid`` escapes them there).
    """
    proc, prefix, user = Path("/proc"), f"{MARK_VARIABLE}=".encode(), os.getuid()
    found = []
    for entry in proc.iterdir() if MARKS_READABLE else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:  # another user's process: unreadable, or not ours to end (root); a zombie's environment is empty
            variables = (entry / "environ").read_bytes().split(b"\0") if entry.stat().st_uid == user else []
        except OSError:
            continue
        if any(item.startswith(prefix) and mark.encode() in item[len(prefix) :].split() for item in variables):
            found.append(int(entry.name))
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def end_marked(mark: str | None, *, grace: float = KILL_GRACE_SECONDS) -> tuple[list[int], list[int]]:
    """End every process carrying ``mark`` (:func:`marked_processes`): SIGTERM, then SIGKILL after ``grace``
    seconds. Returns the processes found, and those still there after SIGKILL (stuck in the kernel)."""
    found = marked_processes(mark) if mark else []
    left = found
    for sig in (signal.SIGTERM, signal.SIGKILL):
        _signal_all(left, sig)
        deadline = time.monotonic() + grace
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = marked_processes(str(mark))
    return found, left
