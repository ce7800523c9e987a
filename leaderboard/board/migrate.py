"""Reading boards written under an older version of the schema (see docs/leaderboard.md's migration notes).

:func:`upgrade` turns a parsed document of an older version into the current one, in memory, before
:func:`~.schema.load_document` validates it, so every command reads old boards; the next ``build`` or
``ingest`` rewrites every board and history file this changes (:func:`needs_upgrade`).
1.x -> 2.0: ``settings.system_instruction_sha`` and ``settings.fewshot_as_multiturn`` move to the row's
``provenance``; the ids and ``boards`` are recomputed (of two old rows that become one, the most recent is kept).
2.x -> 3.0 (issue 46): a failure is a code, never free text (:mod:`.failures`): its text is dropped (code
``recorded_as_text``, exit status kept), its log relative. Before 3.1 (issue 54): every published field is
derived again through today's allowlist, rows included (:func:`_republished`): model arguments
(:func:`~.modelid.published_model_args`: an undeclared endpoint's host becomes ``private:<name>``, since an
old board cannot say what its model list declared), adapter paths, task options (a changed row is keyed
again). Every version: a ``provenance.results_file`` recorded as its path becomes ``local:<hash>/<name>``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from logic_consistency.harness_ext.publish.allowlist import public_args, public_metadata, public_path

from .failures import failure_error
from .identity import row_id, settings_id
from .merge import boards_of, shared_options
from .modelid import published_model_args
from .version import SCHEMA_VERSION

__all__ = ["PROMPTING_SETTINGS", "needs_upgrade", "upgrade"]

#: 1.x settings keys that are per-row provenance since 2.0.
PROMPTING_SETTINGS = ("system_instruction_sha", "fewshot_as_multiturn")


def _major(document: Any) -> str | None:
    version = document.get("schema_version") if isinstance(document, dict) else None
    return version.split(".", 1)[0] if isinstance(version, str) else None


def _row_from_1(row: Any, index: int, source: str) -> Any:
    if not (
        isinstance(row, dict)
        and isinstance(row.get("settings"), dict)
        and isinstance(row.get("provenance"), dict)
        and isinstance(row.get("model"), dict)
        and isinstance(row.get("prompt_set"), dict)
    ):
        return row  # malformed: left for validation to report with its path
    if row.get("settings_id") != settings_id(row["settings"]):
        raise ValueError(
            f"$.rows[{index}].settings_id: {row.get('settings_id')} is not the hash of the row's settings "
            f"({settings_id(row['settings'])}); the settings were edited or the row is corrupt (schema 1.x)"
        )
    settings, provenance = row["settings"], row["provenance"]
    for key in PROMPTING_SETTINGS:
        value = settings.pop(key, None)
        provenance.setdefault(key, value)
    row["settings_id"] = settings_id(settings)
    model = row["model"]
    row["row_id"] = row_id(
        str(model.get("name")),
        str(model.get("revision")),
        str(model.get("precision")),
        str(row["prompt_set"].get("id")),
        row["settings_id"],
    )
    return row


def _failure_from_2(failure: Any) -> Any:
    if not isinstance(failure, dict):
        return failure  # malformed: left for validation to report with its path
    error = failure.get("error")
    returncode = error.get("returncode") if isinstance(error, dict) else None
    failure["error"] = failure_error("recorded_as_text", returncode=returncode if isinstance(returncode, int) else None)
    log = failure.get("log_file")
    _, runs, rest = ("/" + log.replace("\\", "/")).rpartition("/runs/") if isinstance(log, str) else ("", "", "")
    failure["log_file"] = f"runs/{rest}" if runs and re.fullmatch(r"[A-Za-z0-9._/-]+", rest) else None
    return failure


def _from_2(document: dict[str, Any]) -> dict[str, Any]:
    upgraded = copy.deepcopy(document)
    upgraded["schema_version"] = SCHEMA_VERSION
    if isinstance(upgraded.get("failures"), list):
        upgraded["failures"] = [_failure_from_2(failure) for failure in upgraded["failures"]]
    return upgraded


def _keyed(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and isinstance(row.get("row_id"), str)
        and isinstance(row.get("measured_at"), str)
        and isinstance(row.get("settings"), dict)
    )


def _latest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per ``row_id``, the most recently measured, in the board's order."""
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        kept = latest.get(row["row_id"])
        if kept is None or row["measured_at"] >= kept["measured_at"]:
            latest[row["row_id"]] = row
    return sorted(
        latest.values(),
        key=lambda row: (row["settings_id"], str(row["model"].get("name")), row["measured_at"], row["row_id"]),
    )


