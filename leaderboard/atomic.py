"""Crash-safe JSON writes and the build lock of the leaderboard.

Every file the leaderboard writes goes through :func:`atomic_write` (the suite's one crash-safe
writer, ``logic_consistency.outputs``): a process killed at any point (SIGKILL, Ctrl-C, a
crash) leaves either the old file or the new one, never a mix. The build lock lives in :mod:`.lock`
(re-exported here).
"""

from __future__ import annotations

import os
from pathlib import Path

from logic_consistency.outputs import TEMP_SUFFIX, atomic_write, atomic_write_json, json_chunks

from .lock import BuildLockedError, build_lock, held_lock_fds

__all__ = [
    "BuildLockedError",
    "atomic_write",
    "atomic_write_json",
    "build_lock",
    "held_lock_fds",
    "json_chunks",
    "remove_stale_temporaries",
]


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
