"""``logic-consistency leaderboard build|ingest|render|validate``.

* ``build``: the nightly build: run the suite on every model of a model list (default: the two
  embedded models), merge into ``OUT/leaderboard.json``, keep ``OUT/history/<night>.json``;
* ``ingest``: add existing lm-eval results files (e.g. from a GPU machine) to the leaderboard;
* ``render``: write the self-contained HTML page of a leaderboard file;
* ``validate``: check leaderboard or history files against the schema.

Bad input raises :class:`ValueError` / :class:`FileNotFoundError` naming the file and field; the
main ``logic-consistency`` command prints it as ``logic-consistency: error: ...`` (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from logic_consistency.leaderboard.modellist import DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS
from logic_consistency.outputs import check_outputs
from logic_consistency.subcommands import add_subcommand

__all__ = ["add_cli"]

DEFAULT_OUT = "results/leaderboard"
#: Accepted ``--n-resamples``: below 1,000 the 2.5% and 97.5% percentiles rest on a few resamples
#: (one resample gives a zero-width "95%" interval); above 100,000 a run's group intervals take
#: minutes and gigabytes for no visible gain.
N_RESAMPLES_RANGE = (1_000, 100_000)


def _bootstrap(args: argparse.Namespace) -> Any:
    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .ingest import BootstrapSettings

    if not 0.0 < args.confidence < 1.0:
        raise ValueError(f"--confidence must be strictly between 0 and 1, got {args.confidence}")
    low, high = N_RESAMPLES_RANGE
    if not low <= args.n_resamples <= high:
        raise ValueError(
            f"--n-resamples must be between {low:,} and {high:,}, got {args.n_resamples:,} (fewer resamples "
            "make the percentile bounds of a 95% interval unreliable, more take too long and too much memory)"
        )
    if args.bootstrap_seed < 0:
        raise ValueError(f"--bootstrap-seed must be >= 0, got {args.bootstrap_seed}")
    return BootstrapSettings(confidence=args.confidence, n_resamples=args.n_resamples, seed=args.bootstrap_seed)


def _shared_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--night``, the interval options and ``--no-progress``, which ``build`` and ``ingest`` both take."""
    return {"night": args.night, "bootstrap": _bootstrap(args), "progress": False if args.no_progress else None}


