"""What the ``logic-consistency leaderboard`` commands do, their options as plain values.

* :func:`run_build`: the nightly build (:func:`~logic_consistency.leaderboard.run.nightly.build`), its
  page's file checked first;
* :func:`run_ingest`: existing lm-eval results files into the leaderboard;
* :func:`render_board`: the self-contained HTML page of a leaderboard file;
* :func:`load_board`: one leaderboard or history file, checked against the schema.

Bad input raises :class:`ValueError` / :class:`FileNotFoundError` naming the file, the field or the
option; the command line (:mod:`logic_consistency.cli.leaderboard`) prints it in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.common import RESULTS_PATTERN, check_link_loop, files_or_folders
from logic_consistency.options import check_flag, metadata_from_json
from logic_consistency.outputs import check_outputs

from .board.ingest import BootstrapSettings
from .board.nights import check_backfill, check_timestamp
from .board.results import recorded_date
from .board.schema import load_document
from .page.render import render_file
from .run.executor import BuildExecutor, build_executor
from .run.nightly import HISTORY_DIR, LEADERBOARD_FILE, BuildResult, build, check_night, ingest_into, today

__all__ = [
    "DEFAULT_OUT",
    "BuildOptions",
    "SharedOptions",
    "load_board",
    "render_board",
    "run_build",
    "run_ingest",
    "summary",
]

DEFAULT_OUT = "results/leaderboard"


@dataclass(frozen=True)
class SharedOptions:
    """``--night``, the interval options and ``--no-progress``, which ``build`` and ``ingest`` both take."""

    night: str | None = None
    no_progress: bool = False
    n_resamples: int = 10_000
    confidence: float = 0.95
    bootstrap_seed: int = 0

    def bootstrap(self) -> BootstrapSettings:
        """The checked interval settings."""
        check_flag("confidence", self.confidence)
        check_flag("n_resamples", self.n_resamples)  # declared in leaderboard/_options_yaml, with its reasons
        check_flag("bootstrap_seed", self.bootstrap_seed)
        return BootstrapSettings(confidence=self.confidence, n_resamples=self.n_resamples, seed=self.bootstrap_seed)

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of ``build`` and ``ingest_into`` these options stand for."""
        return {"night": self.night, "bootstrap": self.bootstrap(), "progress": False if self.no_progress else None}


@dataclass(frozen=True)
class BuildOptions:
    """``leaderboard build``'s options; ``None`` run settings come from the model list."""

    out: str = DEFAULT_OUT
    models: str | None = None
    only: Sequence[str] = ()
    tasks: str | None = None
    limit: float | None = None
    metadata: str | None = None
    batch_size: str | None = None
    timeout: float | None = None
    shards: int | None = None
    cache_dir: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    retries: int = 2
    lm_eval: str | None = None
    html: str | None = None
    shared: SharedOptions = field(default_factory=SharedOptions)

    def overrides(self) -> dict[str, Any]:
        """The run settings over the model list's."""
        return {
            "tasks": self.tasks,
            "limit": self.limit,
            "metadata": metadata_from_json(self.metadata),
            "batch_size": self.batch_size,
            "timeout": self.timeout,
            "shards": self.shards,
        }


def summary(document: dict[str, Any], path: Path) -> str:
    """One line: the rows, boards, failures and nights of a leaderboard file."""
    return (
        f"{path}: {len(document['rows'])} row(s) on {len(document['boards'])} board(s), "
        f"{len(document['failures'])} failure(s), {len(document['nights'])} night(s)"
    )


def _executor(options: BuildOptions) -> BuildExecutor | None:
    """``--executor``: ``None`` for the local one; Ray's is imported only when chosen."""
    if options.executor == "local":
        if options.ray_address is not None:
            raise ValueError("--ray-address needs --executor ray")
        return None
    # deferred: Ray is an optional extra, imported only under --executor ray
    from .run.ray_executor import check_address, require_ray

    check_flag("retries", options.retries)
    require_ray()  # the install line now, before any model runs
    return build_executor(options.executor, address=check_address(options.ray_address), retries=options.retries)


def run_build(options: BuildOptions) -> BuildResult:
    """``leaderboard build``: check the page's file (``html``), then build; returns the ``BuildResult``.

    ``KeyboardInterrupt`` and ``BuildStopped`` (SIGTERM, SIGHUP) pass through, the previous
    leaderboard unchanged.
    """
    if options.html:
        root = Path(options.out)
        night = check_night(options.shared.night or today())
        inputs: list[str | Path] = [
            root / LEADERBOARD_FILE,
            root / HISTORY_DIR / f"{night}.json",
            *([options.models] if options.models else []),
        ]
        check_outputs([(options.html, "html")], inputs, argument="--html")
    return build(
        options.out,
        model_list=options.models,
        overrides=options.overrides(),
        only=options.only or (),
        cache_dir=options.cache_dir,
        lm_eval=options.lm_eval,
        executor=_executor(options),
        **options.shared.keywords(),
    )


def run_ingest(
    results: Sequence[str],
    *,
    out: str = DEFAULT_OUT,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    shared: SharedOptions | None = None,
    allow_backfill: bool = False,
) -> dict[str, Any]:
    """``leaderboard ingest``: add results files (or folders holding them); returns the leaderboard document.

    ``--night`` more than 7 days before a run's ``date`` is refused before anything is read further
    unless ``allow_backfill`` (:func:`~.nights.check_backfill`); ``allow_backfill`` needs ``--night``.
    """
    night = (shared or SharedOptions()).night
    if allow_backfill and night is None:
        raise ValueError("--allow-backfill: give the night to file the runs under with --night YYYY-MM-DD")
    if night is not None and not allow_backfill:
        _check_backfill(results, night)
    return ingest_into(
        out,
        results,
        name=name,
        revision=revision,
        precision=precision,
        **(shared or SharedOptions()).keywords(),
    )


def _check_backfill(results: Sequence[str], night: str) -> None:
    """Each results file's run against ``--night`` (:func:`~.nights.check_backfill`), before any ingest."""
    check_night(night)  # a malformed night is named as such first
    for path in files_or_folders(results, RESULTS_PATTERN):
        seconds = recorded_date(path)
        if seconds is not None:  # missing or malformed: the ingest names the field
            check_backfill(night, check_timestamp(seconds, where=f"{path}: field 'date'"), where=str(path))


def render_board(leaderboard: str, *, out: str | None = None, title: str = "logic-consistency leaderboard") -> Path:
    """``leaderboard render``: the page of ``leaderboard`` (a file or its folder); ``out`` defaults to
    ``index.html`` next to it. Returns the page's path."""
    source = Path(leaderboard)
    check_link_loop(source)
    if source.is_dir():
        source = source / "leaderboard.json"
    if out is not None and not out.strip():
        raise ValueError("--out: empty; give the HTML file to write (default: index.html next to the leaderboard)")
    page = Path(out) if out else source.with_name("index.html")
    check_outputs([(out or page, "html")], [source], argument="--out")  # as typed: "pages/" names a folder
    document = load_document(source)
    return render_file(document, page, title=title)


def load_board(name: str) -> tuple[Path, dict[str, Any]]:
    """``leaderboard validate``: one leaderboard or history file (a folder: its ``leaderboard.json``), checked."""
    path = Path(name)
    if path.is_dir():
        path = path / "leaderboard.json"
    return path, load_document(path)
