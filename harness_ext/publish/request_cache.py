"""A corrupt, busy or unwritable ``--use_cache`` file names its path and the fix, in one line.

lm-eval's ``CachingLM`` opens the SQLite file ``PATH_rank<N>.db`` in a background thread, where a
bad file fails with three tracebacks and no path. The autoload hook wraps ``CachingLM.__init__``
with :func:`guard_caching_lm`, which opens the file first and raises :class:`RequestCacheError`:

* **busy** (another run holds the lock after :data:`BUSY_TIMEOUT` seconds): "in use by another
  run"; the file is sound and its answers were paid for, so it never says "delete it";
* **corrupt**, or its first answer a pickle (:mod:`.cache_json`: never unpickled): "delete it";
* **unwritable** (its folder cannot be created or written): "pass a --use_cache in a writable folder".

The wrapped ``__init__`` swaps lm-eval's pickling ``SqliteDict`` for :func:`.cache_json.json_store`
before any answer is read, wrapped in :class:`RedactingStore`, which redacts every answer of this
process's credentials before it is stored: an echoed key never reaches ``cache/*.db``.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Any

from logic_consistency.credentials import Redactor
from logic_consistency.outputs import OutputError, check_writable

from .cache_json import (
    ANSWER_KINDS,
    ANSWER_TABLE,
    RequestCacheError,
    first_pickled_key,
    json_store,
    pickled_answer_error,
)

__all__ = ["MARKER", "RedactingStore", "RequestCacheError", "check_request_cache", "guard_caching_lm"]

#: Seconds to wait for another run's lock before calling the cache busy (SQLite's own default).
BUSY_TIMEOUT = 5.0

#: SQLite result codes of a file locked by another connection: SQLITE_BUSY (5) and SQLITE_LOCKED (6)
#: (written as numbers: typeshed does not list the ``sqlite3.SQLITE_*`` constants of Python 3.11).
_BUSY_CODES = frozenset({5, 6})

#: What precedes the message on the last line of a failed ``lm_eval``'s stderr (the exception's name).
MARKER = "RequestCacheError: "


def check_request_cache(path: str | os.PathLike[str], *, timeout: float = BUSY_TIMEOUT) -> None:
    """Raise :class:`RequestCacheError` if ``path`` cannot serve as the request cache.

    Reads the schema and one key (no full scan: caches grow to gigabytes). A missing file is fine
    when its folder can be written (lm-eval creates both). ``timeout``: seconds to wait for another
    run's lock before calling the file busy.
    """
    path = os.fspath(path)
    if not os.path.lexists(path):
        _check_writable_folder(path)
        return

    if not os.path.isfile(path):
        raise _unusable(path, "is not a file")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    except sqlite3.Error as error:
        raise _busy(path, error) if _is_busy(error) else _unusable(path, f"cannot be opened ({error})") from None
    try:
        pickled = _first_pickled_answer(connection)
    except sqlite3.Error as error:
        raise (
            _busy(path, error)
            if _is_busy(error)
            else _unusable(path, f"is not a readable SQLite request cache ({error})")
        ) from None
    finally:
        connection.close()
    if pickled is not None:
        raise pickled_answer_error(path, pickled)


def _first_pickled_answer(connection: sqlite3.Connection) -> str | None:
    """Read the schema and one row of each table (no full scan); the key of the first pickled answer, if any."""
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        connection.execute(f'SELECT * FROM "{table}" LIMIT 1').fetchall()
    return first_pickled_key(connection, ANSWER_TABLE) if ANSWER_TABLE in tables else None


def _unusable(path: str, problem: str) -> RequestCacheError:
    return RequestCacheError(
        f"--use_cache: {path} {problem}; delete it (its answers are lost and asked again) or pass another --use_cache"
    )


def _is_busy(error: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock (not because the file is bad)."""
    return getattr(error, "sqlite_errorcode", None) in _BUSY_CODES or "database is locked" in str(error)


def _busy(path: str, error: sqlite3.Error) -> RequestCacheError:
    return RequestCacheError(
        f"--use_cache: {path} is in use by another run ({error}); wait for that run to finish, "
        "or pass another --use_cache (the file is kept: its answers stay usable)"
    )


def _check_writable_folder(path: str) -> None:
    """Raise :class:`RequestCacheError` if the folder of a not-yet-existing cache file cannot hold it."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        check_writable(folder, folder=True)  # probes the nearest existing folder; lm-eval creates the rest
    except (OutputError, ValueError) as error:
        raise RequestCacheError(
            f"--use_cache: {path} cannot be created ({error}); pass a --use_cache in a writable folder"
        ) from None


def guard_caching_lm(init: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``CachingLM.__init__(self, lm, cache_db)`` so that a corrupt, busy or unwritable ``cache_db`` is named
    first; each of its request methods then reads the store expecting its own kind of answer
    (:data:`.cache_json.ANSWER_KINDS`: JSON of another shape is refused, naming the file and key)."""

    @functools.wraps(init)
    def wrapper(self: Any, lm: Any, cache_db: str, *args: Any, **kwargs: Any) -> None:
        check_request_cache(cache_db)
        init(self, lm, cache_db, *args, **kwargs)
        self.dbdict.close()  # lm-eval's store pickles; it has read nothing yet
        self.dbdict = RedactingStore(json_store(cache_db))
        lm.set_cache_hook(self.get_cache_hook())  # the hook init made holds the bare database
        for kind in (kind for kind in ANSWER_KINDS if hasattr(lm, kind)):  # cache_json.decode_answer's kind check
            self.__dict__[kind] = _expecting(self.dbdict, kind, getattr(self, kind))

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper


def _expecting(store: Any, kind: str, call: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``CachingLM``'s ``kind`` method (its ``__getattr__``'s), reading the store with answers of ``kind`` expected."""

    def checked(requests: Any) -> Any:
        with store.expecting(kind):
            return call(requests)

    return checked


def _redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it redacted, keeping its type (a tuple stays a tuple)."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, (tuple, list)):
        items = [_redacted(item, redactor) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value  # nothing redacted: the very object (a reading's named tuple) is stored
        make = getattr(type(value), "_make", None)  # a named tuple takes its fields as one iterable
        return make(items) if make is not None else type(value)(items)
    return value


class RedactingStore:
    """A ``SqliteDict`` whose stored answers never hold a credential of this process.

    Only the literal credentials are replaced (the values a backend sends, the key environment
    variables, a model list's ``env``), not patterns: an answer is a model's text, read back on a
    re-run.
    """

    def __init__(self, store: Any) -> None:
        self._store = store

    def __setitem__(self, key: str, value: Any) -> None:
        redactor = Redactor.from_environment(patterns=False)
        self._store[key] = _redacted(value, redactor) if redactor.secrets else value

    def __getitem__(self, key: str) -> Any:
        return self._store[key]

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __getattr__(self, name: str) -> Any:  # get, commit, close, ... of the database
        return getattr(self._store, name)
