"""Dates on the board: the night a build or an ingest files its rows under, and the date of a run.

Both are untrusted (typed by a user, or written by a machine whose clock may be wrong). A date in
the future would pin its row: merging keeps the most recently measured row per key, so every later
measurement of that model would be dropped. A date more than :data:`CLOCK_SKEW` ahead of this
machine's clock is therefore refused; the skew allows for time zones and clocks a little apart.
A night more than :data:`BACKFILL_LIMIT` before the run it files is refused too, unless asked for
(:func:`check_backfill`; ``ingest --allow-backfill``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

__all__ = ["BACKFILL_LIMIT", "CLOCK_SKEW", "check_backfill", "check_night", "check_timestamp", "utc_today"]

#: How far ahead of this machine's clock a night or a run's date may be.
CLOCK_SKEW = timedelta(days=1)
#: How far before a run's ``measured_at`` the night it is filed under may be, unless backfilling on purpose.
BACKFILL_LIMIT = timedelta(days=7)
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def utc_today() -> date:
    """Today's date in UTC."""
    return datetime.now(timezone.utc).date()


def check_night(text: str, *, today: date | None = None, argument: str = "--night") -> date:
    """The night named by ``text``: a canonical ``YYYY-MM-DD`` date, at most one day after ``today``.

    Args:
        text: The night as given (``2026-01-05``; not ``2026-1-5``, which the schema would refuse
            after every model had run).
        today: Today's date (default: UTC today).
        argument: The option named in errors.

    Raises:
        ValueError: Not a canonical date, or in the future beyond :data:`CLOCK_SKEW` (one line,
            naming ``argument``).
    """
    if not isinstance(text, str) or not _CANONICAL.fullmatch(text):
        try:  # a date written another way (2026-1-5): name its canonical form
            canonical = datetime.strptime(str(text), "%Y-%m-%d").date().isoformat()
        except ValueError:
            raise ValueError(f"{argument} must be a date YYYY-MM-DD (e.g. 2026-01-05), got {text!r}") from None
        raise ValueError(f"{argument} must be written YYYY-MM-DD: got {text!r}; did you mean {canonical!r}?")
    try:
        night = date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{argument} must be a date YYYY-MM-DD, got {text!r} (no such day)") from None
    current = today if today is not None else utc_today()
    if night > current + CLOCK_SKEW:
        raise ValueError(
            f"{argument} {text} is in the future (today is {current.isoformat()} UTC); a future night "
            "would pin its rows over every later build"
        )
    return night


def check_timestamp(seconds: float, *, where: str, now: datetime | None = None) -> datetime:
    """A UNIX time as a UTC datetime, refused if out of range or beyond :data:`CLOCK_SKEW` in the future.

    Args:
        seconds: UNIX time (e.g. a results file's ``date``).
        where: File and field for the error (``results_x.json: field 'date'``).
        now: The current time (default: this machine's clock).

    Raises:
        ValueError: Not a representable date (``1e300``), or in the future (one line, naming ``where``).
    """
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{where}: {seconds!r} is not a date (UNIX time out of range)") from None
    current = now or datetime.now(timezone.utc)
    if moment > current + CLOCK_SKEW:
        raise ValueError(
            f"{where}: {moment.strftime('%Y-%m-%dT%H:%M:%SZ')} is in the future (now {current.strftime('%Y-%m-%dT%H:%M:%SZ')}); "
            "the run's clock is wrong, and a future date would pin its row over every later measurement"
        )
    return moment


def check_backfill(night: str, measured: datetime, *, where: str) -> None:
    """Refuse filing a run under a night more than :data:`BACKFILL_LIMIT` before it was measured.

    A night is when a run was measured (or ingested); one long before the run (``1970-01-01``, a typo
    of the year) files today's row under a night long gone, in the history and the nights list.
    ``ingest --allow-backfill`` skips this check on purpose.

    Args:
        night: The night (already checked by :func:`check_night`).
        measured: When the run started (its results file's ``date``).
        where: The results file, for the message.

    Raises:
        ValueError: ``night`` is more than :data:`BACKFILL_LIMIT` before ``measured`` (names both).
    """
    day = date.fromisoformat(night)
    if day < measured.astimezone(timezone.utc).date() - BACKFILL_LIMIT:
        run_day = measured.astimezone(timezone.utc).date()
        raise ValueError(
            f"{where}: --night {night} is {(run_day - day).days} days before the run was measured "
            f"({measured.strftime('%Y-%m-%dT%H:%M:%SZ')}, field 'date'); a night more than "
            f"{BACKFILL_LIMIT.days} days before its run is refused (a mistyped year?); give the run's night, or add "
            "--allow-backfill to file it under this night on purpose"
        )
