"""The suite's one option vocabulary, its one validator, and the one reader of the declarations.

Every name a user sets is declared once, as a :class:`Declared`: run options and command-line flags
as data in a package's ``_options_yaml`` (:func:`declared_options`, :func:`declared_flags`), backend
arguments in each backend's declaration (``harness_ext/models/backend.py``, collected by
``harness_ext/backends/registry.py``). Each has one :class:`Constraint` (:class:`Interval`,
:class:`Choices` or :class:`OfType`, as scikit-learn's ``Interval`` and ``StrOptions``), and
:func:`check_value` checks every value against it. Types are strict: ``"5"``, ``5.0`` and ``True``
are not integers, an int is a number, a number is finite, ``None`` passes only a ``nullable``
declaration. Text (a command line, ``key=value``) is typed once at that boundary (:func:`parse_text`,
argparse, lm-eval's ``--model_args`` parser). A bad value raises :class:`OptionError` (a
``ValueError``; :class:`OptionTypeError` also a ``TypeError``) naming its source, the name and what
was expected; an unknown key names the closest known one. This module imports nothing of the suite:
every layer but ``metrics`` (checked by ``metrics/_validation.py``) may use it.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import jsonschema
import yaml

__all__ = [
    "APPLIES", "OPTIONS_FILE", "SUITE_OPTIONS", "TYPO_CUTOFF", "Choices", "Constraint", "Declared", "Interval",
    "OfType", "OptionError", "OptionTypeError", "check_flag",
    "check_option", "check_value", "closest", "collect_options", "declared_flags", "declared_options",
    "load_option_file", "metadata_from_json", "parse_text", "read_option", "reject_near_misses", "reject_unknown",
    "compact_name", "unique_keys",
]  # fmt: skip

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


def compact_name(key: str) -> str:
    """``key`` without case and separators: ``Max-Items`` and ``max_items`` name one option."""
    return "".join(char for char in key.lower() if char.isalnum())


def closest(key: str, known: Iterable[str]) -> str | None:
    """The known key ``key`` differs from only in case or separators, else the closest one (a likely typo), or ``None``."""
    known = list(known)
    same = [name for name in known if compact_name(name) == compact_name(key)]
    matches = same or difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def unique_keys(pairs: Iterable[tuple[str, Any]], *, where: str | None = None) -> dict[str, Any]:
    """``pairs`` (a JSON object's, a ``k=v,...`` list's) as a dict; a key given twice is an :class:`OptionError`."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise OptionError(f"{_prefix(where)}key {key!r} given twice (which value was meant?)")
        out[key] = value
    return out


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
    """Raise :class:`OptionError` for a key that is not an option but a near miss of one (``seeds``).

    lm-eval 0.4.13 merges ``--model_args`` and every family's ``--metadata`` into every task's
    ``metadata``, so an unknown key passes (``pretrained``, other families' options), but one within
    :data:`TYPO_CUTOFF` of a known option or of any suite option (:data:`SUITE_OPTIONS`) is a typo.
    """
    names = sorted(set(known) | SUITE_OPTIONS)
    for key in keys:
        if not isinstance(key, str) or key in known or key in SUITE_OPTIONS:
            continue
        same = [name for name in names if compact_name(name) == compact_name(key)]  # case or separators only: Max-Items
        near = same or difflib.get_close_matches(key, names, n=1, cutoff=TYPO_CUTOFF)
        if near:
            raise OptionError(
                f"{_prefix(where)}unknown option {key!r}; did you mean {near[0]!r}? "
                f"(known options: {sorted(set(known))})"
            )


