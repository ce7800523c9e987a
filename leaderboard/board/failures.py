"""A failed run on the board: a code of a closed vocabulary and its fixed sentence, never free text (issue 46).

A run's error line may hold anything an endpoint, a URL, a model or the environment wrote (a 404's
line holds the whole ``base_url``, a gateway token in its path; an echoed key printed as a ``repr`` or
as HTML entities). So the board, its history and the page record of a failure only what the suite
itself chose from closed lists: the code (with its stage and fixed sentence), the exit status, the
HTTP status, the error class (one of a declared list, else ``other``), the model-list field and the
shard. The vocabulary is declared once, in the schema (``leaderboard.schema.json``,
``$defs.failure_error``: an enum per field and one ``oneOf`` entry per code); this module reads it
from there. The full message stays in the run's local log (redacted, :mod:`..run.runner`). The class
and HTTP status are facts the run's own process recorded of the exception it ended with
(:mod:`logic_consistency.harness_ext.publish.failure_facts`), never read from a line of its output,
which may hold an endpoint's words (issue 54).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

__all__ = ["ERROR_CLASSES", "FAILURE_CODES", "failure_error", "failure_sentence"]


@functools.cache
def _declared() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("leaderboard.schema.json").read_text(encoding="utf-8")
    declared: dict[str, Any] = json.loads(text)["$defs"]["failure_error"]
    return declared


#: ``{code: (stage, fixed sentence)}``, as the schema declares them.
FAILURE_CODES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        entry["properties"]["code"]["const"]: (
            entry["properties"]["stage"]["const"],
            entry["properties"]["message"]["const"],
        )
        for entry in _declared()["oneOf"]
    }
)
#: The error classes a failure may name (any other is ``other``).
ERROR_CLASSES = frozenset(name for name in _declared()["properties"]["error_class"]["enum"] if name is not None)
#: The model-list fields a failure may name.
FIELDS = frozenset(name for name in _declared()["properties"]["field"]["enum"] if name is not None)


def failure_sentence(code: str) -> str:
    """The fixed sentence of ``code`` (a ``KeyError`` for a code the schema does not declare)."""
    return FAILURE_CODES[code][1]


def failure_error(
    code: str,
    *,
    returncode: int | None = None,
    http_status: int | None = None,
    error_class: str | None = None,
    field: str | None = None,
    shard: str | None = None,
) -> dict[str, Any]:
    """The board's ``error`` object of a failure: every value from a closed list (see the module docstring)."""
    stage, sentence = FAILURE_CODES[code]
    if error_class is not None and error_class not in ERROR_CLASSES:
        error_class = "other"
    return {
        "code": code,
        "message": sentence,
        "stage": stage,
        "returncode": returncode,
        "http_status": http_status if http_status is not None and 100 <= http_status <= 599 else None,
        "error_class": error_class,
        "field": field if field in FIELDS else None,
        "shard": shard if shard is not None and re.fullmatch(r"[0-9]{1,3}/[0-9]{1,3}", shard) else None,
    }
