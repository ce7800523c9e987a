"""Stable hashes that identify rows, boards (settings) and prompt-template sets, and the rule that a
name on the board is printable.

All hashes are SHA-256 over a canonical JSON encoding (sorted keys, no whitespace, UTF-8), so the
same content gives the same id on every machine and Python version. A name the board shows holds no
character of :data:`UNPRINTABLE_CATEGORIES` (:func:`check_name`).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = [
    "UNPRINTABLE_CATEGORIES",
    "canonical_json",
    "check_name",
    "first_unprintable",
    "row_id",
    "settings_id",
    "sha256_hex",
    "short_id",
]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace (the input of every hash here)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(value: Any) -> str:
    """Full SHA-256 hex digest of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def short_id(value: Any) -> str:
    """The first 16 hex digits of :func:`sha256_hex` (64 bits: ample for ids within one board)."""
    return sha256_hex(value)[:16]


def settings_id(settings: Mapping[str, Any]) -> str:
    """The id of a board: the hash of a row's comparability settings."""
    return short_id(dict(settings))


def row_id(name: str, revision: str, precision: str, prompt_set: str, settings: str) -> str:
    """The id of a row: one per (model, revision, precision, prompt-template set) on each board."""
    return short_id(
        {"name": name, "revision": revision, "precision": precision, "prompt_set": prompt_set, "settings_id": settings}
    )


#: Unicode categories never part of a name on the board: control (newline, escape: they would forge
#: lines in logs), format (a bidi override that reorders the page's text), surrogate and private use.
#: ``leaderboard.schema.json`` refuses the control characters in a board too.
UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})


def first_unprintable(value: str) -> int | None:
    """The position of the first character of :data:`UNPRINTABLE_CATEGORIES` in ``value``, or ``None``."""
    return next(
        (position for position, char in enumerate(value) if unicodedata.category(char) in UNPRINTABLE_CATEGORIES),
        None,
    )


def check_name(value: str, where: str) -> str:
    """``value`` if every character is printable, else a one-line :class:`ValueError` naming ``where``."""
    position = first_unprintable(value)
    if position is not None:
        raise ValueError(
            f"{where}: {value!r} holds the control character U+{ord(value[position]):04X} at position {position}; "
            "names on the board must be printable"
        )
    return value
