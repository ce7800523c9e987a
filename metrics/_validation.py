"""Input validation shared by the metric functions.

Every check raises :class:`ValueError` with a message that names the offending argument, so a
caller looking at a traceback knows which input to fix without reading this module.
"""

from __future__ import annotations

import operator
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

NanPolicy = Literal["raise", "omit"]


class UndefinedMetricError(ValueError):
    """A metric has no defined value for this input (e.g. nothing left to average over).

    Subclasses :class:`ValueError`, so ``except ValueError`` still catches it;
    :func:`~logic_consistency.metrics.pairwise_consistency` catches exactly this class to report
    such metrics as ``None`` under ``nan_policy="omit"`` while genuine input errors still raise.
    """


def check_nan_policy(nan_policy: object) -> None:
    """Raise unless ``nan_policy`` is one of scipy's two supported spellings."""
    if nan_policy not in get_args(NanPolicy):
        raise ValueError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")


def check_int(value: object, name: str, *, minimum: int) -> int:
    """Return ``value`` as a Python int, or raise if it is not an integer >= ``minimum``."""
    # bool is an int subclass, but True as a subset size or sample count is a caller bug.
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got a bool ({value!r})")
    try:
        as_int = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if as_int < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {as_int}")
    return as_int


def check_k(k: object, n_items: int, name: str = "k") -> int:
    """Validate a transitivity subset size: an integer with 3 <= k <= N (paper, eq. 1)."""
    k_int = check_int(k, name, minimum=3)
    if k_int > n_items:
        raise ValueError(
            f"{name} must be <= the number of items N = {n_items} (got {k_int}): a K-subset needs K distinct items"
        )
    return k_int


def _numeric_2d(values: ArrayLike, name: str, *, expected: str, layout: str) -> NDArray[Any]:
    """``values`` as an array, checking it is numeric (bool included) and 2-D; names ``name``."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be {expected}, got dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(f"{name} must be {layout}, got {array.ndim}-D shape {array.shape}")
    return array


def _numeric_square(values: ArrayLike, name: str, *, expected: str) -> NDArray[Any]:
    """As :func:`_numeric_2d`, and square (N x N)."""
    array = _numeric_2d(values, name, expected=expected, layout="a 2-D (N x N) array")
    if array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be square (N x N), got shape {array.shape}")
    return array


def _as_numeric_square(matrix: ArrayLike, name: str) -> NDArray[np.float64]:
    """Convert to a float copy, checking it is a numeric, 2-D, square array."""
    array = _numeric_square(matrix, name, expected="a real numeric array")
    return np.array(array, dtype=np.float64)  # copy: callers may overwrite the diagonal


def validate_prefs(prefs: ArrayLike, name: str, nan_policy: NanPolicy) -> NDArray[np.float64]:
    """Validate an N x N preference-probability matrix and return a float copy.

    The diagonal is ignored by every metric (the comparison is irreflexive, paper Appendix J),
    so it may hold anything; the returned copy has NaN there so that later arithmetic on it
    (e.g. calibration) cannot warn about ``inf - inf``.

    Raises:
        ValueError: not numeric / not 2-D / not square / fewer than 2 items; an off-diagonal NaN
            when ``nan_policy == "raise"``; an off-diagonal value outside [0, 1].
    """
    array = _as_numeric_square(prefs, name)
    n_items = array.shape[0]
    if n_items < 2:
        raise ValueError(f"{name} must compare at least 2 items, got shape {array.shape}")
    np.fill_diagonal(array, np.nan)
    off_diagonal = ~np.eye(n_items, dtype=bool)
    missing = np.isnan(array) & off_diagonal
    if nan_policy == "raise" and missing.any():
        i, j = np.argwhere(missing)[0]
        raise ValueError(
            f"{name} has {int(missing.sum())} NaN off-diagonal entries (missing judgements), "
            f"e.g. at ({i}, {j}); pass nan_policy='omit' to leave them out"
        )
    bad = off_diagonal & ~missing & ((array < 0.0) | (array > 1.0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] off the diagonal; found {array[i, j]!r} at ({i}, {j})"
        )
    return array


def validate_human_scores(human_scores: ArrayLike, n_items: int) -> NDArray[np.float64]:
    """Validate a 1-D vector of N finite human scores (higher = better)."""
    array = np.asarray(human_scores)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"human_scores must be a real numeric array, got dtype {array.dtype}")
    if array.ndim != 1:
        raise ValueError(f"human_scores must be 1-D, got {array.ndim}-D shape {array.shape}")
    if array.shape[0] != n_items:
        raise ValueError(
            f"human_scores must have one score per item: length {array.shape[0]} but prefs has N = {n_items} items"
        )
    array = array.astype(np.float64)
    if not np.isfinite(array).all():
        # nan_policy covers missing *model* judgements; a missing gold label is a data bug.
        raise ValueError("human_scores must be finite (found NaN or inf)")
    return array


def validate_wins(wins: ArrayLike, name: str = "wins") -> NDArray[np.bool_]:
    """Validate a directed relation graph given as an N x N boolean adjacency matrix.

    Accepts a bool array or a numeric array holding only 0 and 1. The diagonal must be False
    (an item cannot beat itself), and the graph must have at least one edge: with no judgement
    at all, every subset is trivially acyclic and s_tran would be a meaningless 1.

    Raises:
        ValueError: not 2-D / not square; values other than 0/1 (NaN included); True on the
            diagonal.
        UndefinedMetricError: the graph has no edge.
    """
    array = _numeric_square(wins, name, expected="a boolean array")
    if array.dtype.kind != "b":
        if np.isnan(array.astype(np.float64)).any():
            raise ValueError(
                f"{name} contains NaN; express a missing judgement by leaving both {name}[i, j] and {name}[j, i] False"
            )
        if not np.isin(array, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (only 0/1 or False/True values)")
        array = array.astype(bool)
    if np.diagonal(array).any():
        raise ValueError(f"{name} must have a False diagonal (an item cannot beat itself)")
    if not array.any():
        raise UndefinedMetricError(f"{name} has no edges (no judgement at all); transitivity is undefined")
    return array


def validate_samples(samples: ArrayLike, name: str = "samples") -> NDArray[np.float64]:
    """Validate sampled judgements: judgements x samples, 1.0 (option A), 0.0 (option B) or NaN.

    Raises:
        ValueError: not numeric / not 2-D / no sample per judgement; a value other than 0, 1, NaN.
    """
    array = _numeric_2d(samples, name, expected="a numeric array of 0/1/NaN", layout="2-D (judgements x samples)")
    if array.shape[1] < 1:
        raise ValueError(f"{name} must have at least one sample per judgement, got shape {array.shape}")
    values = array.astype(np.float64)
    parsed = ~np.isnan(values)
    if not np.isin(values[parsed], (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold only 1.0 (option A), 0.0 (option B) or NaN (unparseable)")
    return values
