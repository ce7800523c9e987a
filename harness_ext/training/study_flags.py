"""A study's command line from its options dataclass (TRL's ``HfArgumentParser`` style).

A recipe's options dataclass is the one declaration of its ``improve <recipe>`` subcommand: each field
with a ``help`` (:func:`option`) is a flag (``--field-name``, or the ``flag`` given), its default the
field's, its ``--help`` line the ``help`` with the default shown; a field without is the program's
(``base_label``). Text is typed once at this boundary (the field's ``parse``, else its declaration in an
``_options_yaml`` through :func:`~logic_consistency.options.parse_text`, else its type), and each value
is checked once, where it is declared: the dataclass's ``__post_init__``, with ``options.py``'s
vocabulary. Each recipe has its own parser, so another recipe's option is refused, naming the recipe
it belongs to (:func:`refuse_flags`), never accepted and ignored.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from logic_consistency.options import OptionError, check_flag, declared_flags, parse_text

__all__ = ["add_options", "check_declared_fields", "flag_names", "option", "options_from_args", "refuse_flags"]

T = TypeVar("T")

#: How a flag's text becomes its field's value where neither ``parse`` nor a declaration says.
_TYPES: Mapping[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str, "Path": Path}


def option(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    flag: str | None = None,
    parse: Callable[[str], Any] | None = None,
    declared: str | None = None,
    switch: bool = False,
    group: str | None = None,
    metavar: str | None = None,
) -> Any:
    """A field that is also a flag.

    Args:
        default: The field's default (none: a required flag); a list or dict is copied per instance.
        help: The ``--help`` line.
        flag: The flag's name when it is not ``--field-name`` (``--no-chat-template``).
        parse: Text to value (``--metadata``'s JSON, a comma-separated list).
        declared: The name of the flag's declaration in an ``_options_yaml`` (its type, bounds and
            default), checked by :func:`check_declared_fields`.
        switch: A flag without a value; it sets the field to ``not default``.
        group: The ``--help`` section.
        metavar: What the usage line shows for the value.
    """
    metadata = {"help": help, "flag": flag, "parse": parse, "declared": declared, "switch": switch,
                "group": group, "metavar": metavar}  # fmt: skip
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _flags(options: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(options) if "help" in f.metadata]


def _flag(field: dataclasses.Field[Any]) -> str:
    return field.metadata["flag"] or "--" + field.name.replace("_", "-")


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def add_options(parser: argparse.ArgumentParser, options: type) -> None:
    """Add a flag to ``parser`` for each field of ``options`` that is one (:func:`option`)."""
    groups: dict[str | None, Any] = {None: parser}
    for field in _flags(options):
        meta = field.metadata
        where = groups.get(meta["group"]) or groups.setdefault(meta["group"], parser.add_argument_group(meta["group"]))
        default = _default(field)
        if meta["switch"]:
            where.add_argument(_flag(field), dest=field.name, action="store_true", help=meta["help"])
            continue
        required = default is dataclasses.MISSING
        shown = "" if required or default in (None, "", (), {}) else f" (default: {_shown(default)})"
        metavar = meta["metavar"] or _flag(field).lstrip("-").replace("-", "_").upper()
        where.add_argument(_flag(field), dest=field.name, required=required, default=None, metavar=metavar,
                           help=meta["help"] + shown)  # fmt: skip


def flag_names(options: type) -> list[str]:
    """The flags of ``options``' fields, in declaration order."""
    return [_flag(field) for field in _flags(options)]


class _Refused(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        parser.error(str(self.help_text))

    help_text = ""


def refuse_flags(parser: argparse.ArgumentParser, refused: Mapping[str, str]) -> None:
    """Make each flag of ``refused`` (flag -> why) a one-line error of ``parser`` naming why, not argparse's
    "unrecognized arguments" (another recipe's option: which recipe it is)."""
    for flag, why in refused.items():
        action = type("Refused", (_Refused,), {"help_text": f"{flag}: {why}"})
        parser.add_argument(flag, nargs="?", action=action, help=argparse.SUPPRESS)


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple | list) else str(value)


def _value(field: dataclasses.Field[Any], text: str) -> Any:
    meta = field.metadata
    if meta["declared"] is not None and meta["parse"] is None:
        return parse_text(text, declared_flags()[meta["declared"]], label=_flag(field))
    kind = str(field.type).split("|")[0].strip()
    try:
        return (meta["parse"] or _TYPES[kind])(text)
    except OptionError:
        raise
    except ValueError as error:  # int("x"): one line naming the flag
        raise OptionError(f"{_flag(field)}: {text!r} is not a valid value ({error})") from None


def options_from_args(options: Callable[..., T], args: argparse.Namespace, **given: Any) -> T:
    """An instance of ``options`` (a dataclass) from the parsed flags: each given text typed once, each
    absent flag its field's default; ``given`` sets the fields that are not flags."""
    values: dict[str, Any] = dict(given)
    for field in _flags(options):  # type: ignore[arg-type]
        raw = getattr(args, field.name, None)
        if field.metadata["switch"]:
            if raw:
                values[field.name] = not _default(field)
        elif raw is not None:
            values[field.name] = _value(field, raw)
    return options(**values)


def check_declared_fields(instance: Any) -> None:
    """Check each field of ``instance`` that names a declaration (its bounds, choices, type), once.

    Raises:
        OptionError: Naming the flag and what it must be.
    """
    for field in _flags(type(instance)):
        name = field.metadata["declared"]
        if name is not None:
            check_flag(name, getattr(instance, field.name), label=_flag(field))
