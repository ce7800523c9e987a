"""The suite's seed, declared with the loaders that first read it (this package's ``_options_yaml``).

Item subsets and shuffles, GV's randomisation r and subsets and the causal display order all draw
from it; its default and its check come from that one declaration.
"""

from __future__ import annotations

from typing import Any

from logic_consistency.options import check_option, declared_options

__all__ = ["DEFAULT_SEED", "check_seed"]

#: The default seed of every seeded choice (the declaration's ``default``).
DEFAULT_SEED: int = declared_options()["seed"].default


def check_seed(value: Any, *, name: str = "seed", where: str | None = None) -> int:
    """A seed: a non-negative integer (what ``numpy.random.default_rng`` accepts), checked by its declaration."""
    seed: int = check_option("seed", value, label=name, where=where)
    return seed
