"""lm-eval's ``--use_cache`` answers stored as JSON text, never as pickle.

lm-eval's ``CachingLM`` keeps its answers in a ``SqliteDict`` whose default codec is ``pickle``: a
replaced cache file (a shared folder under Ray, a copied cache) would run its payload when read. The
autoload hook gives it a :func:`json_store`: the same table and keys, each answer JSON text. A value
that is not (a pickle BLOB) is refused with :class:`RequestCacheError` naming the file and key, unread.

What lm-eval stores round-trips exactly (same types and bits): the key is ``hash_args``' 64 hex digits
(any other is refused); ``generate_until`` a ``str``, ``loglikelihood_rolling`` a ``float``,
``loglikelihood`` a ``(float, bool)`` tuple (``{"tuple": [...]}``: a JSON array reads back as a list),
lc-chat's ``ChoiceAnswer`` that tuple with how it was read (``{"choice_answer": [...], ...}``); floats
by ``repr`` (``-Infinity``, ``NaN`` too). Anything else (a dict, a named tuple) is a :class:`TypeError`
naming the key: no class is ever chosen by the file. An answer read for a request not of that request's
kind (:data:`ANSWER_KINDS`: a list where ``loglikelihood`` takes a pair) is refused, naming file and key.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

__all__ = [
    "ANSWER_KINDS",
    "ANSWER_TABLE",
    "RequestCacheError",
    "decode_answer",
    "encode_answer",
    "first_pickled_key",
    "json_store",
    "pickled_answer_error",
]

#: The table lm-eval's ``CachingLM`` uses (``SqliteDict``'s default name).
ANSWER_TABLE = "unnamed"
#: The form of every key lm-eval (and the self-agreement task) writes: ``hash_args``'s SHA-256 hex digest.
KEY_FORM = re.compile(r"[0-9a-f]{64}")


class RequestCacheError(RuntimeError):
    """The ``--use_cache`` file cannot be used (the message names it and says what to do)."""


def pickled_answer_error(path: str, key: str | None) -> RequestCacheError:
    where = f" (key {key})" if key is not None else ""
    return RequestCacheError(
        f"--use_cache: {path} holds an answer that is not JSON text{where}: a pickle, as lm-eval writes without "
        "logic-consistency (or one planted there), which can run code when read, so it is never read; delete it "
        "(its answers are lost and asked again) or pass another --use_cache"
    )


def _encode(value: Any, key: str) -> Any:
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return _encode_container(value, key)


def _encode_container(value: Any, key: str) -> Any:
    """lc-chat's reading, a tuple (both tagged) or a list, item by item; any other type is refused."""
    from logic_consistency.harness_ext.chat.choice_reading import ChoiceAnswer  # a plain-Python module

    if type(value) is ChoiceAnswer:  # lc-chat's reading (module docstring)
        details = {name: getattr(value, name) for name in ("missing", "position", "tied")}
        return {"choice_answer": [_encode(item, key) for item in value], **details}
    if type(value) is tuple:
        return {"tuple": [_encode(item, key) for item in value]}
    if type(value) is list:
        return [_encode(item, key) for item in value]
    raise TypeError(
        f"--use_cache: the answer to key {key} is a {type(value).__name__}, which the JSON store does not hold"
    )


def encode_answer(key: str, value: Any) -> str:
    """The JSON text stored for answer ``value`` under ``key`` (see the module docstring).

    Raises:
        TypeError: ``key`` is not a 64-digit hex hash, or ``value`` is not a kind of answer lm-eval stores.
    """
    if not isinstance(key, str) or KEY_FORM.fullmatch(key) is None:
        raise TypeError(f"--use_cache: key {key!r:.80} is not lm-eval's hash_args key (64 hex digits)")
    return json.dumps(_encode(value, key), ensure_ascii=False, allow_nan=True)


