"""The build lock of a leaderboard folder: one build at a time, and a stuck or dead one never blocks the next.

The lock is an ``flock`` on ``.leaderboard.lock``, released by the kernel once every process holding
its descriptor has gone (the build and the model runs that inherit it, :func:`held_lock_fds`). The
file records its holder: ``pid``, ``host``, ``started`` and ``deadline`` (UTC, ISO 8601), so that a
build finding the lock held can tell a live build from a stale one. The lock is **stale** when its
holder is past its own deadline, or runs on this host and its process is gone (an orphaned model run
still holds the descriptor). A stale lock is taken over with a warning naming the old holder: a
fresh lock file replaces the old one (``os.replace``), so the old holder, should it still be alive,
holds a lock on a file that is no longer the folder's; :meth:`HeldLock.check` (called before the
board is written) then refuses to write. Taking a lock, or taking it over, happens under an ``flock``
of the folder itself, so two builds starting together cannot both take a stale lock over. A link,
pipe or folder in the lock's place is refused naming it (``lstat``, ``O_NOFOLLOW``; a taken-over lock
is new: ``O_EXCL``): a lock linked to the board would truncate it and write the lock record into it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from logic_consistency.outputs import TEMP_SUFFIX, OutputError, not_regular

__all__ = ["BuildLockedError", "HeldLock", "LockHolder", "build_lock", "held_lock_fds"]

LOCK_NAME = ".leaderboard.lock"

#: Descriptors of the build locks this process holds (see :func:`held_lock_fds`).
_HELD: set[int] = set()


def held_lock_fds() -> tuple[int, ...]:
    """Descriptors of the build locks held by this process, for a child to inherit (``pass_fds``).

    An ``flock`` lives as long as any process holds a descriptor of its open file: a model run
    that inherits it keeps the folder locked until it has exited, even if the build that started
    it was killed (SIGKILL) and could not stop it. Another build then waits for the orphan (until
    the lock is stale: its holder gone or past its deadline) rather than running beside it.
    """
    return tuple(sorted(_HELD))


class BuildLockedError(ValueError):
    """Another build holds the lock of the output folder (or took this build's stale lock over)."""


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as its file records it (``None``: not recorded or unreadable)."""

    pid: int | None = None
    host: str | None = None
    started: str | None = None
    deadline: str | None = None

    @classmethod
    def read(cls, handle: IO[str]) -> LockHolder:
        handle.seek(0)
        try:
            record = json.loads(handle.read(4096) or "{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return cls()
        if not isinstance(record, dict):
            return cls()
        pid = record.get("pid")
        strings = {key: record.get(key) if isinstance(record.get(key), str) else None for key in ("host", "started")}
        deadline = record.get("deadline")
        return cls(
            pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None,
            deadline=deadline if isinstance(deadline, str) else None,
            **strings,
        )

    def describe(self) -> str:
        return (
            f"pid {self.pid or '?'} on host {self.host or '?'}, started {self.started or '?'}, "
            f"deadline {self.deadline or 'none'}"
        )

    def stale_because(self, now: float) -> str | None:
        """Why the lock is stale (past its deadline, or its process gone on this host), or ``None``."""
        if self.deadline is not None:
            try:
                deadline = datetime.strptime(self.deadline, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            except ValueError:
                deadline = None
            if deadline is not None and deadline.timestamp() < now:
                return "it is past its deadline"
        if self.pid is not None and self.host == socket.gethostname() and not _alive(self.pid):
            return "its process is gone (a run it started still held the lock)"
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_record(handle: IO[str], deadline_seconds: float | None) -> None:
    now = time.time()
    record: dict[str, Any] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": _iso(now),
        "deadline": _iso(now + deadline_seconds) if deadline_seconds is not None else None,
    }
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(record) + "\n")
    handle.flush()
    os.fsync(handle.fileno())


def _try_flock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@dataclass(frozen=True)
class HeldLock:
    """A lock this build holds."""

    path: Path
    handle: IO[str]

    def check(self) -> None:
        """Raise :class:`BuildLockedError` if another build has since taken this (stale) lock over."""
        try:
            current = os.lstat(self.path)  # a link put in place of the lock is not this build's lock
        except FileNotFoundError:
            current = None
        mine = os.fstat(self.handle.fileno())
        if current is None or (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            with contextlib.suppress(OSError), _read_only(self.path) as now_held:
                holder = LockHolder.read(now_held).describe()
                raise BuildLockedError(f"{self.path}: this build's lock was taken over by another build ({holder})")
            raise BuildLockedError(f"{self.path}: this build's lock was removed or taken over by another build")


@contextlib.contextmanager
def _folder_guard(root: Path) -> Iterator[None]:
    """An ``flock`` of the folder itself while a lock is taken (or taken over): one build at a time."""
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _refuse_other_kind(path: Path, mode: int) -> None:
    """Refuse a lock path that is not a regular file (a link, a pipe, a folder...), naming it."""
    if stat.S_ISLNK(mode):
        raise ValueError(
            f"{path}: refusing to use the build lock: it is a symbolic link (to {os.readlink(path)!r}), not a "
            "regular file; writing the lock through it would overwrite the file it names; remove the link"
        )
    kind = not_regular(mode)
    if kind is not None:
        raise ValueError(f"{path}: refusing to use the build lock: it is {kind}, not a regular file; remove it")


def _open_lock(path: Path) -> IO[str]:
    """Open (or create) the lock file, never through a symbolic link (``O_NOFOLLOW``) nor a pipe or folder."""
    with contextlib.suppress(FileNotFoundError):
        _refuse_other_kind(path, os.lstat(path).st_mode)
    try:  # O_NOFOLLOW: a link put in place since the lstat is refused too; O_NONBLOCK: a pipe never blocks
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            _refuse_other_kind(path, os.lstat(path).st_mode)
        raise
    try:
        _refuse_other_kind(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "r+", encoding="utf-8")


def _read_only(path: Path) -> IO[str]:
    """The lock file opened to read its holder, never through a link nor blocking on a pipe."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), encoding="utf-8")


def _take_over(root: Path, lock_path: Path) -> IO[str]:
    """A fresh, locked lock file put in place of ``lock_path`` (whose lock a stale holder keeps)."""
    # a new name (O_CREAT | O_EXCL | O_NOFOLLOW: never an existing file or link), removed by the next build if left
    fd, fresh = tempfile.mkstemp(dir=root, prefix=f"{LOCK_NAME}.", suffix=TEMP_SUFFIX)
    handle = os.fdopen(fd, "r+", encoding="utf-8")
    try:
        os.fchmod(fd, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a new file: nobody else holds it
        os.replace(fresh, lock_path)
    except BaseException:
        handle.close()
        Path(fresh).unlink(missing_ok=True)
        raise
    return handle


def _acquire(root: Path, lock_path: Path, deadline_seconds: float | None, warn: Callable[[str], None]) -> IO[str]:
    with _folder_guard(root):
        handle = _open_lock(lock_path)
        if not _try_flock(handle):
            holder = LockHolder.read(handle)
            handle.close()
            reason = holder.stale_because(time.time())
            if reason is None:
                raise BuildLockedError(
                    f"{lock_path}: another leaderboard build is running on this folder ({holder.describe()})"
                )
            warn(f"{lock_path}: taking over the stale lock of the build with {holder.describe()}: {reason}")
            handle = _take_over(root, lock_path)
        try:
            _write_record(handle, deadline_seconds)
        except BaseException:
            handle.close()
            raise
        return handle


def _warn(message: str) -> None:
    print(f"logic-consistency: warning: {message}", file=sys.stderr)


@contextlib.contextmanager
def build_lock(
    folder: str | os.PathLike[str], *, deadline_seconds: float | None = None, warn: Callable[[str], None] = _warn
) -> Iterator[HeldLock]:
    """Hold an exclusive lock on ``folder/.leaderboard.lock`` for the duration of a build.

    Args:
        folder: The leaderboard folder.
        deadline_seconds: How long this build may take; recorded, so that a later build takes the
            lock over once it is past (``None``: no deadline; taken over only when the process is gone).
        warn: Receives the warning when a stale lock is taken over.

    Raises:
        BuildLockedError: Another live build, within its deadline, holds the lock.
        OutputError: The folder or its lock file cannot be created (read-only, permissions, ...).
    """
    root = Path(folder)
    lock_path = root / LOCK_NAME
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = _acquire(root, lock_path, deadline_seconds, warn)
    except OSError as error:
        raise OutputError(f"cannot create the build lock {lock_path}: {error.strerror or error}", error.errno) from None
    with handle:
        _HELD.add(handle.fileno())
        try:
            yield HeldLock(lock_path, handle)
        finally:
            _HELD.discard(handle.fileno())
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
