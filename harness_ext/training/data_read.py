"""The test data a study's evaluation read, by content: what its ``done`` marker holds beside its stamp.

A study's ``lm_eval`` run is started with :data:`~..task.data_files.READ_LOG_ENV` naming
``<eval>/data_read.txt`` (its run description's ``data_read_log``, :mod:`..publish.lm_eval_command`): each local data file its tasks' loaders read (``LOGIC_CONSISTENCY_DATA``) is
listed there, relative to the data folder. Once the run has ended well, :func:`done_marker` writes the
evaluation stamp (:func:`.study_eval.evaluation_stamp`), whether the data were local, and the SHA-256 of
each file read. A rerun keeps the evaluation only where :func:`is_current`: the same stamp, and the same
files, hashed now under today's data folder, hold the same bytes. Another copy of the datasets (an edited
file, another release) evaluates again; the same bytes in another folder or on another machine do not.
Online sources are pinned by their commit and not hashed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.task.data_files import data_root, files_sha256

__all__ = ["READ_LOG", "done_marker", "is_current"]

#: The list of data files an evaluation read, in its folder.
READ_LOG = "data_read.txt"


def _data_now(names: Iterable[str]) -> dict[str, Any]:
    """Whether the data are local, and each named file's SHA-256 in today's data folder (``None``: missing)."""
    root = data_root()
    hashes: dict[str, str | None] = {}
    for name in sorted(set(names)):
        path = root / name if root is not None else None
        hashes[name] = files_sha256([(name, path)]) if path is not None and path.is_file() else None
    return {"local_data": root is not None, "data_read": hashes}


def done_marker(stamp: str, folder: Path) -> bytes:
    """The ``done`` marker of a finished evaluation in ``folder``: its stamp and the data it read, hashed now."""
    log = folder / READ_LOG
    names = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
    return json.dumps({"stamp": stamp, **_data_now(name for name in names if name)}, sort_keys=True).encode() + b"\n"


def is_current(done: Path, stamp: str) -> bool:
    """Whether the finished evaluation whose marker is ``done`` was made for ``stamp`` on the same data.

    A marker of another shape (an evaluation finished before markers held the data) is not current.
    """
    try:
        marker = json.loads(done.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    if not isinstance(marker, dict) or marker.get("stamp") != stamp or not isinstance(marker.get("data_read"), dict):
        return False
    return {"local_data": marker.get("local_data"), "data_read": marker["data_read"]} == _data_now(marker["data_read"])