def _from_1(document: dict[str, Any], source: str) -> Any:
    upgraded = copy.deepcopy(document)
    upgraded["schema_version"] = SCHEMA_VERSION  # so that validation names what else is wrong, if anything
    rows = upgraded.get("rows")
    if not isinstance(rows, list):
        return upgraded
    try:
        rows = [_row_from_1(row, index, source) for index, row in enumerate(rows)]
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    if not all(_keyed(row) for row in rows):
        return upgraded  # validation names the malformed row
    upgraded["rows"] = _latest(rows)
    try:
        upgraded["boards"] = boards_of(upgraded["rows"])
    except (KeyError, TypeError, AttributeError):
        return upgraded  # malformed settings: validation names them
    return _from_2(upgraded)


def _path_published(row: Any) -> dict[str, Any] | None:
    """The provenance of a row whose ``results_file`` is the path it lay at (``/home/...``, ``~/...``,
    ``C:\\...``), not ``local:<hash>/<name>`` as builds write it since 3.0 (:func:`public_path`); else ``None``."""
    provenance = row.get("provenance") if isinstance(row, dict) else None
    value = provenance.get("results_file") if isinstance(provenance, dict) else None
    # absolute or home-relative only, not allowlist.is_local_path's "exists here" test: a relative name
    # ("results.json") names no folder, and a board must read the same on every machine
    if isinstance(value, str) and (value.startswith(("/", "~", "\\")) or value[1:3] in (":\\", ":/")):
        return provenance
    return None


def _results_files_public(document: Any) -> Any:
    """``document`` with every row's ``provenance.results_file`` recorded as a build writes it today:
    ``local:<SHA-256 of the path>/<file name>``, never the folder (a home path) a 2.x or early 3.0 build
    recorded (issue 46). A copy if a row had to change; as is otherwise."""
    rows = document.get("rows") if isinstance(document, dict) else None
    if not isinstance(rows, list) or not any(_path_published(row) for row in rows):
        return document
    upgraded = copy.deepcopy(document)
    for row in upgraded["rows"]:
        provenance = _path_published(row)
        if provenance is not None:
            provenance["results_file"] = public_path(provenance["results_file"])
    return upgraded


def _older(document: Any) -> bool:
    """Whether ``document`` was written under a schema version before this one (malformed: no; validation says)."""
    version = document.get("schema_version") if isinstance(document, dict) else None
    try:
        return isinstance(version, str) and tuple(map(int, version.split("."))) < _CURRENT
    except ValueError:
        return False


_CURRENT = tuple(map(int, SCHEMA_VERSION.split(".")))


def _published(backend: Any, model_args: Any, name: Any) -> str:
    """Model arguments as today's build publishes them; of unreadable ones, nothing."""
    try:
        return published_model_args(str(backend), str(model_args or ""), name=str(name))
    except ValueError:
        return ""


def _adapter_republished(provenance: Any) -> None:
    """The adapter's ``path`` and ``base_model`` in ``provenance`` (in place) recorded as :func:`public_path`
    writes them today; a provenance without an adapter mapping is left as is."""
    adapter = provenance.get("adapter") if isinstance(provenance, dict) else None
    if isinstance(adapter, dict):
        adapter.update(
            {key: public_path(adapter[key]) for key in ("path", "base_model") if isinstance(adapter.get(key), str)}
        )