def _metadata(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"--metadata: not valid JSON ({error.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"--metadata must be a JSON object, got {text!r}")
    return value


def _summary(document: dict[str, Any], path: Path) -> str:
    return (
        f"{path}: {len(document['rows'])} row(s) on {len(document['boards'])} board(s), "
        f"{len(document['failures'])} failure(s), {len(document['nights'])} night(s)"
    )


def _interrupted(signal_name: str = "SIGINT", status: int = 130) -> int:
    print(
        f"logic-consistency: interrupted by {signal_name} (the running lm_eval, if any, and its process "
        "group were stopped). Build interrupted; the previous leaderboard is unchanged",
        file=sys.stderr,
    )
    return status


def _executor(args: argparse.Namespace) -> Any:
    """``--executor``: ``None`` for the local one; Ray's is imported only when chosen."""
    if args.executor == "local":
        if args.ray_address is not None:
            raise ValueError("--ray-address needs --executor ray")
        return None
    # deferred: Ray is an optional extra, imported only under --executor ray
    from .ray_executor import (
        RayExecutor,
        require_ray,
    )

    if args.retries < 0:
        raise ValueError(f"--retries must be >= 0, got {args.retries}")
    require_ray()  # the install line now, before any model runs
    return RayExecutor(address=args.ray_address, retries=args.retries)


def _run_build(args: argparse.Namespace) -> int:

    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .nightly import (
        HISTORY_DIR,
        LEADERBOARD_FILE,
        BuildStopped,
        build,
        check_night,
        today,
    )

    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .render import render_file

    if args.html:
        root = Path(args.out)
        night = check_night(args.night or today())
        inputs = [
            root / LEADERBOARD_FILE,
            root / HISTORY_DIR / f"{night}.json",
            *([args.models] if args.models else []),
        ]
        check_outputs([(args.html, "html")], inputs, argument="--html")
    overrides = {
        "tasks": args.tasks,
        "limit": args.limit,
        "metadata": _metadata(args.metadata),
        "batch_size": args.batch_size,
        "timeout": args.timeout,
        "shards": args.shards,
    }
    try:
        result = build(
            args.out,
            model_list=args.models,
            overrides=overrides,
            only=args.only or (),
            cache_dir=args.cache_dir,
            lm_eval=args.lm_eval,
            executor=_executor(args),
            **_shared_options(args),
        )
    except KeyboardInterrupt:
        return _interrupted()
    except BuildStopped as stop:
        return _interrupted(signal.Signals(stop.signum).name, 128 + stop.signum)
    board = Path(args.out) / LEADERBOARD_FILE
    print(_summary(result.document, board))
    for outcome in result.outcomes:
        if outcome.failure is not None:
            print(f"  FAILED {outcome.spec.name}: {outcome.failure['error']['message']} (log: {outcome.log_file})")
        else:
            print(f"  ok     {outcome.spec.name} ({outcome.seconds:.0f} s)")
    if args.html:
        print(f"page: {render_file(result.document, args.html)}")
    return 1 if result.failed else 0


def _run_ingest(args: argparse.Namespace) -> int:
    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .nightly import (
        LEADERBOARD_FILE,
        ingest_into,
    )

    try:
        document = ingest_into(
            args.out,
            args.results,
            name=args.name,
            revision=args.revision,
            precision=args.precision,
            **_shared_options(args),
        )
    except KeyboardInterrupt:
        return _interrupted()
    print(_summary(document, Path(args.out) / LEADERBOARD_FILE))
    return 0


def _run_render(args: argparse.Namespace) -> int:

    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .render import render_file

    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .schema import load_document

    source = Path(args.leaderboard)
    if source.is_dir():
        source = source / "leaderboard.json"
    if args.out is not None and not args.out.strip():
        raise ValueError("--out: empty; give the HTML file to write (default: index.html next to the leaderboard)")
    out = Path(args.out) if args.out else source.with_name("index.html")
    check_outputs([(args.out or out, "html")], [source], argument="--out")  # as typed: "pages/" names a folder
    document = load_document(source)
    print(render_file(document, out, title=args.title))
    return 0


def _run_validate(args: argparse.Namespace) -> int:
    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from .schema import load_document

    for name in args.files:
        path = Path(name)
        if path.is_dir():
            path = path / "leaderboard.json"
        print(_summary(load_document(path), path) + ": valid")
    return 0


def _add_shared_options(parser: argparse.ArgumentParser) -> None:
    """The options :func:`_shared_options` reads."""
    parser.add_argument("--night", help="night date YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    group = parser.add_argument_group("intervals")
    group.add_argument(
        "--n-resamples", type=int, default=10_000, help="bootstrap resamples, 1000 to 100000 (default 10000)"
    )
    group.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    group.add_argument("--bootstrap-seed", type=int, default=0, help="bootstrap seed (default 0)")


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``leaderboard`` and its subcommands on an ``argparse`` subparsers object."""

    parser = add_subcommand(subparsers, "leaderboard", __doc__, None, help="build, render and validate the leaderboard")
    commands = parser.add_subparsers(
        dest="leaderboard_command", required=True, metavar="{build,ingest,render,validate}"
    )

    build = commands.add_parser(
        "build",
        help="nightly build: run every listed model, merge into the leaderboard, keep history",
        description="Run lm_eval on every model of the model list (each in its own subprocess, reusing "
        "its request cache), record failures without stopping, merge into OUT/leaderboard.json "
        "and write OUT/history/<night>.json, atomically. Exit status 1 if a model failed.",
    )
    build.add_argument("--models", help="model list YAML (default: the shipped list of the two embedded models)")
    build.add_argument("--out", default=DEFAULT_OUT, help=f"leaderboard folder (default {DEFAULT_OUT})")
    build.add_argument("--only", action="append", metavar="NAME", help="run only this model (repeatable)")
    settings = build.add_argument_group("run settings (override the model list)")
    settings.add_argument("--tasks", help="lm_eval --tasks (default from the list: logic_consistency)")
    settings.add_argument("--limit", type=float, help="lm_eval --limit: instances per task")
    settings.add_argument(
        "--metadata", help="lm_eval --metadata JSON, merged over the list's, e.g. '{\"max_items\": 5}'"
    )
    settings.add_argument("--batch-size", help="lm_eval --batch_size")
    settings.add_argument(
        "--timeout",
        type=float,
        help="seconds per model before its run (lm_eval and every process it started) is stopped and recorded "
        f"as failed (default from the list, else {DEFAULT_TIMEOUT_SECONDS:g} = 6 hours; at most "
        f"{MAX_TIMEOUT_SECONDS:g})",
    )
    settings.add_argument(
        "--shards", type=int, help="split every model into N shards (units run apart, merged exactly)"
    )
    build.add_argument(
        "--cache-dir",
        help="lm-eval request caches, one per model (per shard when sharded) (default OUT/cache); "
        "with --executor ray give a folder every node sees, so a retry on another node resumes",
    )
    cluster = build.add_argument_group("cluster")
    cluster.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: models one after another here (default); ray: each model or shard is a Ray task "
        '(needs pip install "logic-consistency[ray]")',
    )
    cluster.add_argument(
        "--ray-address", help="Ray cluster to join: auto or ray://host:port (default: start a local Ray)"
    )
    cluster.add_argument("--retries", type=int, default=2, help="Ray retries per model or shard (default 2)")
    build.add_argument("--lm-eval", help="lm_eval executable (default: the one next to this Python)")
    build.add_argument("--html", help="also render the page to this file")
    _add_shared_options(build)
    build.set_defaults(run=_run_build)

    ingest = commands.add_parser(
        "ingest",
        help="add existing lm-eval results files (with their samples) to the leaderboard",
        description="Add results_<stamp>.json files written by lm_eval --output_path ... --log_samples "
        "(or folders containing them) to OUT/leaderboard.json and OUT/history/<night>.json.",
    )
    ingest.add_argument("results", nargs="+", help="results_*.json files or folders holding them")
    ingest.add_argument("--out", default=DEFAULT_OUT, help=f"leaderboard folder (default {DEFAULT_OUT})")
    ingest.add_argument("--name", help="model display name (default: from the results file's model_args)")
    ingest.add_argument("--revision", help="weights revision/checksum (default: from model_args or the embedded model)")
    ingest.add_argument("--precision", help="precision label (default: dtype from model_args)")
    _add_shared_options(ingest)
    ingest.set_defaults(run=_run_ingest)

    render = commands.add_parser("render", help="write the static HTML page of a leaderboard")
    render.add_argument(
        "leaderboard",
        nargs="?",
        default=f"{DEFAULT_OUT}/leaderboard.json",
        help=f"leaderboard.json or its folder (default {DEFAULT_OUT}/leaderboard.json)",
    )
    render.add_argument("--out", help="HTML file (default: index.html next to the leaderboard)")
    render.add_argument("--title", default="logic-consistency leaderboard", help="page title")
    render.set_defaults(run=_run_render)

    validate = commands.add_parser("validate", help="check leaderboard/history files against the schema")
    validate.add_argument("files", nargs="+", help="leaderboard.json / history/<night>.json files (or folders)")
    validate.set_defaults(run=_run_validate)
    return parser