def _decode(item: Any, where: str) -> Any:
    if isinstance(item, list):
        return [_decode(entry, where) for entry in item]
    if not isinstance(item, dict):
        return item
    if set(item) == {"tuple"} and isinstance(item["tuple"], list):
        return tuple(_decode(entry, where) for entry in item["tuple"])
    if set(item) == {"choice_answer", "missing", "position", "tied"} and isinstance(item["choice_answer"], list):
        from logic_consistency.harness_ext.chat.choice_reading import ChoiceAnswer

        logprob, is_greedy = item["choice_answer"]
        return ChoiceAnswer(logprob, is_greedy, missing=item["missing"], position=item["position"], tied=item["tied"])
    raise ValueError(f"{where}: an object with keys {sorted(item)} is no stored answer")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: Each request type ``CachingLM`` caches -> (what its answer is, as said in a refusal; the test of a decoded one).
ANSWER_KINDS: dict[str, tuple[str, Any]] = {
    "generate_until": ("a text", lambda value: isinstance(value, str)),
    "loglikelihood": (
        "a (log-likelihood, is-greedy) pair",
        lambda value: isinstance(value, tuple) and len(value) == 2 and _number(value[0]) and type(value[1]) is bool,
    ),
    "loglikelihood_rolling": ("a number", _number),
}


def decode_answer(text: Any, path: str, key: str | None = None, *, kind: str | None = None) -> Any:
    """The answer stored as ``text`` (what :func:`encode_answer` wrote) in the cache file ``path``, checked
    to be an answer of request type ``kind`` (:data:`ANSWER_KINDS`) when one is given.

    Raises:
        RequestCacheError: ``text`` is not JSON text of a stored answer (a pickle BLOB included, never
            unpickled), or not of ``kind``'s shape; the message names ``path`` (and ``key`` when known).
    """
    if not isinstance(text, str):
        raise pickled_answer_error(path, key)
    at = f" (key {key})" if key else ""
    try:
        answer = _decode(json.loads(text), f"--use_cache: {path}")
    except (ValueError, TypeError) as error:
        raise RequestCacheError(
            f"--use_cache: {path}: a stored answer{at} is not one the JSON store wrote ({error}); delete it "
            "(its answers are lost and asked again) or pass another --use_cache"
        ) from None
    if kind in ANSWER_KINDS and not ANSWER_KINDS[kind][1](answer):
        raise RequestCacheError(
            f"--use_cache: {path}: the stored answer{at} is JSON of another shape ({text[:80]!r}), where a {kind} "
            f"answer is {ANSWER_KINDS[kind][0]}: the file is not one this run's lm-eval wrote; delete it (its "
            "answers are lost and asked again) or pass another --use_cache"
        )
    return answer


class _JsonStore:
    """``SqliteDict`` with the JSON codec: keys checked on write, values decoded with their key named."""

    def __init__(self, store: Any, path: str) -> None:
        self._store = store
        self._path = path
        self._kind: str | None = None

    @contextlib.contextmanager
    def expecting(self, kind: str) -> Iterator[None]:
        """Within it, every answer read is checked to be of request type ``kind`` (``CachingLM``'s call of it)."""
        self._kind, before = kind, self._kind
        try:
            yield
        finally:
            self._kind = before

    def __setitem__(self, key: str, value: Any) -> None:
        self._store[key] = encode_answer(key, value)  # encoded here: the codec's errors name the key

    def __getitem__(self, key: str) -> Any:
        return decode_answer(self._store[key], self._path, key, kind=self._kind)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._store else default

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __getattr__(self, name: str) -> Any:  # commit, close, ... of the database
        return getattr(self._store, name)


def json_store(path: str) -> Any:
    """lm-eval's answer table of the cache file ``path``, holding JSON text (see the module docstring).

    The ``SqliteDict`` codec is the identity: :class:`_JsonStore` encodes and decodes, so no value of
    the file ever reaches ``pickle``.
    """
    from sqlitedict import SqliteDict

    def identity(value: Any) -> Any:
        return value

    store = SqliteDict(path, tablename=ANSWER_TABLE, autocommit=True, encode=identity, decode=identity)
    return _JsonStore(store, path)


def first_pickled_key(connection: sqlite3.Connection, table: str) -> str | None:
    """The key of the first row of ``table`` whose value is not JSON text (one row is read: caches grow to
    gigabytes, and every later read is checked by :class:`_JsonStore`), or ``None``."""
    row = connection.execute(f'SELECT key, typeof(value) FROM "{table}" LIMIT 1').fetchone()
    if row is None or row[1] == "text":
        return None
    return str(row[0])