def _options_republished(tasks: Any, backend: Any) -> None:
    """Every task's ``options`` in ``tasks`` (in place) passed again through today's allowlist
    (:func:`public_metadata`, with ``backend``'s public arguments); malformed entries are left as they are."""
    for entry in tasks.values() if isinstance(tasks, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("options"), dict):
            entry["options"] = public_metadata(entry["options"], also=public_args(str(backend))).value


def _rekeyed(row: dict[str, Any], tasks: dict[str, Any]) -> dict[str, Any]:
    """``row`` (in place) keyed again from its current settings: ``settings_id``, ``row_id`` and (when every
    task entry is a mapping) the provenance's shared ``run_options``."""
    model, settings, provenance = row["model"], row["settings"], row.get("provenance")
    row["settings_id"] = settings_id(settings)
    prompt_set = row["prompt_set"].get("id") if isinstance(row.get("prompt_set"), dict) else None
    name, revision, precision = (str(model.get(key)) for key in ("name", "revision", "precision"))
    row["row_id"] = row_id(name, revision, precision, str(prompt_set), row["settings_id"])
    if isinstance(provenance, dict) and all(isinstance(entry, dict) for entry in tasks.values()):
        provenance["run_options"] = shared_options(settings)
    return row


def _row_republished(row: Any) -> Any:
    """``row`` (in place) with its model arguments, adapter paths and task options derived again (see the
    module docstring); keyed again if its settings changed."""
    if not (isinstance(row, dict) and isinstance(row.get("model"), dict) and isinstance(row.get("settings"), dict)):
        return row  # malformed: left for validation to report with its path
    model, settings = row["model"], row["settings"]
    model["model_args"] = _published(model.get("backend"), model.get("model_args"), model.get("name"))
    _adapter_republished(row.get("provenance"))
    tasks = settings.get("tasks")
    _options_republished(tasks, model.get("backend"))
    if not (isinstance(tasks, dict) and tasks) or settings_id(settings) == row.get("settings_id"):
        return row
    return _rekeyed(row, tasks)


def _failures_republished(failures: Any) -> None:
    """Every failure's ``model_args`` in ``failures`` (in place) as today's build publishes them."""
    for failure in failures or []:
        if isinstance(failure, dict):
            failure["model_args"] = _published(failure.get("backend"), failure.get("model_args"), failure.get("name"))


def _row_ids(rows: list[Any]) -> list[Any]:
    """The ``row_id`` of each row, in order (``None`` for a row that is not a mapping)."""
    return [row.get("row_id") if isinstance(row, dict) else None for row in rows]


def _republished(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` in the current version, every published field derived again (issue 54)."""
    upgraded = copy.deepcopy(document)
    upgraded["schema_version"] = SCHEMA_VERSION
    _failures_republished(upgraded.get("failures"))
    rows = upgraded.get("rows")
    if not isinstance(rows, list):
        return upgraded
    before = _row_ids(rows)
    rows = [_row_republished(row) for row in rows]
    upgraded["rows"] = rows
    if before == _row_ids(rows) or not all(map(_keyed, rows)):
        return upgraded  # keys unchanged (or a malformed row: validation names it)
    upgraded["rows"] = _latest(rows)
    try:
        upgraded["boards"] = boards_of(upgraded["rows"])
    except (KeyError, TypeError, AttributeError):
        pass  # malformed settings: validation names them
    return upgraded


def upgrade(document: Any, source: str = "<document>") -> Any:
    """``document`` in the current schema version (a copy if it had to change; as is otherwise).

    Raises:
        ValueError: A 1.x row whose ``settings_id`` is not the hash of its settings (names ``source``
            and the row): re-keying it would hide the corruption.
    """
    major, older = _major(document), _older(document)
    if major == "1":
        document = _from_1(document, source)
    elif major == "2":
        document = _from_2(document)
    if older:
        document = _republished(document)
    return _results_files_public(document)


def needs_upgrade(document: Any, source: str = "<document>") -> bool:
    """Whether :func:`upgrade` changes ``document`` (an older major version, or a path a row published):
    a file holding it is rewritten by the next build."""
    return upgrade(document, source) is not document
