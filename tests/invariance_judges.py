"""Option orders and judges shared by the invariance metric tests (k = 4 unless told)."""

from __future__ import annotations

import numpy as np

K = 4
LETTERS = "ABCD"


def cyclic_perms(n_questions: int, k: int = K) -> np.ndarray:
    """CircularEval's rotations: variant v shows original option (p + v) % k at position p (variant 0 = original)."""
    return np.array([[np.roll(np.arange(k), -v) for v in range(k)]] * n_questions)


def swap_gold_perms(gold: np.ndarray, k: int = K) -> np.ndarray:
    """SCORE's / PriDe's swap_gold: variant j swaps the gold with the option at position j."""
    perms = np.tile(np.arange(k), (len(gold), k, 1))
    for q, g in enumerate(gold):
        for j in range(k):
            perms[q, j, j], perms[q, j, g] = g, j
    return perms


def content_at(perms: np.ndarray, displayed: np.ndarray) -> np.ndarray:
    """The original option shown at ``displayed[q, v]``."""
    q, v = np.indices(displayed.shape)
    return perms[q, v, displayed]
