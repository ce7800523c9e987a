"""The nightly build: run the suite on every listed model, merge into the leaderboard, keep history.

``logic-consistency leaderboard build`` (:func:`build`) reads the model list (:mod:`.modellist`)
and validates the existing board, then runs each model in its own ``lm_eval`` subprocess
(:mod:`.runner`; a model that crashes or hangs past its ``timeout`` cannot take the build down) with
a request cache keyed by the model's whole identity (:func:`.runner.cache_key`), ingests each
results file into a row (:mod:`..board.ingest`) or records the failure, and finally writes
``history/<night>.json`` and ``leaderboard.json``, each atomically.

Nothing is written before every model has run, so a crash or Ctrl-C leaves the previous leaderboard
intact. A lock file stops two builds on the same folder from interleaving; it records the build's
deadline (:func:`build_deadline`), past which the next build takes it over (:mod:`.lock`).
Everything that can be checked before the first model call is checked first (:mod:`.preflight`).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from logic_consistency.common import RESULTS_PATTERN, files_or_folders
from logic_consistency.credentials import KEY_VARIABLES, Redactor
from logic_consistency.harness_ext.jobs.processes import (
    KILL_GRACE_SECONDS,
    Stopped,
    default_lm_eval,
    stop_signals_raise,
)
from logic_consistency.harness_ext.shards.shard import ENV_SHARD
from logic_consistency.outputs import (
    OutputError,
    atomic_write_json,
    check_outputs,
    check_writable,
    remove_stale_temporaries,
)

from ..board import nights
from ..board.ingest import DEFAULT_BOOTSTRAP, BootstrapSettings, ingest_results
from ..board.merge import make_document, merge_documents
from ..board.migrate import needs_upgrade
from ..board.schema import load_document, validate
from .executor import BuildExecutor, build_executor
from .lock import build_lock
from .modellist import ModelSpec, load_model_list
from .preflight import preflight
from .runner import (
    RUNS_DIR,
    RunOutcome,
    RunSettings,
    embedded_sha_subprocess,
    lm_eval_run,
    no_metric_defined,
    run_logged,
)
from .units import cap_shards

__all__ = [
    "BuildResult",
    "BuildStopped",
    "build",
    "check_night",
    "commit",
    "ingest_into",
    "lm_eval_run",
    "run_logged",
    "today",
]

LEADERBOARD_FILE = "leaderboard.json"
HISTORY_DIR = "history"
CACHE_DIR = "cache"


#: A build's stop (SIGTERM, SIGHUP), raised where it was so that the running model is stopped first:
#: the stop of every job of the suite (:class:`~logic_consistency.harness_ext.jobs.processes.Stopped`).
BuildStopped = Stopped


def today() -> str:
    """Today's date in UTC (``YYYY-MM-DD``): the default night."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def check_night(night: str, *, now: datetime | None = None) -> str:
    """Return ``night`` if it is a canonical ``YYYY-MM-DD`` date not in the future, else raise
    :class:`ValueError` (:func:`..board.nights.check_night`, shared by ``build`` and ``ingest``)."""
    return nights.check_night(night, today=now.date() if now is not None else None).isoformat()


def _disable(progress: bool | None) -> bool | None:
    """tqdm's ``disable`` for a progress flag (``None``: bars only on a terminal)."""
    return None if progress is None else not progress


def commit(
    out: Path,
    night: str,
    rows: Iterable[Mapping[str, Any]],
    failures: Iterable[Mapping[str, Any]],
    *,
    bootstrap: BootstrapSettings,
    redactor: Redactor | None = None,
) -> dict[str, Any]:
    """Write tonight's history file and merge it into ``leaderboard.json`` (both atomically).

    Call under :func:`~.lock.build_lock`. Both documents are written through ``redactor``
    (default: the key environment variables of this process, URL user info, key-like arguments):
    no credential reaches the board or the history, even from an older board.

    Returns:
        The new leaderboard document.

    Raises:
        ValueError: The existing files are invalid, or the merged document fails validation (in
            which case nothing is written).
    """
    board_path, history_path = out / LEADERBOARD_FILE, out / HISTORY_DIR / f"{night}.json"
    current = load_document(board_path) if board_path.exists() else None
    tonight = make_document("night", rows, failures, night=night, bootstrap=bootstrap)
    if history_path.exists():
        tonight = merge_documents(load_document(history_path), tonight, kind="night")
    tonight["nights"] = [
        {"night": night, "rows": len(tonight["rows"]), "failures": len(tonight["failures"]), "history_file": None}
    ]
    incoming = copy.deepcopy(tonight)
    incoming["nights"][0]["history_file"] = f"{HISTORY_DIR}/{night}.json"
    merged = merge_documents(current, incoming, kind="leaderboard")
    clean = redactor or Redactor.from_environment()
    tonight, merged = clean.json(tonight), clean.json(merged)
    validate(tonight, history_path)
    validate(merged, board_path)
    older = [(path, doc) for path, doc in _older_history(out / HISTORY_DIR, clean) if path != history_path]
    atomic_write_json(history_path, tonight)
    atomic_write_json(board_path, merged)
    for path, document in older:
        atomic_write_json(path, document)
    return merged


