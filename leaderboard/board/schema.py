"""The leaderboard's JSON Schema (``leaderboard.schema.json``) and validation against it.

:func:`validate` runs the JSON Schema (draft 2020-12, via ``jsonschema``) and then the checks a
schema cannot express: unique row ids, each row's ``settings_id`` equal to the hash of its
``settings``, boards matching the rows, intervals with ``low <= high``. Every problem is reported
with the file and the JSON path of the offending field.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections import Counter
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from logic_consistency.common import check_link_loop
from logic_consistency.tasks.reports import declared_ranges, report_hooks

from .identity import canonical_json, row_id, settings_id
from .migrate import upgrade
from .nights import CLOCK_SKEW
from .results import check_depth
from .version import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "load_document", "load_schema", "validate"]

SCHEMA_FILE = "leaderboard.schema.json"
#: At most this many problems are listed in one error message.
MAX_REPORTED = 20


@functools.cache
def load_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package, completed with what the task families declare.

    The file is a template: :func:`_declared_range_properties` adds the metrics' value ranges and
    :func:`_add_report_sections` the rows' report sections.
    """
    text = resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema = json.loads(text)
    schema["$defs"]["task_entry"]["properties"]["metrics"]["patternProperties"] = _declared_range_properties()
    _add_report_sections(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _declared_range_properties() -> dict[str, Any]:
    """One ``patternProperties`` entry per value range the families declared for their metrics.

    The schema file names no family's metric; the ranges come from ``tasks/<family>/_metrics_yaml``.
    """
    properties: dict[str, Any] = {}
    for (low, high), patterns in sorted(declared_ranges().items()):
        low, high = (int(v) if float(v).is_integer() else v for v in (low, high))  # "maximum of 1", not 1.0
        bound = {"minimum": low, "maximum": high}
        properties[f"^({'|'.join(patterns)})(,.*)?$"] = {
            "description": f"A metric declared to lie in [{low:g}, {high:g}]: score and interval bounds in that range.",
            "allOf": [{"$ref": "#/$defs/metric"}],
            "properties": {
                "score": bound,
                "ci95": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "number", **bound}}]},
            },
        }
    return properties


def _add_report_sections(schema: dict[str, Any]) -> None:
    """One required row field per report a family declared (``tasks/<family>/display.py``).

    The row's ``section`` maps task names to one report each; the report's schema is the hook's own,
    kept under ``$defs/<section>``. The schema file names no family's report.
    """
    row = schema["$defs"]["row"]
    for hook in report_hooks():
        if hook.section in schema["$defs"] or hook.section in row["properties"]:
            raise ValueError(f"report section {hook.section!r} clashes with a field of the leaderboard schema")
        schema["$defs"][hook.section] = {"description": hook.description, **hook.schema}
        row["properties"][hook.section] = {
            "type": "object",
            "additionalProperties": {"$ref": f"#/$defs/{hook.section}"},
        }
        row["required"].append(hook.section)


