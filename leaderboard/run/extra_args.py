"""``extra_args`` of the model list, parsed with lm-eval's own ``lm_eval run`` argument parser.

So every spelling of an option the build sets itself is refused (``-a``, ``--model_args=...``, the
abbreviation ``--output_pat``, combined short flags, a ``--config`` file that could set any of them),
and so is an argument ``lm_eval`` would refuse after the build had started, with the closest option, or
that the run's ``lm_eval`` hook would refuse (a key given twice across ``-a``/``--model_args``,
``--gen_kwargs`` and ``--metadata``, glued short forms such as ``-apretrained=x`` included:
:func:`~logic_consistency.harness_ext.publish.command_line.check_lm_eval_argv`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv
from logic_consistency.options import OptionError, closest

__all__ = ["BUILD_OWNED", "REFUSED", "parse_extra_args"]

#: ``lm_eval run`` options (argparse destinations) the build sets itself, and the model-list key to
#: use instead. ``--config`` reads any of them from a file, so it is the build's too.
BUILD_OWNED: dict[str, str] = {
    "model": "use the entry's 'model' key",
    "model_args": "use the entry's 'model_args' key",
    "tasks": "use the 'tasks' key",
    "batch_size": "use the 'batch_size' key",
    "limit": "use the 'limit' key",
    "metadata": "use the 'metadata' key",
    "apply_chat_template": "use the 'apply_chat_template' key",
    "output_path": "the build writes to runs/<night>/<model>",
    "log_samples": "the build always logs samples",
    "use_cache": "the build keeps one request cache per model identity",
    "config": "a config file may set any of the build's options; give them as model-list keys",
}

#: ``lm_eval run`` options a build never passes, and why.
REFUSED: dict[str, str] = {
    "cache_requests": "lm-eval stores its request caches as dill pickles, which run code when read; a build "
    "caches answers with --use_cache, as JSON, and never reads a pickle",
    "predict_only": "lm-eval then swaps every metric for 'bypass' and computes no score, so the run would have "
    "model outputs and nothing to publish; a build scores every run",
}


class _Recording(argparse.Namespace):
    """A namespace that remembers which options the parsed arguments set (defaults are set beforehand)."""

    def __init__(self, defaults: dict[str, Any]) -> None:
        super().__init__()
        self.__dict__.update(defaults)
        self.__dict__["given"] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        self.given[name] = value
        super().__setattr__(name, value)


def _run_parser(where: str, extra: Sequence[str]) -> argparse.ArgumentParser:
    """lm-eval's ``lm_eval run`` parser (what plain ``lm_eval ARGS`` uses), raising instead of exiting."""
    from lm_eval._cli.run import Run

    subparsers = argparse.ArgumentParser(prog="lm_eval").add_subparsers()
    Run.create(subparsers)
    parser: argparse.ArgumentParser = subparsers.choices["run"]
    options = [option for action in parser._actions for option in action.option_strings]

    def refuse(message: str) -> NoReturn:
        typos = [token.split("=", 1)[0] for token in extra if token.startswith("-")]
        typos = [typo for typo in typos if not any(option.startswith(typo) for option in options)]
        near = closest(typos[0], options) if typos else None
        hint = f"; did you mean {near!r}?" if near else ""
        raise ValueError(f"{where}: 'extra_args' {list(extra)}: lm_eval would refuse them: {message}{hint}")

    def leave(status: int = 0, message: str | None = None) -> NoReturn:  # e.g. --help: print and exit
        refuse(message or f"it would exit with status {status} instead of running")

    parser.error = refuse  # type: ignore[method-assign]
    parser.exit = leave  # type: ignore[method-assign]
    parser.print_help = lambda *_: None  # type: ignore[method-assign]
    return parser


def parse_extra_args(extra: Sequence[str], where: str) -> dict[str, Any]:
    """The ``lm_eval`` options ``extra`` sets (destination -> value), parsed as ``lm_eval`` parses them.

    Raises:
        ValueError: ``lm_eval`` would refuse an argument, or one sets an option of :data:`BUILD_OWNED` or
            :data:`REFUSED` (in any spelling); the message names ``where``, the arguments and the entry key to
            use or the reason.
    """
    if not extra:
        return {}
    parser = _run_parser(where, extra)
    defaults = {action.dest: action.default for action in parser._actions if action.default is not argparse.SUPPRESS}
    defaults.update(parser._defaults)  # set_defaults(func=...): not an option
    namespace = _Recording(defaults)
    parser.parse_args(list(extra), namespace)
    given: dict[str, Any] = namespace.given
    for dest, advice in BUILD_OWNED.items():
        if dest in given:
            raise ValueError(
                f"{where}: 'extra_args' {list(extra)} sets lm_eval's --{dest}, which the build sets itself ({advice})"
            )
    for dest, reason in REFUSED.items():
        if dest in given:
            raise ValueError(
                f"{where}: 'extra_args' {list(extra)} sets lm_eval's --{dest}, refused in builds: {reason}"
            )
    try:  # a key given twice across -a/--model_args, --gen_kwargs, --metadata: what the run's lm_eval would refuse
        check_lm_eval_argv(extra)
    except OptionError as error:
        raise ValueError(f"{where}: 'extra_args' {list(extra)}: {error}") from None
    return given
