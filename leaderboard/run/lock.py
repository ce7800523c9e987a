"""The build lock of a leaderboard folder: one build at a time, and a stuck or dead one never blocks the next.

The lock is an ``flock`` on ``.leaderboard.lock`` (released once every process holding its descriptor has
gone: the build and its runs, :func:`held_lock_fds`), taken (over) under an ``flock`` of the folder. Its
record names the holder (``pid``, ``host``, ``started``, ``deadline``), its runs' process groups, the random
``mark`` every child carries in its environment (:mod:`.descendants`), and the folder's and lock file's
(device, inode): a record is acted on only where they match (a ``cp -a`` copy holds its original's
record, and nothing it names is ended). A **stale** lock (past its deadline, or its holder gone on this
host) is taken over with a warning: a fresh file replaces it, so :meth:`HeldLock.check` refuses the old
holder, whose marked processes are ended first (on Linux only those: a recycled process-group number is
never signalled). A free lock's last holder, once gone, has its marked leftovers ended too. A link, pipe
or folder in the lock's place is refused naming it (``lstat``, ``O_NOFOLLOW``, ``O_EXCL``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from logic_consistency.harness_ext.jobs.processes import CHILD_MARKS, end_group
from logic_consistency.outputs import TEMP_SUFFIX, OutputError, not_regular

from .descendants import MARK_VARIABLE, MARKS_READABLE, end_marked, marked_processes

__all__ = ["BuildLockedError", "HeldLock", "LockHolder", "build_lock", "child_group_recorded", "held_lock_fds"]

LOCK_NAME = ".leaderboard.lock"

#: The build locks this process holds, by descriptor: the open file and the record written in it.
_HELD: dict[int, tuple[IO[str], dict[str, Any]]] = {}
#: Guards :data:`_HELD`'s records (units may run in threads) while one is changed and rewritten.
_RECORDS_LOCK = threading.Lock()


def held_lock_fds() -> tuple[int, ...]:
    """Descriptors of the build locks held by this process, for a child to inherit (``pass_fds``).

    An ``flock`` lives as long as any process holds a descriptor of its open file: a model run
    that inherits it keeps the folder locked until it has exited, even if the build that started
    it was killed (SIGKILL) and could not stop it. Another build then waits for the orphan (until
    the lock is stale: its holder gone or past its deadline) rather than running beside it.
    """
    return tuple(sorted(_HELD))


def _update_child_marks() -> None:
    """Every child started from now on carries the marks of the locks held (call under :data:`_RECORDS_LOCK`)."""
    marks = " ".join(str(record["mark"]) for _, record in _HELD.values())
    if marks:
        CHILD_MARKS[MARK_VARIABLE] = marks
    else:
        CHILD_MARKS.pop(MARK_VARIABLE, None)


def _rewrite(handle: IO[str], record: dict[str, Any]) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(record) + "\n")
    handle.flush()
    os.fsync(handle.fileno())


@contextlib.contextmanager
def child_group_recorded(pgid: int) -> Iterator[None]:
    """While the block runs, process group ``pgid`` (a model run this build started) is recorded in every
    build lock this process holds (``groups``).

    A wrapper script given as ``--lm-eval`` is killed with the build (the parent-death signal), but
    the run it started is not, and it holds the lock and writes into ``runs/``: a build taking the
    lock over ends the recorded groups on this host first (SIGTERM, SIGKILL after a grace period,
    waiting until they are gone), before it writes anything (:meth:`LockHolder.end_groups`).
    """
    with _RECORDS_LOCK:
        for handle, record in _HELD.values():
            record["groups"] = [*record.get("groups", []), pgid]
            _rewrite(handle, record)
    try:
        yield
    finally:
        with _RECORDS_LOCK:
            for handle, record in _HELD.values():
                record["groups"] = [group for group in record.get("groups", []) if group != pgid]
                with contextlib.suppress(OSError):  # the run has ended; a full disk must not hide why
                    _rewrite(handle, record)


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
    #: Process groups of the model runs the holder had started and not seen end.
    groups: tuple[int, ...] = ()
    #: The mark every child of the holder carries in its environment (:data:`MARK_VARIABLE`).
    mark: str | None = None
    #: The guarded folder's and the lock file's (device, inode) when the record was written.
    folder: tuple[int, int] | None = None
    lock: tuple[int, int] | None = None

    @classmethod
    def read(cls, handle: IO[str]) -> LockHolder:
        handle.seek(0)
        try:
            record = json.loads(handle.read(4096) or "{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return cls()
        if not isinstance(record, dict):
            return cls()
        strings = {key: _text(record.get(key)) for key in ("host", "started", "deadline")}
        mark = _text(record.get("mark"))
        return cls(
            record.get("pid") if _is_pid(record.get("pid")) else None,
            groups=_pids(record.get("groups")),
            mark=mark if mark is not None and mark.isalnum() else None,
            folder=_file_id(record.get("folder")),
            lock=_file_id(record.get("lock")),
            **strings,
        )

    def belongs(self, root: Path, handle: IO[str]) -> bool:
        """Whether the record was written for this folder and this lock file (a copy's record is not)."""
        return self.folder == _identity(os.stat(root)) and self.lock == _identity(os.fstat(handle.fileno()))

    def end_groups(self) -> list[int]:
        """End the recorded process groups and every process carrying the holder's mark (on this host only:
        :func:`end_marked`, descendants that called ``setsid`` included) and wait until they are gone.
        Returns the marked processes found.

        Raises:
            BuildLockedError: A group or a marked process outlasted SIGKILL (stuck in the kernel), naming it.
        """
        if self.host != socket.gethostname():
            return []
        # where /proc shows environments, only the processes carrying the mark are ended (end_marked): a
        # group number recycled by another program is never signalled; elsewhere the recorded groups are
        groups = () if MARKS_READABLE else self.groups
        stuck = [group for group in groups if group > 1 and not end_group(group)]
        found, left = end_marked(self.mark)
        if stuck or left:
            raise BuildLockedError(
                f"the process group(s) {stuck} and process(es) {left} of the old build ({self.describe()}) did not "
                "end after SIGKILL; the lock is not taken over while they run"
            )
        return found

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


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _file_id(value: Any) -> tuple[int, int] | None:
    """A recorded ``[device, inode]``, or ``None``."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    ):
        return value[0], value[1]
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _pids(values: Any) -> tuple[int, ...]:
    return tuple(value for value in values if _is_pid(value)) if isinstance(values, list) else ()


def _is_pid(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_record(root: Path, handle: IO[str], deadline_seconds: float | None) -> dict[str, Any]:
    now = time.time()
    record: dict[str, Any] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": _iso(now),
        "deadline": _iso(now + deadline_seconds) if deadline_seconds is not None else None,
        "groups": [],
        "mark": secrets.token_hex(16),
        "folder": list(_identity(os.stat(root))),  # a copy of the folder holds a record that is not its own
        "lock": list(_identity(os.fstat(handle.fileno()))),
    }
    _rewrite(handle, record)
    return record


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


def _marked_left(holder: LockHolder) -> list[int]:
    """The processes of this host that carry ``holder``'s mark (none for another host's holder)."""
    return marked_processes(holder.mark) if holder.mark and holder.host == socket.gethostname() else []


def _take_stale(
    root: Path, lock_path: Path, holder: LockHolder, warn: Callable[[str], None], *, belongs: bool
) -> IO[str]:
    """The lock of a stale holder, taken over once its runs and their descendants have ended."""
    reason = holder.stale_because(time.time())
    if reason is None:
        raise BuildLockedError(
            f"{lock_path}: another leaderboard build is running on this folder ({holder.describe()})"
        )
    if not belongs:
        raise BuildLockedError(
            f"{lock_path}: a process holds the lock and its record ({holder.describe()}) is not this folder's "
            "(a copy of another folder's lock); nothing it names is ended: wait for the holder to end"
        )
    ending = f"; ending its runs' process groups {list(holder.groups)} first" if holder.groups else ""
    marked = _marked_left(holder)
    ending += (
        f"; ending the processes {marked} that carry its mark (what its runs started, setsid too)" if marked else ""
    )
    warn(f"{lock_path}: taking over the stale lock of the build with {holder.describe()}: {reason}{ending}")
    holder.end_groups()  # before anything is written: its runs write into the same runs/ folder
    return _take_over(root, lock_path)


def _end_leftovers(root: Path, handle: IO[str], lock_path: Path, warn: Callable[[str], None]) -> None:
    """A free lock whose last holder was killed: what its runs started outside the lock (a child that called
    ``setsid`` and closed the lock's descriptor) may still run and write into ``runs/``; it is ended first,
    only where the record is this folder's and its holder is gone."""
    previous = LockHolder.read(handle)
    marked = _marked_left(previous)
    if marked and not previous.belongs(root, handle):
        warn(
            f"{lock_path}: the record names the build with {previous.describe()}, but it is not this folder's (a copy "
            f"of another folder, or written before records named their folder): its processes {marked} are left alone"
        )
    elif marked and previous.pid is not None and _alive(previous.pid):
        warn(f"{lock_path}: the build with {previous.describe()} still runs: its processes {marked} are left alone")
    elif marked:
        warn(
            f"{lock_path}: ending the processes {marked} left by the build with {previous.describe()} (they carry its mark)"
        )
        previous.end_groups()


def _acquire(
    root: Path, lock_path: Path, deadline_seconds: float | None, warn: Callable[[str], None]
) -> tuple[IO[str], dict[str, Any]]:
    with _folder_guard(root):
        handle = _open_lock(lock_path)
        if _try_flock(handle):
            _end_leftovers(root, handle, lock_path, warn)
        else:
            holder = LockHolder.read(handle)
            belongs = holder.belongs(root, handle)
            handle.close()
            handle = _take_stale(root, lock_path, holder, warn, belongs=belongs)
        try:
            return handle, _write_record(root, handle, deadline_seconds)
        except BaseException:
            handle.close()
            raise


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
        handle, record = _acquire(root, lock_path, deadline_seconds, warn)
    except OSError as error:
        raise OutputError(f"cannot create the build lock {lock_path}: {error.strerror or error}", error.errno) from None
    with handle:
        with _RECORDS_LOCK:
            _HELD[handle.fileno()] = (handle, record)
            _update_child_marks()
        try:
            yield HeldLock(lock_path, handle)
        finally:
            with _RECORDS_LOCK:
                _HELD.pop(handle.fileno(), None)
                _update_child_marks()
            end_marked(record["mark"])  # what the build's runs left behind, setsid or not, ends with the build
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