def _path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _non_finite(value: Any, parts: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every NaN or infinite number in ``value`` (JSON Schema's ``number`` accepts them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [parts]
    if isinstance(value, dict):
        return [path for key, item in value.items() for path in _non_finite(item, (*parts, key))]
    if isinstance(value, list):
        return [path for index, item in enumerate(value) for path in _non_finite(item, (*parts, index))]
    return []


def _row_label(document: Any, parts: Any) -> str:
    """`` (row N: model NAME, task T, metric M)`` for a path inside a row, else ``""``."""
    parts = list(parts)
    if len(parts) < 2 or parts[0] != "rows" or not isinstance(parts[1], int) or not isinstance(document, dict):
        return ""
    name = _model_name(document.get("rows"), parts[1])
    label = f"row {parts[1]}" + (f": model {name!r}" if isinstance(name, str) else "")
    return f" ({label}{_task_label(parts)})"


def _model_name(rows: Any, index: int) -> Any:
    """The ``model.name`` of row ``index`` (``None`` where the document does not have one)."""
    row = rows[index] if isinstance(rows, list) and index < len(rows) else None
    model = row.get("model") if isinstance(row, dict) else None
    return model.get("name") if isinstance(model, dict) else None


def _task_label(parts: list[Any]) -> str:
    """``, task T, metric M`` (or ``count C``) for a path inside a row's task, else ``""``."""
    if len(parts) < 4 or parts[2] != "tasks":
        return ""
    label = f", task {parts[3]!r}"
    if len(parts) >= 6 and parts[4] in ("metrics", "counts"):
        label += f", {'metric' if parts[4] == 'metrics' else 'count'} {parts[5]!r}"
    return label


def _is_non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _row_key(row: dict[str, Any]) -> str:
    """The row id a row must carry: the hash of its model, revision, precision, prompt set and board."""
    model = row["model"]
    return row_id(model["name"], model["revision"], model["precision"], row["prompt_set"]["id"], row["settings_id"])


def _duplicate_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Rows that are not unique: a repeated ``row_id``, a ``row_id`` that is not the hash of the row's
    key (a copied row with a new id), or one run (same results file, date and scores) in two rows."""
    problems = [
        f"$.rows: row_id {duplicate} appears {count} times"
        for duplicate, count in Counter(row["row_id"] for row in rows).items()
        if count > 1
    ]
    runs: dict[str, int] = {}
    for index, row in enumerate(rows):
        expected = _row_key(row)
        if row["row_id"] != expected:
            problems.append(
                f"$.rows[{index}].row_id: {row['row_id']} is not the hash of the row's model, revision, "
                f"precision, prompt set and settings ({expected}); the row was copied or edited"
            )
        run = canonical_json([row["measured_at"], row["provenance"]["results_file"], row["tasks"]])
        if run in runs:
            problems.append(
                f"$.rows[{index}]: the same run as $.rows[{runs[run]}] (results file, date and scores), "
                f"listed twice (model {row['model']['name']!r})"
            )
        runs.setdefault(run, index)
    return problems


def _future_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Rows measured more than :data:`~.nights.CLOCK_SKEW` from now (a future row pins its key in a merge)."""
    limit = datetime.now(timezone.utc) + CLOCK_SKEW
    problems = []
    for index, row in enumerate(rows):
        try:
            measured = datetime.fromisoformat(row["measured_at"].replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"$.rows[{index}].measured_at: {row['measured_at']!r} is not a date")
            continue
        if measured.tzinfo is not None and measured > limit:
            problems.append(
                f"$.rows[{index}].measured_at: {row['measured_at']} is in the future; a future row would "
                "pin its place over every later measurement"
            )
    return problems


def _semantic_problems(document: dict[str, Any]) -> list[str]:
    rows = document.get("rows", [])
    problems = _duplicate_rows(rows) + _future_rows(rows)
    per_board: Counter[str] = Counter()
    for index, row in enumerate(rows):
        expected = settings_id(row["settings"])
        if row["settings_id"] != expected:
            problems.append(
                f"$.rows[{index}].settings_id: {row['settings_id']} is not the hash of the row's "
                f"settings ({expected}); the settings were edited or the row is corrupt"
            )
        per_board[row["settings_id"]] += 1
        problems += _interval_problems(index, row)
    return problems + _board_problems(document.get("boards", []), per_board)


def _interval_problems(index: int, row: dict[str, Any]) -> list[str]:
    """Every interval of row ``index`` whose low bound is above its high bound."""
    problems = []
    for task, entry in row["tasks"].items():
        for metric, value in entry["metrics"].items():
            interval = value["ci95"]
            if interval is not None and interval[0] > interval[1]:
                problems.append(
                    f"$.rows[{index}].tasks.{task}.metrics.{metric}.ci95: low {interval[0]} > high {interval[1]}"
                )
    return problems


def _board_problems(board_list: list[dict[str, Any]], per_board: Counter[str]) -> list[str]:
    """Boards that disagree with the rows: missing, with another row count, or with no row."""
    problems = []
    boards = {board["settings_id"]: board for board in board_list}
    for board_id, count in per_board.items():
        if board_id not in boards:
            problems.append(f"$.boards: no board for settings_id {board_id} used by {count} row(s)")
        elif boards[board_id]["n_rows"] != count:
            problems.append(f"$.boards[{board_id}].n_rows: {boards[board_id]['n_rows']}, but {count} row(s) use it")
    for board_id in boards.keys() - per_board.keys():
        problems.append(f"$.boards: board {board_id} has no rows")
    return problems


def validate(document: Any, source: str | os.PathLike[str] = "<document>") -> None:
    """Check ``document`` against the schema and the cross-field rules.

    Args:
        document: A parsed leaderboard (or history) document.
        source: Where it came from, for error messages (a file name).

    Raises:
        ValueError: The document is invalid; the message names ``source`` and every offending
            field (JSON path), up to :data:`MAX_REPORTED` of them.
    """
    validator = jsonschema.Draft202012Validator(load_schema())
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    problems = [
        f"{_path(path)}: NaN or infinite number{_row_label(document, path)}; scores must be finite"
        for path in _non_finite(document)
    ]
    problems += [
        f"{_path(error.absolute_path)}: {error.message}{_row_label(document, error.absolute_path)}"
        for error in errors
        if not _is_non_finite(error.instance)
    ]
    if not problems and isinstance(document, dict):
        problems = _semantic_problems(document)
    if problems:
        shown = problems[:MAX_REPORTED]
        more = len(problems) - len(shown)
        lines = "\n  ".join(shown) + (f"\n  ... and {more} more" if more else "")
        raise ValueError(f"{source}: not a valid leaderboard (schema {SCHEMA_VERSION}):\n  {lines}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (a hand edit; JSON readers would keep either one)."""
    document = dict(pairs)
    if len(document) != len(pairs):
        repeated = sorted({key for key, _ in pairs if sum(1 for other, _ in pairs if other == key) > 1})
        raise ValueError(f"key(s) {repeated} appear twice in one object")
    return document


def load_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a leaderboard or history file (an older major version is upgraded first, :mod:`.migrate`).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: Not JSON or not valid (file and field named).
    """
    file = Path(path)
    check_link_loop(file)
    if file.exists() and not file.is_file():
        raise ValueError(f"{file}: not a regular file (a folder, device or pipe); expected a leaderboard JSON file")
    if not file.is_file():
        raise FileNotFoundError(f"{file}: leaderboard file not found")
    try:
        document = json.loads(file.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError(f"{file}: not a leaderboard (JSON nested too deeply)") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{file}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{file}: not UTF-8 text ({error.reason})") from None
    except ValueError as error:  # a key given twice
        raise ValueError(f"{file}: not a valid leaderboard: {error}") from None
    except OSError as error:
        raise ValueError(f"{file}: cannot read: {error.strerror or error}") from None
    check_depth(document, str(file))
    document = upgrade(document, str(file))
    validate(document, file)
    return document
