"""Why a ``lm_eval`` run failed, as facts its own process knew, written where no endpoint can write (issue 54).

A run's stderr holds what an endpoint wrote (lm-eval logs an error body; ``lc-chat`` shows the start of a
reply that is not JSON), so a line such as ``upstream answered HTTP 503`` or ``RequestCacheError:`` there
proves nothing. ``lm_eval``'s entry point (the suite's wrapper in ``autoload``) hands the exception a run
ended with to :func:`record_failure`, which writes, to the file its launcher named in
:data:`ENV_FAILURE_FILE`, only what the exception object holds: its class's name; the HTTP status the
backend received, from the exception's own attribute (``lc-chat``'s ``EndpointError.status``, aiohttp's
``ClientResponseError.status``, requests' ``HTTPError.response.status_code``) anywhere in its chain of
causes; and whether it is the suite's :class:`~.cache_json.RequestCacheError`, with its message (the
suite's words). The board reads it with :func:`read_failure` (:mod:`logic_consistency.leaderboard.run.units`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

from .cache_json import RequestCacheError

__all__ = ["ENV_FAILURE_FILE", "FAILURE_FILE", "FailureFacts", "facts_of", "read_failure", "record_failure"]

#: The file a launcher asks ``lm_eval`` to record its failure in (a path the launcher owns).
ENV_FAILURE_FILE = "LOGIC_CONSISTENCY_FAILURE_FILE"
#: Its name in a build unit's folder.
FAILURE_FILE = "lm_eval_failure.json"
#: How far down an exception's causes a status is looked for (a chain is short; a cycle is possible).
_CHAIN_DEPTH = 16


@dataclass(frozen=True)
class FailureFacts:
    """What ended a run, from the exception object only (see the module docstring)."""

    error_class: str
    http_status: int | None = None
    request_cache: bool = False
    message: str | None = None


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and its causes (``__cause__``, else ``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < _CHAIN_DEPTH:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _status(error: BaseException) -> int | None:
    """The HTTP status an exception of a known HTTP client carries, by its type (never by its text)."""
    # deferred: the reader of a record (the board's driver) needs no HTTP client; lm-eval 0.4.13 requires both
    import aiohttp
    import requests

    from logic_consistency.harness_ext.chat.reply import EndpointError

    if isinstance(error, EndpointError):
        return error.status
    if isinstance(error, aiohttp.ClientResponseError):
        return error.status
    if isinstance(error, requests.HTTPError) and error.response is not None:
        return int(error.response.status_code)
    return None


def facts_of(error: BaseException) -> FailureFacts:
    """The facts of the exception a run ended with (a ``SystemExit`` raised for another error: that error's)."""
    if isinstance(error, SystemExit) and error.__context__ is not None:
        error = error.__context__  # the one-line error of an option: the OptionError it reported
    statuses = [status for cause in _chain(error) if (status := _status(cause)) is not None]
    cache = next((cause for cause in _chain(error) if isinstance(cause, RequestCacheError)), None)
    return FailureFacts(
        error_class=type(error).__name__,
        http_status=statuses[0] if statuses and 100 <= statuses[0] <= 599 else None,
        request_cache=cache is not None,
        message=None if cache is None else str(cache),
    )


def record_failure(error: BaseException) -> None:
    """Write :func:`facts_of` ``error`` to the file :data:`ENV_FAILURE_FILE` names (nothing when it is unset,
    or for a clean exit). A file that cannot be written is passed over: the exit status still tells."""
    path = os.environ.get(ENV_FAILURE_FILE, "").strip()
    if not path or (isinstance(error, SystemExit) and error.code in (0, None)):
        return
    try:
        atomic_write(path, [json.dumps(asdict(facts_of(error)), sort_keys=True).encode("utf-8")])
    except (OSError, ValueError):  # the record is a convenience of the launcher; the run's own error stands
        pass


def read_failure(path: str | os.PathLike[str]) -> FailureFacts | None:
    """The facts in ``path``, or ``None`` when it is missing or not such a record (a killed run wrote none)."""
    try:
        raw: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or set(raw) != {"error_class", "http_status", "request_cache", "message"}:
        return None
    return _facts_of_record(raw)


def _facts_of_record(raw: dict[str, Any]) -> FailureFacts | None:
    """The facts of a record with exactly the four keys, or ``None`` when a value is not of its kind (the
    class not an identifier, the cache flag not a bool, the status neither ``None`` nor an HTTP status);
    the message kept only for a request-cache failure."""
    status, name, cache, message = raw["http_status"], raw["error_class"], raw["request_cache"], raw["message"]
    if not (isinstance(name, str) and name.isidentifier() and isinstance(cache, bool)):
        return None
    if not (status is None or (type(status) is int and 100 <= status <= 599)):
        return None
    return FailureFacts(name, status, cache, message if cache and isinstance(message, str) else None)
