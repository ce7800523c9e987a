"""What a backend declares about itself, in its own module: :class:`Backend` (and :class:`LmEvalHook`).

A backend (an lm-eval model class) states, next to its code, its lm-eval model name, the class lm-eval
builds (``module:Class``, imported only when a run asks for it), its ``--model_args`` (a
:class:`~logic_consistency.harness_ext.models.args.Declaration` in the suite's one option vocabulary),
the model arguments a written file may record, and every private lm-eval name it reaches. The
registry (``harness_ext/backends/registry.py``) collects the declarations; the autoload hook registers
them with lm-eval, ``logic-consistency options`` lists their arguments, a model list checks them, the
allowlist records what they declare public and ``lm_eval_hooks.LM_EVAL_HOOKS`` holds their hooks, so
adding a backend edits none of those modules (docs/backends.md, "Adding a backend").

This module imports neither lm-eval nor torch: a declaration is read without loading its backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from logic_consistency.harness_ext.models.args import Declaration, check_declared

__all__ = ["Backend", "LmEvalHook"]


class LmEvalHook(NamedTuple):
    """One place where the suite reaches into lm-eval beyond its public API (``lm_eval_hooks.LM_EVAL_HOOKS``)."""

    #: The upstream object, ``module:qualified.name``.
    upstream: str
    #: ``wraps`` (patched at import, ``autoload._CALLBACKS``), ``overrides`` (a private method a subclass
    #: replaces), ``calls`` (a private function, module or format the suite depends on) or ``reads`` (a
    #: private attribute read or set).
    kind: str
    #: Where the suite does it (for a backend's ``overrides``: its class, ``room.module.Class``).
    by: str
    why: str
    #: The upstream change that would let the suite drop it.
    retire_when: str


@dataclass(frozen=True)
class Backend:
    """One lm-eval model the suite registers, as its own module declares it.

    Attributes:
        name: The lm-eval model name (``lm_eval --model NAME``, a model list's ``model:``).
        target: The class lm-eval builds, ``module:Class`` (imported on first use, as lm-eval's registry does).
        args: Its ``--model_args``; a mistyped or unknown one is an error naming the closest
            (``Declaration.where`` names the backend).
        public: The model arguments a written file (results, board, logs) may record; a URL or a path
            among them is recorded by the allowlist's rules; every other argument is left out, named.
        hooks: Every private lm-eval name the backend reaches (``overrides`` a private method, ``reads``
            a private attribute), pinned by ``tests/harness_ext/test_lm_eval_hooks.py``.
    """

    name: str
    target: str
    args: Declaration
    public: frozenset[str] = frozenset()
    hooks: tuple[LmEvalHook, ...] = ()

    def __post_init__(self) -> None:
        module, sep, attribute = self.target.partition(":")
        if not (module and sep and attribute):
            raise ValueError(f"backend {self.name!r}: target {self.target!r} is not 'module:Class'")

    @property
    def module(self) -> str:
        """The module of :attr:`target`."""
        return self.target.partition(":")[0]

    def check(self, model_args: Mapping[str, Any]) -> dict[str, Any]:
        """``model_args`` checked against :attr:`args` (the suite's one validator), declared ones converted.

        Raises:
            OptionError: An unknown, refused or mistyped argument (naming the closest known one), or a
                value out of bounds.
        """
        return check_declared(model_args, self.args)

    def defaults(self) -> dict[str, Any]:
        """Each declared argument's default, by name."""
        return {arg.name: arg.default for arg in self.args.declared}
