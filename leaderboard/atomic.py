"""Crash-safe JSON writes and the build lock of the leaderboard.

Every file the leaderboard writes goes through :func:`atomic_write` (the suite's one crash-safe
writer, ``logic_consistency.outputs``): a process killed at any point (SIGKILL, Ctrl-C, a
crash) leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from logic_consistency.outputs import TEMP_SUFFIX, OutputError, atomic_write, atomic_write_json, json_chunks

__all__ = [
    "BuildLockedError",
    "atomic_write",
    "atomic_write_json",
    "build_lock",
    "held_lock_fds",
    "json_chunks",
    "remove_stale_temporaries",
]

#: Descriptors of the build locks this process holds (see :func:`held_lock_fds`).
_HELD: set[int] = set()


def held_lock_fds() -> tuple[int, ...]:
    """Descriptors of the build locks held by this process, for a child to inherit (``pass_fds``).

    An ``flock`` lives as long as any process holds a descriptor of its open file: a model run
    that inherits it keeps the folder locked until it has exited, even if the build that started
    it was killed (SIGKILL) and could not stop it. Another build then waits for the orphan rather
    than running beside it.
    """
    return tuple(sorted(_HELD))


class BuildLockedError(ValueError):
    """Another build holds the lock of the output folder."""


@contextlib.contextmanager
def build_lock(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold an exclusive lock on ``folder/.leaderboard.lock`` for the duration of a build.

    The lock is an ``flock`` on an open file, released by the kernel when the process exits, so a
    killed build never leaves a stale lock behind.

    Raises:
        BuildLockedError: Another process holds the lock.
        OutputError: The folder or its lock file cannot be created (read-only, permissions, ...).
    """
    root = Path(folder)
    lock_path = root / ".leaderboard.lock"
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = lock_path.open("a+")
    except OSError as error:
        raise OutputError(f"cannot create the build lock {lock_path}: {error.strerror or error}", error.errno) from None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BuildLockedError(f"{lock_path}: another leaderboard build is running on this folder") from None
        _HELD.add(handle.fileno())
        try:
            yield lock_path
        finally:
            _HELD.discard(handle.fileno())
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Delete temporary files left by killed writers in ``folder`` (call only under the build lock).

    Returns:
        The removed paths.
    """
    removed: list[Path] = []
    root = Path(folder)
    if not root.is_dir():
        return removed
    for candidate in root.glob(f".*{TEMP_SUFFIX}"):
        if candidate.is_file():
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed
