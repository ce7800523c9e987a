"""One writer per study folder: the ``improve`` lock of ``--out``.

The lock is an ``flock`` on ``--out/.improve.lock`` and one on ``--out`` itself, both held while the study
runs (close-on-exec: no ``lm_eval`` run or Ray worker keeps them), taken before the folder is read: a
second ``improve`` is refused, naming the first's PID, host and command from the file's record
(credentials redacted), even when the file was removed or replaced under the first. The kernel releases
an ``flock`` when its holder dies: a free lock whose record names another process is a dead study's,
taken over with a warning where the record carries this folder's and lock file's (device, inode) (a
record copied with the folder names no one). A clean exit empties the record first.

Why not the board's lock (``leaderboard/run/lock.py``): ``harness_ext`` may not import the leaderboard
(``docs/architecture.md``), and the board's lock has what a study has not: deadlines, and runs that
inherit its descriptor. The file handling is the same: no link, pipe or folder in the lock's place.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from logic_consistency.credentials import redact
from logic_consistency.outputs import OutputError, not_regular

__all__ = ["LOCK_NAME", "StudyLockedError", "check_out", "study_lock"]

#: The lock file in a study's folder (a study folder holds it beside ``study.json``).
LOCK_NAME = ".improve.lock"


class StudyLockedError(ValueError):
    """Another ``improve`` process holds the study folder's lock (names its PID, host and command)."""


def check_out(folder: Path) -> None:
    """Refuse an ``--out`` that cannot be a study's folder, naming it: a dangling link, or not a folder.

    Raises:
        ValueError: Naming ``--out`` and what is there.
    """
    if folder.is_symlink() and not folder.exists():
        raise ValueError(
            f"--out {folder}: a symbolic link to {os.readlink(folder)!r}, which does not exist; "
            "create its target or choose another --out"
        )
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {folder}: exists and is not a folder; choose another --out")


def _identity(status: os.stat_result) -> list[int]:
    return [status.st_dev, status.st_ino]


def _record(command: Sequence[str], folder_fd: int, fd: int) -> dict[str, Any]:
    return {
        "folder": _identity(os.fstat(folder_fd)),  # a copy of the folder holds a record that is not its own
        "lock": _identity(os.fstat(fd)),
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": redact(shlex.join(command)),
    }


def _read(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    try:
        record = json.loads(os.read(fd, 65536).decode("utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return record if isinstance(record, dict) else {}


def _describe(record: dict[str, Any]) -> str:
    return (
        f"pid {record.get('pid', '?')} on host {record.get('host', '?')}, started {record.get('started', '?')}: "
        f"{record.get('command', '?')}"
    )


def _write(fd: int, record: dict[str, Any] | None) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    if record is not None:
        os.write(fd, json.dumps(record).encode() + b"\n")
    os.fsync(fd)


def _open(path: Path) -> int:
    """The lock file, opened (or created) never through a link nor blocking on a pipe, close-on-exec."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValueError(f"{path}: the study lock is a symbolic link, not a regular file; remove it") from None
        raise OutputError(f"cannot create the study lock {path}: {error.strerror or error}", error.errno) from None
    kind = not_regular(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise ValueError(f"{path}: the study lock is {kind}, not a regular file; remove it")
    os.set_blocking(fd, True)
    return fd


def _warn(message: str) -> None:
    print(f"logic-consistency improve: warning: {message}", file=sys.stderr)


def _open_folder(folder: Path) -> int:
    """The folder itself, opened to be locked (close-on-exec: no child keeps it once its holder has gone)."""
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise OutputError(f"--out {folder}: cannot open the folder: {error.strerror or error}", error.errno) from None


def _refuse_held(folder: Path, folder_fd: int, warn: Callable[[str], None]) -> None:
    """Raise :class:`StudyLockedError` if another process holds the folder's own lock (its file removed or not).

    A file system that cannot lock a folder (some network mounts emulate ``flock`` with locks that need a
    file open for writing) is said in a warning: there the lock file alone guards the folder, as before.
    """
    try:
        fcntl.flock(folder_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if not isinstance(error, BlockingIOError):
            warn(f"--out {folder}: the folder itself cannot be locked here ({error.strerror or error}); only "
                 f"{LOCK_NAME} guards it: do not remove it while a study runs")  # fmt: skip
            return
        holder = "its lock file was removed or replaced; the holder is not named"
        with contextlib.suppress(OSError, ValueError):
            fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                record = _read(fd)
                if _belongs(record, folder_fd, fd):
                    holder = _describe(record)
            finally:
                os.close(fd)
        raise StudyLockedError(
            f"--out {folder}: another improve study is running on this folder ({holder}); "
            "wait for it to end, or stop it, or choose another --out"
        ) from None


def _belongs(record: dict[str, Any], folder_fd: int, fd: int) -> bool:
    return record.get("folder") == _identity(os.fstat(folder_fd)) and record.get("lock") == _identity(os.fstat(fd))


@contextlib.contextmanager
def study_lock(
    folder: Path, *, command: Sequence[str] | None = None, warn: Callable[[str], None] = _warn
) -> Iterator[Path]:
    """Hold the lock of the study folder ``folder`` (created if missing) while the block runs.

    Args:
        folder: The study's ``--out``.
        command: What the record names as the holder's command (default: ``sys.argv``).
        warn: Receives the warning when the lock of a dead study is taken over.

    Raises:
        StudyLockedError: Another live process holds the lock (naming its PID, host and command), or the
            folder's own lock (its lock file removed or replaced).
        ValueError: ``--out`` is a dangling link or not a folder; the lock is a link, pipe or folder.
        OutputError: The folder or the lock cannot be created.
    """
    check_out(folder)
    path = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"--out {folder}: cannot create the folder: {error.strerror or error}", error.errno) from None
    folder_fd = _open_folder(folder)
    try:
        _refuse_held(folder, folder_fd, warn)  # held for the whole study: the lock file's removal lets no one in
        fd = _open(path)
        try:
            _hold(folder, fd, folder_fd, warn)
            _write(fd, _record(sys.argv if command is None else command, folder_fd, fd))
            try:
                yield path
            finally:
                _write(fd, None)  # a clean exit leaves no holder's name: only a dead study does
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        os.close(folder_fd)  # the folder's lock goes with its descriptor


def _hold(folder: Path, fd: int, folder_fd: int, warn: Callable[[str], None]) -> None:
    """Lock the lock file ``fd``, saying whose lock of a dead study it takes over (if the record is this folder's)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StudyLockedError(
            f"--out {folder}: another improve study is running on this folder ({_describe(_read(fd))}); "
            "wait for it to end, or stop it, or choose another --out"
        ) from None
    previous = _read(fd)
    if previous.get("pid") in (None, os.getpid()):
        return
    if _belongs(previous, folder_fd, fd):
        warn(f"{folder / LOCK_NAME}: taking over the lock of a study that is gone ({_describe(previous)})")
    else:
        warn(f"{folder / LOCK_NAME}: its record is not this folder's (copied from another study's folder): ignored")
