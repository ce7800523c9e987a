"""Input checks of the invariance metrics (array layout in :mod:`~logic_consistency.metrics.invariance`).

Each check raises :class:`ValueError` naming the argument, its expected shape and the first bad
entry, so a caller wiring a family's per-variant answers into the metrics sees what to fix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: The pick of an unparseable answer: counted, never mapped to an option.
UNPARSEABLE = -1


def _integer_array(values: ArrayLike, name: str, ndim: int, layout: str) -> NDArray[np.int64]:
    """``values`` as an int64 array of ``ndim`` dimensions; bools and floats are refused."""
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name} must be an integer array {layout}, got dtype {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D {layout}, got {array.ndim}-D shape {array.shape}")
    return array.astype(np.int64)


def _first_bad(mask: NDArray[np.bool_]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def check_picks(picks: ArrayLike, name: str = "picks", n_options: int | None = None) -> NDArray[np.int64]:
    """``picks`` (questions x variants): original option indices, or -1 for an unparseable answer."""
    array = _integer_array(picks, name, 2, "(questions x variants)")
    if array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must hold at least one question and one variant, got shape {array.shape}")
    bad = array < UNPARSEABLE
    if n_options is not None:
        bad |= array >= n_options
    if bad.any():
        where = _first_bad(bad)
        limit = f"0..{n_options - 1}" if n_options is not None else ">= 0"
        raise ValueError(
            f"{name} must hold option indices {limit} or -1 (unparseable); found {array[where]} at {where}"
        )
    return array


def check_gold(gold: ArrayLike, n_questions: int, n_options: int | None = None) -> NDArray[np.int64]:
    """``gold`` (questions,): the original index of each question's gold option."""
    array = _integer_array(gold, "gold", 1, "(one original option index per question)")
    if array.shape[0] != n_questions:
        raise ValueError(f"gold must have one entry per question: length {array.shape[0]}, expected {n_questions}")
    bad = array < 0 if n_options is None else (array < 0) | (array >= n_options)
    if bad.any():
        where = _first_bad(bad)
        raise ValueError(
            f"gold must hold option indices >= 0 (below the option count); found {array[where]} at {where}"
        )
    return array


def check_perms(perms: ArrayLike, shape: tuple[int, int]) -> NDArray[np.int64]:
    """``perms`` (questions x variants x k): each [q, v] row a permutation of range(k), k >= 2."""
    array = _integer_array(perms, "perms", 3, "(questions x variants x options)")
    if array.shape[:2] != shape:
        raise ValueError(f"perms must have shape (questions, variants, k) = {shape + ('k',)}, got {array.shape}")
    k = array.shape[2]
    if k < 2:
        raise ValueError(f"perms must show at least 2 options per variant, got k = {k}")
    not_perm = (np.sort(array, axis=2) != np.arange(k)).any(axis=2)
    if not_perm.any():
        q, v = _first_bad(not_perm)
        raise ValueError(f"perms[{q}, {v}] must be a permutation of 0..{k - 1}, got {array[q, v].tolist()}")
    return array


def check_scores(scores: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """``scores`` (questions x variants x k): log-scores of the displayed labels, NaN where missing."""
    array = np.asarray(scores)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"scores must be a real numeric array, got dtype {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"scores must have the shape of perms {shape}, got {array.shape}")
    values: NDArray[np.float64] = array.astype(np.float64)
    if np.isinf(values).any():
        where = _first_bad(np.isinf(values))
        raise ValueError(f"scores must be finite log-scores or NaN (missing); found {values[where]} at {where}")
    return values


def check_label_set(label_set: ArrayLike, n_variants: int) -> NDArray[np.int64]:
    """``label_set`` (variants,): an integer naming each variant's label set (A/B/C/D, 1/2/3/4, ...)."""
    array = _integer_array(label_set, "label_set", 1, "(one label-set id per variant)")
    if array.shape[0] != n_variants:
        raise ValueError(f"label_set must have one entry per variant: length {array.shape[0]}, expected {n_variants}")
    return array


def check_verdicts(verdicts: ArrayLike, name: str, ndim: int) -> NDArray[np.float64]:
    """Yes/No verdicts: 1.0 (Yes), 0.0 (No), NaN (unparseable or not asked)."""
    array = np.asarray(verdicts)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (1.0 Yes, 0.0 No, NaN unparseable), got dtype {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {array.ndim}-D shape {array.shape}")
    values: NDArray[np.float64] = array.astype(np.float64)
    parsed = ~np.isnan(values)
    if not np.isin(values[parsed], (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold only 1.0 (Yes), 0.0 (No) or NaN (unparseable)")
    return values


def check_same_shape(first: NDArray[Any], second: NDArray[Any], names: tuple[str, str]) -> None:
    """Raise unless two arrays have one shape."""
    if first.shape != second.shape:
        raise ValueError(f"{names[1]} must have the shape of {names[0]} {first.shape}, got {second.shape}")
