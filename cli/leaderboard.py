"""``logic-consistency leaderboard build|ingest|render|validate``.

* ``build``: the nightly build: run the suite on every model of a model list (default: the two
  embedded models), merge into ``OUT/leaderboard.json``, keep ``OUT/history/<night>.json``;
* ``ingest``: add existing lm-eval results files (e.g. from a GPU machine) to the leaderboard;
* ``render``: write the self-contained HTML page of a leaderboard file;
* ``validate``: check leaderboard or history files against the schema.

A thin layer over :mod:`logic_consistency.leaderboard.commands`. Bad input raises
:class:`ValueError` / :class:`FileNotFoundError` naming the file and field; the main
``logic-consistency`` command prints it as ``logic-consistency: error: ...`` (exit status 2).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from logic_consistency.leaderboard.commands import (
    DEFAULT_OUT,
    BuildOptions,
    SharedOptions,
    load_board,
    render_board,
    run_build,
    run_ingest,
    summary,
)
from logic_consistency.leaderboard.page.render import render_file
from logic_consistency.leaderboard.run.modellist import DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS
from logic_consistency.leaderboard.run.nightly import LEADERBOARD_FILE, BuildStopped

from .subcommand import add_executor_flags, add_subcommand, options_from

__all__ = ["add_cli"]


def _interrupted(signal_name: str = "SIGINT", status: int = 130) -> int:
    print(
        f"logic-consistency: interrupted by {signal_name} (the running lm_eval, if any, and its process "
        "group were stopped). Build interrupted; the previous leaderboard is unchanged",
        file=sys.stderr,
    )
    return status


def _shared(args: argparse.Namespace) -> SharedOptions:
    """The options :func:`_add_shared_options` adds."""
    return options_from(SharedOptions, args)


def _run_build(args: argparse.Namespace) -> int:
    try:
        result = run_build(options_from(BuildOptions, args, only=args.only or (), shared=_shared(args)))
    except KeyboardInterrupt:
        return _interrupted()
    except BuildStopped as stop:
        return _interrupted(signal.Signals(stop.signum).name, 128 + stop.signum)
    print(summary(result.document, Path(args.out) / LEADERBOARD_FILE))
    for outcome in result.outcomes:
        if outcome.failure is not None:
            error = outcome.failure["error"]
            print(f"  FAILED {outcome.spec.name}: [{error['code']}] {error['message']} (log: {outcome.log_file})")
        else:
            print(f"  ok     {outcome.spec.name} ({outcome.seconds:.0f} s)")
    if args.html:
        print(f"page: {render_file(result.document, args.html)}")
    return 1 if result.failed else 0


def _run_ingest(args: argparse.Namespace) -> int:
    try:
        document = run_ingest(
            args.results,
            out=args.out,
            name=args.name,
            revision=args.revision,
            precision=args.precision,
            shared=_shared(args),
            allow_backfill=args.allow_backfill,
        )
    except KeyboardInterrupt:
        return _interrupted()
    print(summary(document, Path(args.out) / LEADERBOARD_FILE))
    return 0


def _run_render(args: argparse.Namespace) -> int:
    print(render_board(args.leaderboard, out=args.out, title=args.title))
    return 0


def _run_validate(args: argparse.Namespace) -> int:
    for name in args.files:
        path, document = load_board(name)
        print(summary(document, path) + ": valid")
    return 0


def _add_shared_options(parser: argparse.ArgumentParser) -> None:
    """The options :func:`_shared` reads."""
    parser.add_argument("--night", help="night date YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    group = parser.add_argument_group("intervals")
    group.add_argument(
        "--n-resamples", type=int, default=10_000, help="bootstrap resamples, 1000 to 100000 (default 10000)"
    )
    group.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    group.add_argument("--bootstrap-seed", type=int, default=0, help="bootstrap seed (default 0)")


def _add_build(commands: Any) -> None:
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
    cluster = add_executor_flags(build, local="models one after another here", ray="each model or shard")
    cluster.add_argument("--retries", type=int, default=2, help="Ray retries per model or shard (default 2)")
    build.add_argument("--lm-eval", help="lm_eval executable (default: the one next to this Python)")
    build.add_argument("--html", help="also render the page to this file")
    _add_shared_options(build)
    build.set_defaults(run=_run_build)


def _add_ingest(commands: Any) -> None:
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
    ingest.add_argument(
        "--allow-backfill",
        action="store_true",
        help="with --night: file runs under a night more than 7 days before they were measured (refused otherwise)",
    )
    _add_shared_options(ingest)
    ingest.set_defaults(run=_run_ingest)


def _add_render_and_validate(commands: Any) -> None:
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


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``leaderboard`` and its subcommands on an ``argparse`` subparsers object."""
    parser = add_subcommand(subparsers, "leaderboard", __doc__, None)
    commands = parser.add_subparsers(
        dest="leaderboard_command", required=True, metavar="{build,ingest,render,validate}"
    )
    _add_build(commands)
    _add_ingest(commands)
    _add_render_and_validate(commands)
    return parser
