"""What the suite checks on ``lm_eval``'s own command line before lm-eval parses it (issue 46).

The autoload hook reads some of ``lm_eval``'s options from ``sys.argv`` (:func:`check_lm_eval_argv`), with
argparse itself (:func:`_recording_parser`: ``-apretrained=x``, ``-a=...``, ``-sapretrained=x``, ``--opt=v``
are read as lm-eval reads them) and in the keys of a ``--config`` (``-C``) YAML, and refuses:

* **an abbreviation** of an option the suite reads (:data:`READ_OPTIONS`, ``--metadat``): spell it in full.
* **a key given twice** across ``--model_args`` (``-a``), ``--gen_kwargs`` and ``--metadata``, which lm-eval
  merges over repeated options and values (``--metadata a=1 --metadata a=2``, ``--metadata a=1 a=2``),
  keeping the last with a warning only: both places are named. So is a JSON object followed by more values
  (lm-eval reads only the object), a key repeated in a ``--config`` file (PyYAML keeps the last), and such an
  option both in the file and on the command line (lm-eval drops the file's whole mapping).
* **``--cache_requests``** (but ``delete``; also ``cache_requests: true`` in a ``--config``): ``dill`` pickles,
  which run code when read (:func:`refuse_request_pickles`); ``--use_cache`` stores JSON (:mod:`.cache_json`).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import yaml

from logic_consistency.options import OptionError, unique_keys

__all__ = ["KEYED_OPTIONS", "READ_OPTIONS", "check_lm_eval_argv", "guard_load_from_cache", "refuse_request_pickles"]

#: ``lm_eval`` options whose ``key=value`` pairs lm-eval merges over repetitions (argparse destinations).
KEYED_OPTIONS = ("model_args", "gen_kwargs", "metadata")
#: ``lm_eval`` options the suite reads or refuses itself: none may be abbreviated.
READ_OPTIONS = ("--model_args", "--gen_kwargs", "--metadata", "--cache_requests", "--include_path")

_PICKLES = (
    "lm-eval stores its --cache_requests files as dill pickles, which run code when read, so logic-consistency "
    "never reads one; run without it (answers are cached with --use_cache, as JSON)"
)


def _lm_eval_parser() -> argparse.ArgumentParser:
    """lm-eval's ``lm_eval run`` parser (what plain ``lm_eval ARGS`` parses)."""
    from lm_eval._cli.run import Run

    subparsers = argparse.ArgumentParser(prog="lm_eval").add_subparsers()
    Run.create(subparsers)
    parser: argparse.ArgumentParser = subparsers.choices["run"]
    return parser


@functools.lru_cache(maxsize=1)
def _lm_eval_options() -> dict[str, str]:
    """Every option string of ``lm_eval run`` -> its destination."""
    return {option: action.dest for action in _lm_eval_parser()._actions for option in action.option_strings}


class _Occurrence(NamedTuple):
    """One option as argparse read it: its destination, the option string it matched, its values."""

    dest: str
    option: str
    values: list[str]


class _Seen(argparse.Action):
    """Records every occurrence of an option, in order, with the values argparse gave it."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        # A string or a list as written; anything else is the option's const, set by the option alone
        # (``--apply_chat_template`` gives True), which has no value of its own.
        given = [values] if isinstance(values, str) else [str(v) for v in values] if isinstance(values, list) else []
        namespace.seen.append(_Occurrence(self.dest, option_string or self.dest, given))


class _Unparsed(Exception):
    """argparse would refuse the command line: lm-eval then reports it itself."""


class _QuietParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Unparsed(message)


@functools.lru_cache(maxsize=1)
def _recording_parser() -> argparse.ArgumentParser:
    """A parser with every option string of ``lm_eval run`` and its ``nargs``, each recording its occurrences
    (:class:`_Seen`). argparse's own machinery reads the command line, so every spelling it accepts is seen as
    lm-eval sees it: ``-apretrained=x`` and ``-a=...`` (a value glued to a short option), ``-sapretrained=x``
    (flags combined), ``--metadata=...``, an abbreviation, values up to the next option (rather than a hand
    tokenizer that missed the glued forms)."""
    parser = _QuietParser(prog="lm_eval", add_help=False, allow_abbrev=True)
    for action in _lm_eval_parser()._actions:
        if action.option_strings:
            parser.add_argument(
                *action.option_strings, dest=action.dest, nargs=action.nargs, const=action.const, action=_Seen
            )
    return parser


def _occurrences(argv: Sequence[str]) -> list[_Occurrence]:
    """Every option of ``argv`` as lm-eval's parser reads it (empty if argparse would refuse ``argv``)."""
    namespace = argparse.Namespace(seen=[])
    try:
        _recording_parser().parse_known_args(list(argv), namespace)
    except _Unparsed:
        return []
    return list(namespace.seen)


def _keys(values: list[str], flag: str) -> list[str]:
    """The keys lm-eval's ``MergeDictAction`` reads from one occurrence's values."""
    if not values:
        return []
    if values[0].lstrip().startswith("{"):
        try:  # a key given twice inside the one object: lm-eval's json.loads would keep the last
            parsed = json.loads(values[0], object_pairs_hook=lambda pairs: unique_keys(pairs, where=f"lm_eval {flag}"))
        except json.JSONDecodeError:  # lm-eval reports malformed JSON itself
            return []
        if isinstance(parsed, dict):
            if len(values) > 1:
                raise OptionError(
                    f"lm_eval {flag} {values[0]!r:.60} {' '.join(values[1:])!r:.60}: lm-eval reads only the JSON "
                    "object and drops the values after it; give one JSON object or key=value pairs"
                )
            return [str(key) for key in parsed]
    from lm_eval._cli.utils import split_top_level

    return [part.partition("=")[0].strip() for value in values for part in split_top_level(value) if "=" in part]