def _older_history(folder: Path, clean: Redactor) -> list[tuple[Path, dict[str, Any]]]:
    """The history files the migration changes (an older major version, a row's results file published as
    its path), upgraded (:mod:`..board.migrate`) and redacted: rewritten with tonight's, so no free text of
    an old failure and no home path stays published (issue 46)."""
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            version = raw.get("schema_version")
        except (OSError, ValueError, AttributeError):
            continue  # not a document of ours: load_document names it where it matters
        if isinstance(version, str) and needs_upgrade(raw, str(path)):  # an older version, a path published
            document = clean.json(load_document(path))
            validate(document, path)
            found.append((path, document))
    return found


@dataclass(frozen=True)
class BuildResult:
    """What a build did."""

    document: dict[str, Any]
    outcomes: list[RunOutcome]

    @property
    def failed(self) -> list[RunOutcome]:
        """The models whose run failed."""
        return [outcome for outcome in self.outcomes if outcome.failure is not None]


#: Seconds a build may spend per model besides its run (identity, ingestion), and on writing the board.
PER_MODEL_SLACK_SECONDS = 900.0
COMMIT_SECONDS = 3600.0


def build_deadline(specs: Sequence[ModelSpec]) -> float:
    """Seconds the build may take: every model's timeout and stop grace, plus slack (:data:`PER_MODEL_SLACK_SECONDS`,
    :data:`COMMIT_SECONDS`). Recorded in the lock: a build past it no longer blocks the next one."""
    return sum(spec.timeout + 2 * KILL_GRACE_SECONDS + PER_MODEL_SLACK_SECONDS for spec in specs) + COMMIT_SECONDS


def _select(specs: list[ModelSpec], only: Sequence[str]) -> list[ModelSpec]:
    """The models named by ``--only`` (all without it); an unknown name is an error."""
    if not only:
        return specs
    unknown = sorted(set(only) - {spec.name for spec in specs})
    if unknown:
        raise ValueError(f"--only: no model named {unknown} in the model list ({[s.name for s in specs]})")
    return [spec for spec in specs if spec.name in set(only)]


def build(
    out: str | os.PathLike[str],
    *,
    model_list: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    only: Sequence[str] = (),
    night: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    lm_eval: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    progress: bool | None = None,
    embedded_sha: Callable[[str], str] = embedded_sha_subprocess,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
    executor: BuildExecutor | None = None,
) -> BuildResult:
    """Run the nightly build (see the module docstring).

    Args:
        out: Leaderboard folder (``leaderboard.json``, ``history/``, ``runs/``, ``cache/``).
        model_list: Model list YAML (default: the shipped two embedded models).
        overrides: Command-line settings over the list (``tasks``, ``limit``, ``metadata``, ...).
        only: Run only these model names.
        night: Night date (default: today, UTC).
        cache_dir: lm-eval request caches (default: ``out/cache``).
        lm_eval: The ``lm_eval`` executable (default: the venv's).
        bootstrap: Interval parameters.
        progress: tqdm bar over models (``None``: only on a terminal).
        embedded_sha: Resolves an embedded model's GGUF sha256 (injectable for tests).
        log: Receives one status line per model.
        executor: Runs the models (:class:`~.executor.BuildExecutor`), e.g. a
            :func:`~.executor.build_executor` ``("ray", ...)``. ``None``: the local one, one
            model after another in this machine.

    Returns:
        The written leaderboard and each model's outcome.

    Raises:
        FileNotFoundError, ValueError: Bad model list (or no enabled model), unknown ``only`` name, bad
            night, unknown backend or task (:mod:`.preflight`: all before any model runs), invalid
            existing leaderboard, or another build running on ``out`` (within its deadline); also
            after the runs, should another build have taken this one's lock over (past its
            deadline): nothing is written then. Model failures do not raise.
        OutputError: The board, history, runs or cache folder cannot be written: found before any
            model runs (and, should the disk fill up meanwhile, when writing the board).
        KeyboardInterrupt: Ctrl-C; the running model is stopped, nothing is written.
        BuildStopped: SIGTERM or SIGHUP; handled as Ctrl-C.
    """
    root = Path(out)
    night = check_night(night or today())
    specs = _select(load_model_list(model_list, overrides), only)
    caches = Path(cache_dir) if cache_dir is not None else root / CACHE_DIR
    _check_build_outputs(root, night, model_list, caches)
    # backends, model arguments, tasks: refused before the first model call (backend names only
    # against this process's registry: a custom --lm-eval may know more)
    preflight(specs, registry=lm_eval is None)
    counts: dict[str, int] = {}  # no unit for no document (loads each sharded model's tasks once)
    specs = [cap_shards(spec, log, counts) for spec in specs]
    # the key environment variables of the build and of every model's ``env`` (model list)
    redactor = Redactor.from_environment({**os.environ, **{k: v for spec in specs for k, v in spec.env.items()}})
    settings = RunSettings(
        night=night,
        out=root,
        cache_dir=caches,
        lm_eval=lm_eval or default_lm_eval(),
        bootstrap=bootstrap,
        embedded_sha=embedded_sha,
        credentials=_key_credentials(),
    )
    _warn_shard_environment(log)
    with (
        stop_signals_raise(),
        build_lock(
            root, deadline_seconds=build_deadline(specs), warn=lambda message: log(f"warning: {message}")
        ) as lock,
    ):
        remove_stale_temporaries(root)
        remove_stale_temporaries(root / HISTORY_DIR)
        if (root / LEADERBOARD_FILE).exists():
            load_document(root / LEADERBOARD_FILE)  # fail now, not after hours of runs
        outcomes = (executor or build_executor(progress=progress)).run(specs, settings, log=log)
        lock.check()  # a build past its deadline whose lock another build took over writes nothing
        document = _commit_outcomes(root, night, outcomes, bootstrap=bootstrap, redactor=redactor)
    return BuildResult(document, outcomes)


