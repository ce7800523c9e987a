"""The option orders a wrapped question is posed in (one variant each), and options that refer to others.

A variant is a permutation ``perm`` of the k options: ``perm[p]`` is the ORIGINAL index of the option
shown at displayed position p (``perms[q, v, p]`` of ``metrics/invariance.py``); variant 0 is always
the original order. ``cyclic``: the k rotations (OpenCompass CircularEval). ``permutations``: all k!
orders (refused beyond ``max_variants``). ``swap_gold``: the gold swapped with the option at each
position (PriDe's "moving the golden answer"; lm-eval SCORE). ``reverse``: original and reversed
(HELM). ``random``: ``max_variants`` seeded orders (the run's ``seed`` and the question's position).
``ids``: the original order under each label set (A/B/C/D, 1/2/3/4, a/b/c/d; Zheng et al. 2024, s. 3).

Options that refer to others ("All of the above", "Both A and B") change meaning when moved: a
question with one is excluded by default (and counted), or ``pin`` keeps them at their position and
permutes the others over the remaining positions, as HELM does for "none of the above".
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Sequence

__all__ = ["LABEL_SETS", "TRANSFORMS", "pinned", "question_orders", "referring_positions", "variant_orders"]

TRANSFORMS = ("cyclic", "permutations", "swap_gold", "reverse", "random", "ids")
#: The label sets of ``ids`` (the first is the base task's own letters).
LABEL_SETS: tuple[tuple[str, ...], ...] = (
    ("A", "B", "C", "D", "E", "F", "G", "H", "I", "J"),
    ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"),
    ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"),
)
#: An option that refers to other options: "all/none/both/neither of the above|these|the options",
#: "A and B", "A, B and C", "A and C only", "both (a) and (c)".
_REFERRING = re.compile(
    r"\b(all|none|both|neither|each|any) of (the )?(above|below|these|those|options|answers|choices|the above)\b"
    r"|^\s*(both |only )?\(?[A-Ja-j1-9]\)?(\s*,\s*\(?[A-Ja-j1-9]\)?)*\s*(and|or|&)\s*\(?[A-Ja-j1-9]\)?(\s+only)?\s*\.?\s*$"
    r"|\b(options?|choices?|answers?) \(?[A-J1-9]\)? (and|or) \(?[A-J1-9]\)?\b",
    re.IGNORECASE,
)


def referring_positions(options: Sequence[str]) -> list[int]:
    """The positions of the options that refer to other options (see the module docstring)."""
    return [i for i, text in enumerate(options) if _REFERRING.search(str(text))]


def _rotations(k: int) -> list[tuple[int, ...]]:
    return [tuple((p + s) % k for p in range(k)) for s in range(k)]


def _swaps(k: int, gold: int) -> list[tuple[int, ...]]:
    orders = []
    for target in [gold, *(t for t in range(k) if t != gold)]:
        order = list(range(k))
        order[gold], order[target] = order[target], order[gold]
        orders.append(tuple(order))
    return orders


def _random(k: int, count: int, seed: int, question: int) -> list[tuple[int, ...]]:
    rng = random.Random(f"{seed}:{question}")  # a string seed is hashed deterministically (sha512)
    orders = [tuple(range(k))]
    wanted = min(count, math.factorial(k))
    while len(orders) < wanted:
        order = list(range(k))
        rng.shuffle(order)
        if tuple(order) not in orders:
            orders.append(tuple(order))
    return orders


def variant_orders(
    transform: str, k: int, *, gold: int, max_variants: int, seed: int, question: int
) -> list[tuple[int, ...]]:
    """The option orders of one question under ``transform`` (variant 0: the original order).

    Raises:
        ValueError: ``permutations`` of more than ``max_variants`` orders (k! named), an unknown transform.
    """
    if transform == "cyclic":
        return _rotations(k)
    if transform == "permutations":
        if math.factorial(k) > max_variants:
            raise ValueError(
                f"transform 'permutations' of {k} options is {math.factorial(k):,} variants, over max_variants="
                f"{max_variants}; raise max_variants or use transform 'random' (seeded orders) or 'cyclic'"
            )
        return list(itertools.permutations(range(k)))
    if transform == "swap_gold":
        return _swaps(k, gold)
    if transform == "reverse":
        return [tuple(range(k)), tuple(reversed(range(k)))]
    if transform == "random":
        return _random(k, max_variants, seed, question)
    if transform == "ids":
        return [tuple(range(k))] * len(LABEL_SETS)
    raise ValueError(f"unknown transform {transform!r}; one of {list(TRANSFORMS)}")


def pinned(orders: Sequence[tuple[int, ...]], fixed: Sequence[int], k: int) -> list[tuple[int, ...]]:
    """``orders`` of the ``k - len(fixed)`` movable options, spread over the positions not in ``fixed``
    (each fixed option stays at its own position); duplicates dropped, the original order first.

    ``orders`` are orders of the movable options' ranks 0..m-1 (m = the number of movable options).
    """
    movable = [p for p in range(k) if p not in fixed]
    out: list[tuple[int, ...]] = []
    for order in orders:
        full = list(range(k))
        for slot, rank in zip(movable, order, strict=True):
            full[slot] = movable[rank]
        if tuple(full) not in out:
            out.append(tuple(full))
    return out


def question_orders(
    transform: str, options: Sequence[str], gold: int, *, referring: str, max_variants: int, seed: int, question: int
) -> list[tuple[int, ...]]:
    """The orders of one question: :func:`variant_orders`, with its referring options pinned when
    ``referring`` is ``pin`` (under ``exclude`` such a question is never posed)."""
    k = len(options)
    fixed = referring_positions(options) if referring == "pin" else []
    movable = [p for p in range(k) if p not in fixed]
    orders = variant_orders(
        transform,
        len(movable),
        gold=movable.index(gold) if gold in movable else 0,
        max_variants=max_variants,
        seed=seed,
        question=question,
    )
    return pinned(orders, fixed, k) if fixed else orders
