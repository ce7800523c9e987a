"""A corrupt ``--use_cache`` file names its path and the fix, in one line.

``lm_eval --use_cache PATH`` keeps every answer in the SQLite file ``PATH_rank<N>.db`` through
lm-eval's ``CachingLM``, which opens it with ``sqlitedict`` in a background thread. A file that is
not a SQLite database (truncated, overwritten, another program's file) then fails in that thread
with three tracebacks ending in ``sqlite3.DatabaseError: file is not a database``: no path, no
advice. The autoload hook wraps ``CachingLM.__init__`` with :func:`guard_caching_lm`, which opens the
file first in the calling thread and raises :class:`RequestCacheError` with one line naming it.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Any

__all__ = ["MARKER", "RequestCacheError", "check_request_cache", "guard_caching_lm"]

#: What precedes the message on the last line of a failed ``lm_eval``'s stderr (the exception's name).
MARKER = "RequestCacheError: "


class RequestCacheError(RuntimeError):
    """The ``--use_cache`` file cannot be used (the message names it and says what to do)."""


def check_request_cache(path: str | os.PathLike[str]) -> None:
    """Raise :class:`RequestCacheError` if ``path`` exists and is not a readable SQLite cache.

    Reads the schema and one key (no full scan: caches grow to gigabytes). A missing file is fine:
    lm-eval creates it.
    """
    path = os.fspath(path)
    if not os.path.lexists(path):
        return

    def fail(problem: str) -> RequestCacheError:
        return RequestCacheError(
            f"--use_cache: {path} {problem}; delete it (its answers are lost and asked again) or pass another --use_cache"
        )

    if not os.path.isfile(path):
        raise fail("is not a file")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise fail(f"cannot be opened ({error})") from None
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            connection.execute(f'SELECT * FROM "{table}" LIMIT 1').fetchall()
    except sqlite3.Error as error:
        raise fail(f"is not a readable SQLite request cache ({error})") from None
    finally:
        connection.close()


def guard_caching_lm(init: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``CachingLM.__init__(self, lm, cache_db)`` so that a corrupt ``cache_db`` is named first."""

    @functools.wraps(init)
    def wrapper(self: Any, lm: Any, cache_db: str, *args: Any, **kwargs: Any) -> None:
        check_request_cache(cache_db)
        init(self, lm, cache_db, *args, **kwargs)

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
