"""What the suite checks on ``lm_eval``'s own command line before lm-eval parses it (issue 46).

The autoload hook reads some of ``lm_eval``'s options from ``sys.argv`` before lm-eval's parser does
(:func:`check_lm_eval_argv`), so a spelling the hook would not recognise is refused, not let through:

* **an abbreviation** of an option the suite reads (:data:`READ_OPTIONS`): argparse would take
  ``--metadat`` for ``--metadata``, which the checks below would not see. Spell it in full.
* **a key given twice** across ``--model_args`` (``-a``), ``--gen_kwargs`` and ``--metadata``, which lm-eval
  merges over repeated options and several values (``--metadata a=1 --metadata a=2``, ``--metadata
  a=1 a=2``), keeping the last with a warning only: both places are named. A JSON object followed
  by more values (lm-eval reads only the object) is refused too.
* **``--cache_requests``** (but ``delete``): lm-eval stores those request caches as ``dill`` pickles, which run
  code when read, so the suite never lets one be read (:func:`refuse_request_pickles`); the answers
  cache ``--use_cache`` stores JSON (:mod:`.cache_json`).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from logic_consistency.options import OptionError

__all__ = ["KEYED_OPTIONS", "READ_OPTIONS", "check_lm_eval_argv", "guard_load_from_cache", "refuse_request_pickles"]

#: ``lm_eval`` options whose ``key=value`` pairs lm-eval merges over repetitions (argparse destinations).
KEYED_OPTIONS = ("model_args", "gen_kwargs", "metadata")
#: ``lm_eval`` options the suite reads or refuses itself: none may be abbreviated.
READ_OPTIONS = ("--model_args", "--gen_kwargs", "--metadata", "--cache_requests", "--include_path")

_PICKLES = (
    "lm-eval stores its --cache_requests files as dill pickles, which run code when read, so logic-consistency "
    "never reads one; run without it (answers are cached with --use_cache, as JSON)"
)


@functools.lru_cache(maxsize=1)
def _lm_eval_options() -> dict[str, str]:
    """Every option string of ``lm_eval run`` (what plain ``lm_eval ARGS`` parses) -> its destination."""
    import argparse

    from lm_eval._cli.run import Run

    subparsers = argparse.ArgumentParser(prog="lm_eval").add_subparsers()
    Run.create(subparsers)
    parser = subparsers.choices["run"]
    return {option: action.dest for action in parser._actions for option in action.option_strings}


def _options(argv: Sequence[str]) -> Iterator[tuple[int, str, str | None]]:
    """``(position, option as written, value after '=' or None)`` of every option token of ``argv``."""
    for index, token in enumerate(argv):
        if token == "--":
            return
        if token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            flag, sep, value = token.partition("=")
            yield index, flag, value if sep else None


def _values(argv: Sequence[str], index: int, inline: str | None) -> list[str]:
    """The values of the ``nargs='+'`` option at ``index``: its ``=value`` or the tokens up to the next option."""
    if inline is not None:
        return [inline]
    values = []
    for token in argv[index + 1 :]:
        if token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            break
        values.append(token)
    return values


def _keys(values: list[str], flag: str) -> list[str]:
    """The keys lm-eval's ``MergeDictAction`` reads from one occurrence's values."""
    if not values:
        return []
    if values[0].lstrip().startswith("{"):
        try:
            parsed = json.loads(values[0])
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


def _refuse_abbreviation(flag: str, options: dict[str, str]) -> None:
    if not flag.startswith("--") or flag in options:
        return
    meant = [option for option in READ_OPTIONS if option.startswith(flag)]
    if meant:
        raise OptionError(
            f"lm_eval {flag}: an abbreviation of {meant[0]}, which logic-consistency checks before lm-eval "
            f"parses it; spell it in full ({meant[0]})"
        )


def check_lm_eval_argv(argv: Sequence[str]) -> None:
    """Refuse an abbreviation of :data:`READ_OPTIONS`, a key given twice in :data:`KEYED_OPTIONS` and
    ``--cache_requests`` in ``argv`` (``lm_eval``'s arguments; see the module docstring).

    Raises:
        OptionError: Naming the option as written, and for a repeated key both places it was given.
    """
    options = _lm_eval_options()
    seen: dict[tuple[str, str], str] = {}
    for index, flag, inline in _options(argv):
        _refuse_abbreviation(flag, options)
        dest = options.get(flag)
        if dest == "cache_requests":
            value = inline if inline is not None else next(iter(_values(argv, index, None)), "true")
            if value in ("true", "refresh"):  # "delete" removes lm-eval's files; anything else lm-eval refuses
                raise OptionError(f"lm_eval {flag} {value}: {_PICKLES}")
        if dest not in KEYED_OPTIONS:
            continue
        values = _values(argv, index, inline)
        given = f"{flag} {' '.join(values)}"
        for key in _keys(values, flag):
            if (dest, key) in seen:
                first = seen[(dest, key)]
                where = f"in {given!r:.80}" if first == given else f"in {first!r:.80} and in {given!r:.80}"
                raise OptionError(f"lm_eval --{dest}: key {key!r} given twice ({where}); lm-eval would keep the last")
            seen[(dest, key)] = given


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