def _refuse_abbreviations(argv: Sequence[str], options: Mapping[str, str]) -> None:
    """An abbreviation (``--metadat``) of an option of :data:`READ_OPTIONS`: the autoload hook's own readers
    of ``sys.argv`` look for the full spelling."""
    for token in argv:
        if token == "--":
            return
        flag = token.partition("=")[0]
        if not flag.startswith("--") or flag in options:
            continue
        meant = [option for option in READ_OPTIONS if option.startswith(flag)]
        if meant:
            raise OptionError(
                f"lm_eval {flag}: an abbreviation of {meant[0]}, which logic-consistency checks before lm-eval "
                f"parses it; spell it in full ({meant[0]})"
            )


def _refuse_request_cache(item: _Occurrence) -> None:
    """``--cache_requests true|refresh`` (also a config file's ``cache_requests: true``): dill pickles."""
    value = item.values[0] if item.values else "true"
    if str(value).strip().lower() in ("true", "refresh"):  # "delete" removes lm-eval's files; reads none
        raise OptionError(f"lm_eval {item.option} {value}: {_PICKLES}")


def _config_occurrences(path: str) -> list[_Occurrence]:
    """What a ``--config`` YAML sets, as if given on the command line (``model_args: {...}`` is one
    ``--model_args`` of that mapping, as JSON); lm-eval takes any ``lm_eval run`` option from it.

    Raises:
        OptionError: The file is unreadable, not YAML or repeats a key (PyYAML would keep the last), naming it.
    """
    from logic_consistency.common import load_yaml

    try:
        document = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise OptionError(f"lm_eval --config {path}: {' '.join(str(error).split())}") from None
    if not isinstance(document, dict):
        return []  # lm-eval refuses a root that is not a mapping, naming the file
    found = []
    for dest, value in document.items():
        text = json.dumps(value) if isinstance(value, (dict, list)) else None if value is None else str(value)
        found.append(_Occurrence(str(dest), f"--config {path}: {dest}", [] if text is None else [text]))
    return found


def _refuse_config_and_command_line(seen: Sequence[_Occurrence]) -> None:
    """A keyed option both in a ``--config`` file and on the command line: lm-eval replaces the file's whole
    mapping by the command line's (a warning only), so the file's other keys would be dropped."""
    from_file = {item.dest: item.option for item in seen if item.option.startswith("--config ")}
    for item in seen:
        if item.dest in KEYED_OPTIONS and item.dest in from_file and not item.option.startswith("--config "):
            raise OptionError(
                f"lm_eval --{item.dest}: given in {from_file[item.dest]!r} and on the command line ({item.option}); "
                f"lm-eval would drop every key of the file's {item.dest}; give it in one place"
            )


def _refuse_repeated_keys(seen: Sequence[_Occurrence]) -> None:
    """A key given twice across the occurrences of :data:`KEYED_OPTIONS` (lm-eval merges them, keeping the last)."""
    first_given: dict[tuple[str, str], str] = {}
    for item in seen:
        if item.dest not in KEYED_OPTIONS:
            continue
        given = f"{item.option} {' '.join(item.values)[:60]}"  # the option in full (a --config file's path)
        for key in _keys(item.values, item.option):
            first = first_given.get((item.dest, key))
            first_given.setdefault((item.dest, key), given)
            if first is not None:
                where = f"in {given!r}" if first == given else f"in {first!r} and in {given!r}"
                raise OptionError(
                    f"lm_eval --{item.dest}: key {key!r} given twice ({where}); lm-eval would keep the last"
                )


def check_lm_eval_argv(argv: Sequence[str]) -> None:
    """Refuse an abbreviation of :data:`READ_OPTIONS`, a key given twice in :data:`KEYED_OPTIONS` and
    ``--cache_requests`` in ``argv`` (``lm_eval``'s arguments; see the module docstring), in every spelling
    argparse accepts (:func:`_recording_parser`) and among the keys of a ``--config`` YAML.

    Raises:
        OptionError: Naming the option as written, and for a repeated key both places it was given.
    """
    _refuse_abbreviations(argv, _lm_eval_options())
    seen = _occurrences(argv)
    for item in [*seen]:
        if item.dest == "config" and item.values:
            seen += _config_occurrences(item.values[0])
    for item in seen:
        if item.dest == "cache_requests":
            _refuse_request_cache(item)
    _refuse_config_and_command_line(seen)
    _refuse_repeated_keys(seen)


def refuse_request_pickles(cache_requests: Any, where: str) -> None:
    """Refuse ``cache_requests`` (``simple_evaluate``'s, ``evaluate``'s) when it would read or write lm-eval's
    pickled request cache.

    Raises:
        OptionError: ``cache_requests`` is true; the message names ``where``.
    """
    if cache_requests:
        raise OptionError(f"{where}: cache_requests={cache_requests!r}: {_PICKLES}")


def guard_load_from_cache(load: Callable[..., Any], cache_file: Callable[[str], str]) -> Callable[..., Any]:
    """Wrap lm-eval's ``load_from_cache(file_name, cache)``: a request cache is never read (``dill``).

    ``cache_file(file_name)`` is lm-eval's path of that cache. Reached only when ``cache_requests`` got
    past :func:`check_lm_eval_argv` and :func:`refuse_request_pickles` (a direct ``evaluate`` call).
    """

    @functools.wraps(load)
    def wrapper(file_name: str, cache: bool = False) -> Any:
        if not cache:
            return None
        path = cache_file(file_name)
        state = "holds a dill pickle" if os.path.lexists(path) else "would hold a dill pickle"
        raise OptionError(f"--cache_requests: {path} {state}; {_PICKLES}")

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
