"""The suite's one way to validate options, and the one reader of their declarations.

Each package that takes run options declares them once as data in its ``_options_yaml`` (type,
bounds or choices, default, meaning; :func:`load_option_file`); :func:`declared_options` finds them
by walking the package, so this module names no option, and :data:`SUITE_OPTIONS` is their union.
Families, loaders and the leaderboard's model list check values with these functions, so a bad value
gives the same error everywhere: an :class:`OptionError` (a ``ValueError``) naming where the option
came from (``task 'logic_consistency_caters'``, a file), the key and what was expected; an unknown
key names the closest known one. A value of the wrong type raises :class:`OptionTypeError`, both an
``OptionError`` and a ``TypeError``.

Like :mod:`logic_consistency.common`, this module imports nothing of the suite: every layer but
``metrics`` (whose array arguments are checked by ``metrics/_validation.py``) may use it.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema
import yaml

__all__ = [
    "DEFAULT_SEED",
    "OPTIONS_FILE",
    "SUITE_OPTIONS",
    "TYPO_CUTOFF",
    "OptionError",
    "OptionTypeError",
    "Declared",
    "check_bool",
    "check_choice",
    "check_int",
    "check_option",
    "check_seed",
    "closest",
    "collect_options",
    "declared_options",
    "load_option_file",
    "metadata_from_json",
    "read_option",
    "reject_near_misses",
    "reject_unknown",
]

#: The default seed of every seeded choice (item subsets, GV randomisation r, causal display order).
DEFAULT_SEED = 1234

#: A ``metadata`` key this close (:class:`difflib.SequenceMatcher` ratio) to an option name is a typo
#: of it. 0.85 catches one dropped, added or changed character in names of 4+ letters (the typos
#: ``tests/test_bad_inputs_files_options.py`` lists) and no model argument of lm-eval's backends (the
#: nearest, ``max_images`` against the pairwise item cap, is 0.74; ``tests/test_options.py`` checks it).
TYPO_CUTOFF = 0.85


class OptionError(ValueError):
    """An option has a bad value or an unknown key (the message names source and key)."""


class OptionTypeError(OptionError, TypeError):
    """An option has a value of the wrong type."""


def _prefix(where: str | None) -> str:
    return f"{where}: " if where else ""


def closest(key: str, known: Iterable[str]) -> str | None:
    """The known key closest to ``key`` (a likely typo), or ``None``."""
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def reject_unknown(keys: Iterable[str], known: Collection[str], *, where: str | None = None, what: str = "key") -> None:
    """Raise :class:`OptionError` naming every key not in ``known`` and the closest known ones.

    The message reads ``<where>: unknown key(s) ['colour']; did you mean 'color'?; allowed: [...]``.
    """
    unknown = sorted(str(key) for key in keys if key not in known)
    if not unknown:
        return
    suggestions = [f"{key!r} -> {match!r}" for key in unknown if (match := closest(key, known))]
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    raise OptionError(f"{_prefix(where)}unknown {what}(s) {unknown}{hint}; allowed: {sorted(known)}")


def reject_near_misses(keys: Iterable[Any], known: Collection[str], *, where: str | None = None) -> None:
    """Raise :class:`OptionError` for a key that is not an option but a near miss of one.

    The suite's rule for run options (``metadata``): lm-eval 0.4.13 merges ``--model_args`` into
    every task's ``metadata`` and ``--metadata`` reaches every task of the run, other families'
    included, so a key a task does not know cannot simply be refused (``pretrained``, ``dtype`` and
    the other families' options pass). A key within :data:`TYPO_CUTOFF` of a known option or of any
    option of the suite (:data:`SUITE_OPTIONS`) is a typo that would otherwise be silently ignored.

    The message reads ``<where>: unknown option 'seeds'; did you mean 'seed'? (options: [...])``.
    """
    names = sorted(set(known) | SUITE_OPTIONS)
    for key in keys:
        if not isinstance(key, str) or key in known or key in SUITE_OPTIONS:
            continue
        near = difflib.get_close_matches(key, names, n=1, cutoff=TYPO_CUTOFF)
        if near:
            raise OptionError(
                f"{_prefix(where)}unknown option {key!r}; did you mean {near[0]!r}? "
                f"(known options: {sorted(set(known))})"
            )


def check_int(
    value: Any,
    *,
    name: str,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_none: bool = False,
    where: str | None = None,
) -> int | None:
    """``value`` if it is an int (not a bool) in ``[minimum, maximum]`` (or ``None`` when allowed).

    Raises:
        OptionTypeError: Not an integer.
        OptionError: Below ``minimum`` or above ``maximum``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an integer or null" if allow_none else "an integer"
        raise OptionTypeError(f"{_prefix(where)}{name} must be {expected}, got {value!r}")
    if minimum is not None and value < minimum:
        raise OptionError(f"{_prefix(where)}{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise OptionError(f"{_prefix(where)}{name} must be at most {maximum:,}, got {value:,}")
    return value


def check_seed(value: Any, *, name: str = "seed", where: str | None = None) -> int:
    """A seed: a non-negative integer (what ``numpy.random.default_rng`` accepts)."""
    seed = check_int(value, name=name, minimum=0, where=where)
    assert seed is not None
    return seed


def check_bool(value: Any, *, name: str, where: str | None = None) -> bool:
    """``value`` if it is ``True`` or ``False`` (no truthy strings)."""
    if not isinstance(value, bool):
        raise OptionTypeError(f"{_prefix(where)}{name} must be true or false, got {value!r}")
    return value


def check_choice(value: Any, choices: Collection[Any], *, name: str, where: str | None = None) -> Any:
    """``value`` if it is one of ``choices``; else an error suggesting the closest choice."""
    if value not in choices:
        suggestion = closest(value, [str(c) for c in choices]) if isinstance(value, str) else None
        hint = f"; did you mean {suggestion!r}?" if suggestion else ""
        raise OptionError(f"{_prefix(where)}{name} must be one of {sorted(choices)}, got {value!r}{hint}")
    return value


@dataclass(frozen=True)
class Declared:
    """One declared argument: name, type, bounds or choices, default and a one-line meaning."""

    name: str
    kind: type
    default: Any
    meaning: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[Any, ...] | None = None
    nullable: bool = False


# ------------------------------------------------------------------------------- task options
#: The file in which a package of the suite declares the run options its tasks and loaders read.
OPTIONS_FILE = "_options_yaml"

#: The ``type`` a ``_options_yaml`` names, as the :attr:`Declared.kind` it stands for (``integers``:
#: a non-empty list of integers, each within the bounds).
_TYPES: Mapping[str, type] = MappingProxyType(
    {"integer": int, "number": float, "boolean": bool, "string": str, "integers": list}
)

#: One option's declaration in a ``_options_yaml``.
_OPTION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["type", "default", "meaning"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": list(_TYPES)},
        "default": {},
        "meaning": {"type": "string", "minLength": 1},
        "minimum": {"type": "number"},
        "maximum": {"type": "number"},
        "choices": {"type": "array", "minItems": 2, "uniqueItems": True},
        "nullable": {"type": "boolean"},
    },
    "not": {"anyOf": [{"required": ["choices", "minimum"]}, {"required": ["choices", "maximum"]}]},
}


def load_option_file(path: Path) -> tuple[Declared, ...]:
    """The options ``path`` (a ``_options_yaml``) declares, in file order, each default checked.

    The file holds one key, ``options``, mapping each option name to its ``type`` (``integer``,
    ``number``, ``boolean``, ``string``, ``integers``), ``default``, one-line ``meaning`` and, as
    they apply, ``minimum``, ``maximum``, ``choices`` and ``nullable`` (``null`` is a value).

    Raises:
        OptionError: The file is malformed (the message names the file and the option).
    """
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise OptionError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(document, dict) or set(document) != {"options"} or not isinstance(document["options"], dict):
        raise OptionError(f"{path}: expected one key 'options' mapping option names to their declarations")
    validator = jsonschema.Draft202012Validator(_OPTION_SCHEMA)
    declared = []
    for name, facts in document["options"].items():
        invalid = jsonschema.exceptions.best_match(validator.iter_errors(facts))
        if invalid is not None:
            key = f", key {invalid.absolute_path[0]!r}" if invalid.absolute_path else ""
            raise OptionError(f"{path}: option {name!r}{key}: {invalid.message}")
        choices = facts.get("choices")
        arg = Declared(
            str(name),
            _TYPES[facts["type"]],
            facts["default"],
            facts["meaning"],
            minimum=facts.get("minimum"),
            maximum=facts.get("maximum"),
            choices=tuple(choices) if choices is not None else None,
            nullable=facts.get("nullable", False),
        )
        try:  # a null default without nullable: none, each task sets the option
            if arg.default is not None:
                _check_value(arg.default, arg, label=arg.name, where=None)
        except OptionError as error:
            raise OptionError(f"{path}: option {name!r}: its default does not pass its declaration: {error}") from None
        declared.append(arg)
    return tuple(declared)


def _option_files(root: Path) -> list[Path]:
    """Every ``_options_yaml`` in the packages under ``root`` (folders with an ``__init__.py``), sorted."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith((".", "_")) and (Path(folder, name) / "__init__.py").is_file()
        )
        if OPTIONS_FILE in files:
            found.append(Path(folder) / OPTIONS_FILE)
    return sorted(found)


@functools.cache
def declared_options() -> Mapping[str, Declared]:
    """Every run option the suite's packages declare, by name (found by walking the package).

    Raises:
        OptionError: A malformed file, or an option declared in two files (each is declared once).
    """
    return collect_options(_option_files(Path(__file__).parent))


def collect_options(paths: Iterable[Path]) -> Mapping[str, Declared]:
    """The options the ``_options_yaml`` files ``paths`` declare, by name (see :func:`declared_options`)."""
    options: dict[str, Declared] = {}
    where: dict[str, Path] = {}
    for path in paths:
        for arg in load_option_file(path):
            if arg.name in options:
                raise OptionError(f"{path}: option {arg.name!r} is already declared in {where[arg.name]}")
            options[arg.name], where[arg.name] = arg, path
    return MappingProxyType(options)


def _check_number(value: Any, arg: Declared, *, label: str, where: str | None) -> float:
    low = -float("inf") if arg.minimum is None else arg.minimum
    high = float("inf") if arg.maximum is None else arg.maximum
    interval = f"[{low:g}, {high:g}]"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionTypeError(f"{_prefix(where)}{label} must be a number in {interval}, got {value!r}")
    if not low <= value <= high:  # NaN fails too
        raise OptionError(f"{_prefix(where)}{label} must be in {interval}, got {value!r}")
    return float(value)


def _check_integers(value: Any, arg: Declared, *, label: str, where: str | None) -> tuple[int, ...]:
    minimum = "" if arg.minimum is None else f" >= {arg.minimum:g}"
    if not isinstance(value, list | tuple):
        raise OptionTypeError(f"{_prefix(where)}{label} must be a list of integers{minimum}, got {value!r}")
    if not value or not all(
        isinstance(entry, int)
        and not isinstance(entry, bool)
        and (arg.minimum is None or entry >= arg.minimum)
        and (arg.maximum is None or entry <= arg.maximum)
        for entry in value
    ):
        raise OptionError(f"{_prefix(where)}{label} must be a non-empty list of integers{minimum}, got {list(value)!r}")
    return tuple(value)


def _check_value(value: Any, arg: Declared, *, label: str, where: str | None) -> Any:
    """``value`` checked against ``arg`` (messages as :func:`check_int`, :func:`check_choice`, ...)."""
    if value is None and arg.nullable:
        return None
    if arg.choices is not None:
        return check_choice(value, arg.choices, name=label, where=where)
    if arg.kind is int:
        low, high = (None if bound is None else int(bound) for bound in (arg.minimum, arg.maximum))
        return check_int(value, name=label, minimum=low, maximum=high, where=where)
    if arg.kind is bool:
        return check_bool(value, name=label, where=where)
    if arg.kind is float:
        return _check_number(value, arg, label=label, where=where)
    if arg.kind is list:
        return _check_integers(value, arg, label=label, where=where)
    if not isinstance(value, str):
        raise OptionTypeError(f"{_prefix(where)}{label} must be a string, got {value!r} ({arg.meaning})")
    return value


def check_option(
    name: str,
    value: Any,
    *,
    label: str | None = None,
    where: str | None = None,
    minimum: int | None = None,
    nullable: bool | None = None,
) -> Any:
    """``value`` of the declared run option ``name``, checked against its declaration.

    Args:
        name: The option (declared in some ``_options_yaml``).
        value: Its value.
        label: How messages name it (default ``name``; ``"metadata.ks"``).
        where: How messages name the source (``"task 'logic_consistency_caters'"``).
        minimum: A tighter lower bound than the declared one (a cap that must leave room for a subset size).
        nullable: Overrides whether ``None`` is accepted (a loader that cannot take "all").

    Raises:
        OptionError: A value out of bounds or choices; :class:`OptionTypeError` for a wrong type.
        KeyError: ``name`` is declared nowhere (a bug of the caller).
    """
    arg = declared_options()[name]
    if minimum is not None:
        arg = replace(arg, minimum=minimum)
    if nullable is not None:
        arg = replace(arg, nullable=nullable)
    return _check_value(value, arg, label=label or name, where=where)


def metadata_from_json(text: str | None) -> dict[str, Any] | None:
    """``--metadata`` as given on a command line (a JSON object), or ``None`` when not given.

    Raises:
        OptionError: Not valid JSON, or not an object (the message quotes the text).
    """
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise OptionError(f"--metadata: not valid JSON ({error.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise OptionError(f"--metadata must be a JSON object, got {text!r}")
    return value


def read_option(values: Mapping[str, Any], name: str, *, where: str | None = None, prefix: str = "metadata.") -> Any:
    """The declared option ``name`` of ``values`` (its declared default when absent), checked;
    messages name it ``<prefix><name>`` (``metadata.ks``)."""
    value = values.get(name, declared_options()[name].default)
    return check_option(name, value, label=f"{prefix}{name}", where=where)


#: Every run option of the suite's tasks: the union of the declarations (``_options_yaml``). A
#: ``metadata`` key close to one of them is a typo (:func:`reject_near_misses`).
SUITE_OPTIONS = frozenset(declared_options())
