"""The local data files a task's dataset loader reads, and their hash: the data folder's identity.

A loader that reads a local file (``LOGIC_CONSISTENCY_DATA``) reports it with :func:`note_read`;
:meth:`~.base.PromptedTask.call_loader` collects the files read while the loader runs
(:func:`collecting`) and records their hash (:func:`files_sha256`) in the task's ``metadata`` under
:data:`DATA_HASH_KEY`. lm-eval writes ``metadata`` into the results file's ``configs``, and the
leaderboard makes a task's metadata part of the settings that define a board, so a run on a
changed data folder (even with the same number of documents) starts a new board rather than being
ranked with runs on the old data. Files fetched from the pinned online sources are identified by
their commit and are not hashed.

The hash covers each file's path relative to the data folder and its bytes, so the same data in
another folder or on another machine gives the same hash. Each file read is also listed in the file
:data:`READ_LOG_ENV` names, if set (a study's evaluation, ``harness_ext/training/data_read.py``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from logic_consistency.common import context_value, file_sha256

__all__ = ["DATA_ENV_VAR", "DATA_HASH_KEY", "READ_LOG_ENV", "collecting", "data_root", "files_sha256", "note_read"]

#: The ``metadata`` key of a task that holds the hash of the local data files its loader read.
DATA_HASH_KEY = "data_sha256"
#: The environment variable naming the local data folder (``tasks/data/_source.py``).
DATA_ENV_VAR = "LOGIC_CONSISTENCY_DATA"
#: The environment variable naming a file to which each local data file read is appended (one per line).
READ_LOG_ENV = "LOGIC_CONSISTENCY_DATA_READ"

_COLLECTED: contextvars.ContextVar[dict[str, Path] | None] = contextvars.ContextVar(
    "logic_consistency_data_files", default=None
)
#: File hashes already computed in this process, by (path, size, modification time): several tasks
#: read the same file.
_FILE_HASHES: dict[tuple[str, int, int], str] = {}


def data_root() -> Path | None:
    """The local data folder (:data:`DATA_ENV_VAR`; blank counts as unset), or ``None``: online sources."""
    value = os.environ.get(DATA_ENV_VAR, "")
    return Path(value).expanduser().absolute() if value.strip() else None


def note_read(root: Path, path: Path) -> None:
    """Record that a loader reads ``path`` (a file under the data folder ``root``), if collecting, and in
    the file :data:`READ_LOG_ENV` names, if set."""
    name = Path(os.path.relpath(path, root)).as_posix()
    collected = _COLLECTED.get()
    if collected is not None:
        collected[name] = path
    log = os.environ.get(READ_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as handle:  # one short line per file read: appends do not mix
            handle.write(name + "\n")


@contextlib.contextmanager
def collecting() -> Iterator[dict[str, Path]]:
    """Within the block, the files :func:`note_read` reports are added to the yielded mapping
    (path relative to the data folder -> path)."""
    with context_value(_COLLECTED, {}) as files:
        yield files


def _file_sha256(path: Path) -> str:
    status = path.stat()
    key = (str(path.absolute()), status.st_size, status.st_mtime_ns)
    if key not in _FILE_HASHES:
        _FILE_HASHES[key] = file_sha256(path)
    return _FILE_HASHES[key]


def files_sha256(files: Iterable[tuple[str, Path]]) -> str | None:
    """SHA-256 over the sorted ``(relative path, file SHA-256)`` pairs, or ``None`` for no file."""
    pairs = sorted((name, _file_sha256(path)) for name, path in files)
    if not pairs:
        return None
    return hashlib.sha256("".join(f"{name}\0{digest}\n" for name, digest in pairs).encode("utf-8")).hexdigest()