# ------------------------------------------------------------------------------- constraints
@dataclass(frozen=True)
class Interval:
    """Numbers within bounds (scikit-learn's ``Interval``): ``int`` takes integers only, ``float`` any
    finite int or float, ``list`` a non-empty list of integers, each within the bounds."""

    kind: type
    minimum: float | None = None
    maximum: float | None = None
    #: Numbers only: the bounds themselves are out (scikit-learn's ``closed="neither"``).
    exclusive: bool = False

    def describe(self) -> str:
        """``integer in [1, 256]``, ``number >= 0``, ``number in (0, 1)``, ``list of integers >= 3``."""
        noun = {int: "integer", float: "number", list: "list of integers"}[self.kind]
        low, high = (
            None if b is None else str(int(b)) if b == int(b) else f"{b:g}" for b in (self.minimum, self.maximum)
        )
        left, right, sign = ("(", ")", "") if self.exclusive else ("[", "]", "=")
        if low is not None and high is not None:
            return f"{noun} in {left}{low}, {high}{right}"
        return noun + (f" >{sign} {low}" if low is not None else f" <{sign} {high}" if high is not None else "")

    def check(self, value: Any, *, label: str, where: str | None) -> Any:
        """``value`` (a tuple for a list, a float for a number), or the suite's error naming ``label``."""
        if self.kind is int:
            return self._check_integer(value, label=_prefix(where) + label)
        if self.kind is list:
            return self._check_integers(value, label=_prefix(where) + label)
        return self._check_number(value, label=_prefix(where) + label)

    def _check_number(self, value: Any, *, label: str) -> float:
        """A finite int or float (not a bool) within the bounds, as a float."""
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        interval = f"({low:g}, {high:g})" if self.exclusive else f"[{low:g}, {high:g}]"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise OptionTypeError(f"{label} must be a number in {interval}, got {value!r}")
        if not (low < value < high if self.exclusive else low <= value <= high):  # NaN fails too
            raise OptionError(f"{label} must be in {interval}, got {value!r}")
        if not math.isfinite(value):  # an unbounded side still takes no infinity
            raise OptionError(f"{label} must be a finite number, got {value!r}")
        return float(value)

    def _check_integer(self, value: Any, *, label: str) -> int:
        """An int (not a bool, not ``5.0``) within the bounds."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionTypeError(f"{label} must be an integer, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(f"{label} must be at least {int(self.minimum):,}, got {value:,}")
        if self.maximum is not None and value > self.maximum:
            raise OptionError(f"{label} must be at most {int(self.maximum):,}, got {value:,}")
        return value

    def _check_integers(self, value: Any, *, label: str) -> tuple[int, ...]:
        minimum = "" if self.minimum is None else f" >= {self.minimum:g}"
        if not isinstance(value, list | tuple):
            raise OptionTypeError(f"{label} must be a list of integers{minimum}, got {value!r}")
        inside = Interval(int, self.minimum, self.maximum)
        try:
            return tuple(inside.check(entry, label=label, where=None) for entry in value or [None])
        except OptionError:
            raise OptionError(f"{label} must be a non-empty list of integers{minimum}, got {list(value)!r}") from None


@dataclass(frozen=True)
class Choices:
    """One of a fixed set of values (scikit-learn's ``StrOptions``); a typo names the closest one."""

    values: tuple[Any, ...]

    def describe(self) -> str:
        """``one of a, b, c``."""
        return "one of " + ", ".join(map(str, self.values))

    def check(self, value: Any, *, label: str, where: str | None) -> Any:
        """``value``, or the suite's error naming ``label``."""
        if isinstance(value, bool) or value not in self.values:  # True == 1: a bool is never a choice
            suggestion = closest(value, [str(c) for c in self.values]) if isinstance(value, str) else None
            hint = f"; did you mean {suggestion!r}?" if suggestion else ""
            raise OptionError(f"{_prefix(where)}{label} must be one of {sorted(self.values)}, got {value!r}{hint}")
        return value


@dataclass(frozen=True)
class OfType:
    """Any value of one type: ``bool`` (``True``/``False`` only), ``str``, or ``Path`` (a non-empty string)."""

    kind: type

    def describe(self) -> str:
        """``boolean``, ``string`` or ``path``."""
        return {bool: "boolean", str: "string", Path: "path"}[self.kind]

    def check(self, value: Any, *, label: str, where: str | None) -> Any:
        """``value`` (a path as a string), or the suite's error naming ``label``."""
        if self.kind is bool:
            if not isinstance(value, bool):  # no truthy strings
                raise OptionTypeError(f"{_prefix(where)}{label} must be true or false, got {value!r}")
            return value
        if self.kind is Path and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or (self.kind is Path and not value.strip()):
            noun = "a string" if self.kind is str else "a non-empty path"
            raise OptionTypeError(f"{_prefix(where)}{label} must be {noun}, got {value!r}")
        return value


#: What a declaration constrains its values to (:attr:`Declared.constraint`).
Constraint = Interval | Choices | OfType

#: Where a declared name applies (``logic-consistency options`` lists them by it).
APPLIES = ("task option", "backend argument", "command-line flag")


@dataclass(frozen=True)
class Declared:
    """One declared name: type, bounds or choices, default, one-line meaning and where it applies."""

    name: str
    kind: type
    default: Any
    meaning: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[Any, ...] | None = None
    nullable: bool = False
    applies: str = "task option"
    exclusive: bool = False
    source: Path | None = None  # the _options_yaml that declares it (the folder whose code reads it)

    @property
    def constraint(self) -> Constraint:
        """The one constraint its values are checked against."""
        if self.choices is not None:
            return Choices(self.choices)
        if self.kind in (int, float, list):
            return Interval(self.kind, self.minimum, self.maximum, exclusive=self.exclusive)
        return OfType(self.kind)


def check_value(value: Any, arg: Declared, *, label: str | None = None, where: str | None = None) -> Any:
    """The one validator: ``value`` checked against ``arg``'s constraint, by the module's rule. Raises
    :class:`OptionError` (out of bounds or choices) or :class:`OptionTypeError` (a wrong type)."""
    if value is None and arg.nullable:
        return None
    return arg.constraint.check(value, label=label or arg.name, where=where)


def _is_true(text: str) -> bool:
    return text == "true"


def _integers(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


#: How text spells a value of each declared kind that is not text: the pattern the stripped,
#: lower-cased text must match in full, and what turns it into the value.
_SPELLED: Mapping[type, tuple[str, Callable[[str], Any]]] = MappingProxyType(
    {
        bool: (r"true|false", _is_true),
        int: (r"[+-]?\d+", int),
        float: (r"[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?", float),
        list: (r"[+-]?\d+(,[+-]?\d+)*", _integers),
    }
)


def parse_text(text: str, arg: Declared, *, label: str | None = None, where: str | None = None) -> Any:
    """``text`` typed by ``arg``'s type (``"5"`` -> 5, ``"false"`` -> False, ``"3,5"`` -> [3, 5], ``"null"``
    -> None where nullable), then :func:`check_value`; text that does not parse stays text, and is refused."""
    lowered, value = text.strip().lower(), cast(Any, text)
    spelled = _SPELLED.get(arg.kind)
    if arg.nullable and lowered in ("null", "none"):
        value = None
    elif spelled is not None and re.fullmatch(spelled[0], lowered):
        value = spelled[1](lowered)
    return check_value(value, arg, label=label, where=where)


# ------------------------------------------------------------------------------- task options
#: The file in which a package of the suite declares the run options its tasks and loaders read.
OPTIONS_FILE = "_options_yaml"

#: The ``type`` a ``_options_yaml`` names, as the :attr:`Declared.kind` it stands for (``integers``:
#: a non-empty list of integers, each within the bounds).
_TYPES: Mapping[str, type] = MappingProxyType(
    {"integer": int, "number": float, "boolean": bool, "string": str, "path": Path, "integers": list}
)

#: One option's declaration in a ``_options_yaml``.
_OPTION_SCHEMA: Mapping[str, Any] = {
    "type": "object", "required": ["type", "default", "meaning"], "additionalProperties": False,
    "properties": {
        "type": {"enum": list(_TYPES)}, "default": {}, "meaning": {"type": "string", "minLength": 1},
        "minimum": {"type": "number"}, "maximum": {"type": "number"}, "nullable": {"type": "boolean"},
        "exclusive": {"type": "boolean"},
        "choices": {"type": "array", "minItems": 2, "uniqueItems": True},
    },
    "not": {"anyOf": [{"required": ["choices", "minimum"]}, {"required": ["choices", "maximum"]}]},
    "if": {"required": ["exclusive"]}, "then": {"properties": {"type": {"const": "number"}}},
}  # fmt: skip


def load_option_file(path: Path) -> tuple[Declared, ...]:
    """The names ``path`` (a ``_options_yaml``) declares, in file order, each default checked; a malformed
    file is an :class:`OptionError` naming it and the option. Its key ``options`` (run options) and
    optional ``flags`` (command-line flags, a model list's settings) map names to ``type`` (:data:`_TYPES`),
    ``default``, one-line ``meaning`` and, as they apply, ``minimum``, ``maximum``, ``exclusive`` (a number's
    bounds are out), ``choices``, ``nullable``."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise OptionError(f"{path}: not valid YAML: {error}") from error
    sections = {"options": "task option", "flags": "command-line flag"}
    keys = set(document) if isinstance(document, dict) else set()
    if "options" not in keys or not keys <= set(sections) or not all(isinstance(v, dict) for v in document.values()):
        raise OptionError(f"{path}: expected one key 'options' mapping option names to their declarations")
    return tuple(
        _declaration(path, str(name), facts, applies)
        for section, applies in sections.items()
        for name, facts in (document.get(section) or {}).items()
    )


def _declaration(path: Path, name: str, facts: Any, applies: str) -> Declared:
    invalid = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(_OPTION_SCHEMA).iter_errors(facts))
    if invalid is not None:
        key = f", key {invalid.absolute_path[0]!r}" if invalid.absolute_path else ""
        raise OptionError(f"{path}: option {name!r}{key}: {invalid.message}")
    fields = {**facts, "kind": _TYPES[facts["type"]], "name": name, "applies": applies, "source": path}
    fields["choices"] = None if facts.get("choices") is None else tuple(facts["choices"])
    arg = Declared(**{key: value for key, value in fields.items() if key != "type"})
    try:  # a null default without nullable: none, each task sets the option
        if arg.default is not None:
            check_value(arg.default, arg)
    except OptionError as error:
        raise OptionError(f"{path}: option {name!r}: its default does not pass its declaration: {error}") from None
    return arg


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
def _declared() -> Mapping[str, Declared]:
    return collect_options(_option_files(Path(__file__).parent))


def declared_options() -> Mapping[str, Declared]:
    """Every run option (``metadata``) the suite's packages declare, by name; a malformed file or a name
    declared twice is an :class:`OptionError`."""
    return MappingProxyType({name: arg for name, arg in _declared().items() if arg.applies == "task option"})


def declared_flags() -> Mapping[str, Declared]:
    """Every command-line flag the suite's packages declare (a ``_options_yaml``'s ``flags``), by name."""
    return MappingProxyType({name: arg for name, arg in _declared().items() if arg.applies == "command-line flag"})


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


def check_option(
    name: str,
    value: Any,
    *,
    label: str | None = None,
    where: str | None = None,
    minimum: int | None = None,
    nullable: bool | None = None,
) -> Any:
    """``value`` of the declared run option ``name``, checked (:func:`check_value`); messages name it
    ``label`` (``metadata.ks``) from ``where`` (``task 't'``). ``minimum`` tightens the declared lower bound
    (a cap that must leave room for a subset size); ``nullable`` overrides whether ``None`` passes.
    A ``name`` declared nowhere is a ``KeyError`` (a bug of the caller)."""
    narrowed: dict[str, Any] = {k: v for k, v in (("minimum", minimum), ("nullable", nullable)) if v is not None}
    return check_value(value, replace(declared_options()[name], **narrowed), label=label or name, where=where)


def check_flag(name: str, value: Any, *, label: str | None = None, where: str | None = None) -> Any:
    """``value`` of the declared flag ``name`` (a ``_options_yaml``'s ``flags``); messages name it ``label``
    (default ``--name``, dashes for underscores). Raises as :func:`check_value`."""
    return check_value(value, declared_flags()[name], label=label or "--" + name.replace("_", "-"), where=where)


def metadata_from_json(text: str | None) -> dict[str, Any] | None:
    """``--metadata`` as given on a command line (a JSON object), or ``None``; else an :class:`OptionError`."""
    if text is None:
        return None
    try:
        value = json.loads(text, object_pairs_hook=lambda pairs: unique_keys(pairs, where="--metadata"))
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
