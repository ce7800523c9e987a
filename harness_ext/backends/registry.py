"""Every backend the suite registers with lm-eval, collected from the declaration in its own module.

A backend declares itself (:class:`~logic_consistency.harness_ext.models.backend.Backend`: lm-eval
name, class, ``--model_args``, public arguments, private lm-eval names it reaches) in its own module.
The suite's own are the lines of :data:`BUILT_IN`; a backend outside the suite declares itself in its
own distribution's metadata, under the entry-point group :data:`ENTRY_POINT_GROUP`
(``lc-echo = my_package.echo:BACKEND``), as lm-eval's task plug-ins do under ``lm_eval.tasks``:
installing it adds it, with no edit to the suite. Everything that reads backends reads
:func:`backends`: the autoload hook registers each with lm-eval, ``logic-consistency options`` lists
its arguments, a run (``publish/run.py``) and a model list check them, the allowlist records what it
declares public. docs/backends.md, "Adding a backend".
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import Any

from logic_consistency.harness_ext.models.args import Declaration, parse_model_args, split_model_args, typo_of
from logic_consistency.harness_ext.models.backend import Backend

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "BackendError",
    "backend_args",
    "backends",
    "built_in",
    "check_model_args",
    "first_typo",
]

#: The suite's own backends: where each declares itself (``module:NAME``), one line each.
BUILT_IN = (
    "logic_consistency.harness_ext.chat.backend:LC_CHAT",
    "logic_consistency.harness_ext.prefix.backend:LC_HF",
    "logic_consistency.harness_ext.prefix.backend:LC_EMBEDDED",
)
#: The entry-point group a backend outside the suite declares itself under (its name: the lm-eval name).
ENTRY_POINT_GROUP = "logic-consistency.backends"


class BackendError(ValueError):
    """A backend's declaration cannot be used (not a ``Backend``, a name that differs or is taken)."""


def _declared(value: Any, where: str, name: str | None = None) -> Backend:
    if not isinstance(value, Backend):
        raise BackendError(
            f"{where}: is {type(value).__name__}, not a Backend declaration (harness_ext/models/backend.py)"
        )
    if name is not None and value.name != name:
        raise BackendError(f"{where}: the entry point is named {name!r}, its Backend {value.name!r}: name both alike")
    return value


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@functools.cache
def built_in() -> tuple[Backend, ...]:
    """The suite's own backends (:data:`BUILT_IN`), in order."""
    return tuple(_declared(_load(target), target) for target in BUILT_IN)


def _plugged_in() -> list[Backend]:
    from importlib.metadata import entry_points

    found = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {entry.name} = {entry.value} ({ENTRY_POINT_GROUP})"
        try:
            value = entry.load()
        except Exception as error:  # a broken plug-in is named, not a bare traceback from its import
            raise BackendError(f"{where}: cannot be loaded: {type(error).__name__}: {error}") from error
        found.append(_declared(value, where, entry.name))
    return found


@functools.cache
def backends() -> dict[str, Backend]:
    """Every backend, by lm-eval name: the suite's own, then those declared under :data:`ENTRY_POINT_GROUP`.

    Raises:
        BackendError: A declaration that is no :class:`Backend`, an entry point whose name is not its
            backend's, or a name declared twice.
    """
    found: dict[str, Backend] = {}
    for backend in (*built_in(), *_plugged_in()):
        if backend.name in found:
            raise BackendError(
                f"backend {backend.name!r} is declared twice ({backend.target}, {found[backend.name].target})"
            )
        found[backend.name] = backend
    return found


def backend_args(name: str) -> Declaration | None:
    """The ``--model_args`` declaration of backend ``name``; ``None`` for a backend the suite does not know."""
    backend = backends().get(name)
    return None if backend is None else backend.args


def check_model_args(model_name: str, model_args: str | Mapping[str, Any] | None) -> None:
    """Check one run's ``--model_args`` for a declared backend before anything runs.

    A backend that is not declared (``hf``, ``vllm``, ...) is left to lm-eval: nothing is checked.

    Raises:
        OptionError: An unknown, refused or mistyped argument, or a value out of bounds (the
            message names the backend, the argument and the closest known one).
    """
    backend = backends().get(model_name)
    if backend is None or not model_args:
        return
    backend.check(parse_model_args(model_args) if isinstance(model_args, str) else dict(model_args))


def first_typo(model_name: str, model_args: str) -> tuple[str, str] | None:
    """The first argument in ``model_args`` (text) that mistypes one a declared backend knows, with that one
    (``("max_token", "max_tokens")``); ``None`` when there is none or the backend is not declared."""
    declaration = backend_args(model_name)
    if declaration is None:
        return None
    for name, _ in split_model_args(model_args):
        near = [] if name in declaration.known else typo_of(name, declaration)
        if near:
            return name, near[0]
    return None
