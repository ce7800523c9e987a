"""Leaderboard documents: creation, merging of nights, and the derived board list.

A document (``kind`` ``leaderboard`` or ``night``) holds rows, failures and the nights that fed it.
Merging is a pure function: rows are keyed by ``row_id`` (model name, revision, precision,
prompt-template set, settings) and the most recently measured one wins; a failure is kept only for
a model that has no newer successful row; nights are unioned. Boards are recomputed from the rows:
one per ``settings_id``, so rows measured under different settings are never on the same board.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from logic_consistency import __version__ as SUITE_VERSION

from .intervals import DEFAULT_BOOTSTRAP, BootstrapSettings
from .version import SCHEMA_VERSION

__all__ = ["board_label", "boards_of", "make_document", "merge_documents", "now_iso", "shared_options"]

TOOL = "logic-consistency leaderboard"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fmt(value: Any) -> str:
    if value is None:
        return "all"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def shared_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The run options every task of ``settings`` has with the same value."""
    option_sets = [entry["options"] for entry in settings["tasks"].values()]
    first, *rest = option_sets
    return {key: value for key, value in first.items() if all(other.get(key, object()) == value for other in rest)}


def board_label(settings: Mapping[str, Any], board_id: str) -> str:
    """A one-line human summary of a board's settings (ends with the short settings id)."""
    tasks = settings["tasks"]
    shared = shared_options(settings)
    parts = [
        f"{len(tasks)} task{'s' if len(tasks) != 1 else ''}",
        f"limit {_fmt(settings['limit'])}",
        f"max_items {_fmt(shared.get('max_items'))}",
    ]
    if "seed" in shared:
        parts.append(f"seed {_fmt(shared['seed'])}")
    selected = sorted({entry["documents"] for entry in tasks.values() if "documents" in entry})
    if selected:  # lm_eval --samples: which documents ran is the board's too
        parts.append(f"documents {'/'.join(documents[:6] for documents in selected)}")
    parts.append(f"suite {settings['suite_version'] or '?'}")
    parts.append(f"lm-eval {settings['lm_eval_version'] or '?'}")
    parts.append(f"#{board_id[:6]}")
    return " · ".join(parts)


def boards_of(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One board per ``settings_id``, most recently measured first."""
    boards: dict[str, dict[str, Any]] = {}
    for row in rows:
        board = boards.setdefault(
            row["settings_id"],
            {
                "settings_id": row["settings_id"],
                "label": board_label(row["settings"], row["settings_id"]),
                "n_rows": 0,
                "latest": row["measured_at"],
            },
        )
        board["n_rows"] += 1
        board["latest"] = max(board["latest"], row["measured_at"])
    return sorted(boards.values(), key=lambda board: (board["latest"], board["settings_id"]), reverse=True)


def _sorted_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: (row["settings_id"], row["model"]["name"], row["measured_at"], row["row_id"]))


def make_document(
    kind: str,
    rows: Iterable[Mapping[str, Any]] = (),
    failures: Iterable[Mapping[str, Any]] = (),
    *,
    night: str | None = None,
    history_file: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    generated_at: str | None = None,
) -> dict[str, Any]:
    """A fresh document.

    Args:
        kind: ``"leaderboard"`` or ``"night"``.
        rows: Rows (from :func:`~.ingest.build_row`); later duplicates of a ``row_id`` win.
        failures: Failure records; the latest per model name is kept.
        night: The night these rows and failures belong to (adds a ``nights`` entry).
        history_file: Path of that night's history file, relative to the leaderboard file.
        bootstrap: Interval parameters the rows were computed with.
        generated_at: Timestamp (default: now).
    """
    by_id: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_id[row["row_id"]] = copy.deepcopy(dict(row))
    latest_failures: dict[str, dict[str, Any]] = {}
    for failure in failures:
        kept = latest_failures.get(failure["name"])
        if kept is None or failure["failed_at"] >= kept["failed_at"]:
            latest_failures[failure["name"]] = copy.deepcopy(dict(failure))
    row_list = _sorted_rows(by_id.values())
    nights = []
    if night is not None:
        nights.append(
            {"night": night, "rows": len(row_list), "failures": len(latest_failures), "history_file": history_file}
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "generated_at": generated_at or now_iso(),
        "generator": {"tool": TOOL, "suite_version": SUITE_VERSION},
        "bootstrap": bootstrap.as_json(),
        "boards": boards_of(row_list),
        "rows": row_list,
        "failures": sorted(latest_failures.values(), key=lambda f: f["name"]),
        "nights": nights,
    }


def merge_documents(
    current: Mapping[str, Any] | None,
    incoming: Mapping[str, Any],
    *,
    kind: str = "leaderboard",
    generated_at: str | None = None,
) -> dict[str, Any]:
    """Merge ``incoming`` (e.g. tonight's rows) into ``current`` (the existing leaderboard).

    Args:
        current: The existing document, or ``None`` for a first build.
        incoming: The new document.
        kind: ``kind`` of the result.
        generated_at: Timestamp (default: now).

    Returns:
        A new document: per ``row_id`` the most recently measured row (``incoming`` wins ties);
        per model name the latest failure unless a row of that model was measured after it;
        nights unioned (``incoming``'s entry wins for the same night); boards recomputed.

    Raises:
        ValueError: The two documents were computed with different bootstrap settings.
    """
    current = current or make_document(kind, bootstrap=_bootstrap_of(incoming))
    if current["bootstrap"] != incoming["bootstrap"]:
        raise ValueError(
            f"bootstrap settings differ: the existing leaderboard has {current['bootstrap']}, the new "
            f"rows {incoming['bootstrap']}; use the same --n-resamples/--confidence/--bootstrap-seed "
            f"or a new output folder"
        )
    rows = _newest_rows(current["rows"], incoming["rows"])
    failures = _failures_after_rows([*current["failures"], *incoming["failures"]], rows.values())
    nights = {entry["night"]: entry for entry in current["nights"]}
    nights.update({entry["night"]: entry for entry in incoming["nights"]})
    document = make_document(
        kind, rows.values(), failures, bootstrap=_bootstrap_of(incoming), generated_at=generated_at
    )
    document["nights"] = [copy.deepcopy(nights[night]) for night in sorted(nights)]
    return document


def _newest_rows(current: Iterable[dict[str, Any]], incoming: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per ``row_id``, the most recently measured row (``incoming`` wins ties)."""
    rows: dict[str, dict[str, Any]] = {row["row_id"]: row for row in current}
    for row in incoming:
        kept = rows.get(row["row_id"])
        if kept is None or row["measured_at"] >= kept["measured_at"]:
            rows[row["row_id"]] = row
    return rows


def _failures_after_rows(failures: Iterable[dict[str, Any]], rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The failures of a model after its latest measured row (all of a model without a row)."""
    latest_measured: dict[str, str] = {}
    for row in rows:
        name = row["model"]["name"]
        latest_measured[name] = max(latest_measured.get(name, ""), row["measured_at"])
    return [failure for failure in failures if failure["failed_at"] > latest_measured.get(failure["name"], "")]


def _bootstrap_of(document: Mapping[str, Any]) -> BootstrapSettings:
    bootstrap = document["bootstrap"]
    return BootstrapSettings(
        confidence=bootstrap["confidence"], n_resamples=bootstrap["n_resamples"], seed=bootstrap["seed"]
    )
