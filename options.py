"""The suite's one way to validate options, and the one place for shared defaults.

Every task family (pairwise options, dataset loaders, causal options) and the leaderboard's model
list check their options with these functions, so a bad value gives the same kind of error
everywhere: an :class:`OptionError` (a ``ValueError``) whose message names where the option came
from (``task 'logic_consistency_caters'``, a file), the key, and what was expected; an unknown key
names the closest known one (:func:`difflib.get_close_matches`). A value of the wrong type raises
:class:`OptionTypeError`, which is both an ``OptionError`` and a ``TypeError``.

Like :mod:`logic_consistency.common`, this module imports nothing of the suite: every layer but
``metrics`` (whose array arguments are checked by ``metrics/_validation.py``) may use it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULT_SEED",
    "LIMITS",
    "PAIRWISE_OPTIONS",
    "SUITE_OPTIONS",
    "TYPO_CUTOFF",
    "OptionError",
    "OptionTypeError",
    "Declaration",
    "Declared",
    "check_bool",
    "check_choice",
    "check_declared",
    "check_int",
    "check_seed",
    "closest",
    "reject_near_misses",
    "reject_unknown",
]

#: The default seed of every seeded choice (item subsets, GV randomisation r, causal display order).
DEFAULT_SEED = 1234

#: The run options of the pairwise task class (``samples``: the self-agreement variant); the
#: pairwise tasks read these and the PairS search keys (tasks/pairwise/options.py METADATA_KEYS).
#: Listed here, not there, because this neutral module must know every option name (a family
#: may not be imported from here).
PAIRWISE_OPTIONS = ("ks", "max_items", "transitivity_samples", "seed", "calibrated", "pairs_runs", "samples")

#: Every run option of the suite's tasks (README's options table): the pairwise options, and the
#: parameters of the GV, causal and pairwise dataset loaders. ``tests/test_options.py`` checks that
#: this is the union of what the families read.
SUITE_OPTIONS = frozenset(
    {
        *PAIRWISE_OPTIONS,
        "pairs_method",
        "pairs_beam_size",
        "pairs_prob_gap",  # PairS search (tasks/pairwise/pairs_search.py)
        # pairwise loaders: SummEval, CaTeRS
        "aspect",
        "min_events",
        "count_events",
        "order",
        # GV loaders
        "n_docs",
        "operations",
        "max_digits",
        "negation",
        "style_split",
        # causal loaders
        "split",
        "one_per_pair",
        "conjunction",
    }
)

#: Upper bounds of the size options (the error names option and bound). Each is far above what
#: the papers use (PairS 100 runs, self-agreement k = 10, GV 200 documents) and keeps one run
#: within hours on a laptop: PairS replays cost about 0.2 ms a run per instance, GV documents are
#: generated in memory before ``--limit`` applies, and every self-agreement sample is a model call.
LIMITS = {
    "pairs_runs": 10_000,
    "samples": 100,
    "transitivity_samples": 1_000_000,
    "n_docs": 100_000,
}

#: A ``metadata`` key this close (:class:`difflib.SequenceMatcher` ratio) to an option name is a typo
#: of it. 0.85 catches one dropped, added or changed character in names of 4+ letters (``n_doc``,
#: ``max_digit``, ``seeds``, ``calibrate``) and no model argument of lm-eval's backends (the nearest,
#: ``max_images`` vs ``max_items``, is 0.74).
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

    The message reads ``<where>: unknown option 'n_doc'; did you mean 'n_docs'? (options: [...])``.
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


#: An argument name made of one of these words is a credential (``api_key``, ``auth_token``, ``password``).
CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:api_?key|key|token|secret|password|passwd|credentials?|auth|bearer)(?:_|$)", re.I
)


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


@dataclass(frozen=True)
class Declaration:
    """The arguments one component takes, as data for :func:`check_declared`.

    Attributes:
        where: How errors name the source (``"lc-chat --model_args"``).
        declared: Arguments checked (type, bounds, choices) and converted.
        passed: Other accepted names, passed on unchecked (a parent class checks them).
        refused: Names refused outright, each with the reason and what to do instead.
        unknown: ``"refuse"``: any other name is an error; ``"near_miss"``: only a name close to a
            known one is (:data:`TYPO_CUTOFF`), others pass on (to a library that takes any keyword).
        credentials: Where a credential belongs; any other credential-like name is refused with it.
    """

    where: str
    declared: tuple[Declared, ...]
    passed: frozenset[str] = frozenset()
    refused: Mapping[str, str] = field(default_factory=dict)
    unknown: Literal["refuse", "near_miss"] = "refuse"
    credentials: str | None = None

    @property
    def known(self) -> list[str]:
        """Every accepted name, sorted."""
        return sorted({arg.name for arg in self.declared} | self.passed)


def _converted(value: Any, arg: Declared, where: str) -> Any:
    """``value`` as ``arg.kind`` (strings too: a Python caller may pass ``"5"`` or ``"false"``)."""
    if arg.kind is bool and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if arg.kind is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if arg.kind is float and isinstance(value, int | str) and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            pass
    if isinstance(value, arg.kind) and not (arg.kind is not bool and isinstance(value, bool)):
        return value
    expected = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[arg.kind]
    raise OptionTypeError(f"{_prefix(where)}{arg.name} must be {expected}, got {value!r} ({arg.meaning})")


def _checked(value: Any, arg: Declared, where: str) -> Any:
    value = _converted(value, arg, where)
    if arg.choices is not None:
        return check_choice(value, arg.choices, name=arg.name, where=where)
    if arg.minimum is not None and value < arg.minimum:
        raise OptionError(f"{_prefix(where)}{arg.name} must be at least {arg.minimum}, got {value} ({arg.meaning})")
    if arg.maximum is not None and value > arg.maximum:
        raise OptionError(f"{_prefix(where)}{arg.name} must be at most {arg.maximum}, got {value} ({arg.meaning})")
    return value


def _unknown(name: str, declaration: Declaration) -> None:
    """Raise for a name the declaration does not accept (``near_miss``: only a close one).

    A typo of a known name (``max_token``) is named as one before a credential-like name is refused.
    """
    where = declaration.where
    if name in declaration.refused:
        raise OptionError(f"{_prefix(where)}{name} is refused: {declaration.refused[name]}")
    typo = difflib.get_close_matches(name, declaration.known, n=1, cutoff=TYPO_CUTOFF)
    if not typo and declaration.credentials and CREDENTIAL_NAME.search(name):
        raise OptionError(
            f"{_prefix(where)}{name} is refused: a credential is never an argument; {declaration.credentials}"
        )
    near = typo or (difflib.get_close_matches(name, declaration.known, n=1) if declaration.unknown == "refuse" else [])
    if near:
        raise OptionError(f"{_prefix(where)}unknown argument {name!r}; did you mean {near[0]!r}?")
    if declaration.unknown == "refuse":
        raise OptionError(f"{_prefix(where)}unknown argument {name!r}; known: {declaration.known}")


def check_declared(values: Mapping[str, Any], declaration: Declaration) -> dict[str, Any]:
    """Check ``values`` against ``declaration``; return them with the declared ones converted.

    Raises:
        OptionError: A refused or unknown name (naming the closest known one), or a value out of
            bounds or choices; :class:`OptionTypeError` for a value of the wrong type.
    """
    declared = {arg.name: arg for arg in declaration.declared}
    out = dict(values)
    for name, value in values.items():
        if name in declared:
            out[name] = _checked(value, declared[name], declaration.where)
        elif name in declaration.refused or name not in declaration.passed:
            _unknown(name, declaration)
    return out