def _board_outputs(root: Path, night: str) -> list[tuple[Path, str]]:
    """The two files a build or an ingest writes: the board and tonight's history (for ``check_outputs``)."""
    return [(root / LEADERBOARD_FILE, "json"), (root / HISTORY_DIR / f"{night}.json", "json")]


def _check_build_outputs(root: Path, night: str, model_list: str | os.PathLike[str] | None, caches: Path) -> None:
    """Before any model runs: the board, tonight's history, lm-eval's runs and caches must be writable
    (an OutputError here: exit status 3, not 1 "a model failed" after hours of runs)."""
    check_outputs(_board_outputs(root, night), [model_list] if model_list is not None else [], argument="--out")
    for folder in (root / RUNS_DIR, caches):
        check_writable(folder, folder=True)


def _key_credentials() -> dict[str, str]:
    """The build's credentials: the key environment variables that are set (handed to every unit)."""
    return {name: os.environ[name] for name in sorted(set(KEY_VARIABLES.values())) if os.environ.get(name)}


def _warn_shard_environment(log: Callable[[str], None]) -> None:
    """Say that a shard variable in the environment is ignored: never a fraction of the documents as a model's row
    (use the model list's ``shards`` or ``--shards``)."""
    if os.environ.get(ENV_SHARD):
        log(
            f"warning: {ENV_SHARD}={os.environ[ENV_SHARD]!r} in the environment is ignored: every run is whole "
            "unless the model list's 'shards' or --shards splits it"
        )


def _commit_outcomes(
    root: Path, night: str, outcomes: Sequence[RunOutcome], *, bootstrap: BootstrapSettings, redactor: Redactor
) -> dict[str, Any]:
    """Commit the rows and failures of the runs; a board that cannot be written says where the runs are kept."""
    rows = [outcome.row for outcome in outcomes if outcome.row is not None]
    failures = [outcome.failure for outcome in outcomes if outcome.failure is not None]
    try:
        return commit(root, night, rows, failures, bootstrap=bootstrap, redactor=redactor)
    except OutputError as error:
        raise OutputError(
            f"{error}; tonight's runs are kept in {root / RUNS_DIR / night} (add them with "
            "`leaderboard ingest` once the board can be written)",
            error.errno,
        ) from None


def ingest_into(
    out: str | os.PathLike[str],
    results_paths: Sequence[str | os.PathLike[str]],
    *,
    night: str | None = None,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Add existing lm-eval results files (or folders of them) to the leaderboard in ``out``.

    Raises:
        FileNotFoundError: A path does not exist.
        ValueError: No results file found, or one is unreadable / mismatched (file and field named).
    """
    root = Path(out)
    night = check_night(night or today())
    files = files_or_folders(results_paths, RESULTS_PATTERN)
    check_outputs(_board_outputs(root, night), files, argument="--out")
    rows = [
        ingest_results(
            path,
            name=name,
            revision=revision,
            precision=precision,
            night=night,
            bootstrap=bootstrap,
            progress=bool(progress),
        )
        for path in tqdm(files, desc="ingest", unit="file", disable=_disable(progress))
    ]
    for path, row in zip(files, rows):
        if no_metric_defined(row):
            raise ValueError(f"{path}: field 'results': no metric is defined in any task (nothing to rank); not added")
    with build_lock(root, deadline_seconds=COMMIT_SECONDS):
        return commit(root, night, rows, [], bootstrap=bootstrap)
