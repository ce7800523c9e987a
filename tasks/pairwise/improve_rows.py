"""The rows and layouts of ``improve repair`` beyond Table 3 (Liu et al., Appendices L, M and N).

* Table 7 (``--method``): one REPAIR-ed row (and its + Neg. row) per rank estimation method the paper
  compares, win-loss rate (W-L, the paper's default), Elo (ELO) and Bradley-Terry (B-T); the estimators
  are :mod:`logic_consistency.metrics.ranking`'s. With win-loss alone the rows keep Table 3's folders
  (``repaired``, ``repaired_neg``), so that earlier study folders resume.
* Table 6 (``--downsample-to perturbed``): every REPAIR-ed row's training examples are a seeded random
  subset (:func:`downsample`) of the size of the perturbed row's, "an equivalent amount of REPAIR-ed data
  as the perturbed dataset" (Appendix M). The paper does not say whether the + Neg. row is matched in
  records or in comparisons; the suite matches each row's records (its training examples), so every
  trained row sees as many examples as the perturbed one.
* Table 5 (``--pairs``): every row is also evaluated with PairS (the task's ``_pairs`` variant), raw and
  calibrated, the paper's two PairS columns (mean Spearman over ``pairs_runs`` runs, 100 by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

__all__ = ["METHOD_LABELS", "WIN_LOSS", "RowSpec", "downsample", "layout_names", "row_specs"]

#: The paper's default rank estimation method (section 4.1).
WIN_LOSS = "win_loss"
#: ``--method`` value -> Table 7's row name for it.
METHOD_LABELS = {"win_loss": "W-L", "elo": "ELO", "bt": "B-T"}
#: ``--method`` value -> the estimator's name in :mod:`logic_consistency.metrics.ranking`.
ESTIMATORS = {"win_loss": "win_loss", "elo": "elo", "bt": "bradley_terry"}
#: The base rows of Table 3 (the ``--rows`` vocabulary): (name, label).
BASE_ROWS = (
    ("zero_shot", "Zero-shot"),
    ("perturbed", "Perturbed"),
    ("repaired", "REPAIR-ed"),
    ("repaired_neg", "REPAIR-ed + Neg."),
)

T = TypeVar("T")


@dataclass(frozen=True)
class RowSpec:
    """One row of the study: its folder ``name``, its ``label``, its Table 3 ``kind`` (a base row's name)
    and, for a REPAIR-ed row, its rank estimation ``method``."""

    name: str
    label: str
    kind: str
    method: str | None = None


def row_specs(methods: Sequence[str], rows: Sequence[str], *, sampled: bool) -> list[RowSpec]:
    """The study's rows in table order: zero-shot, perturbed, then per method its REPAIR-ed and + Neg. rows
    (each only where ``rows`` names its kind). ``methods`` are checked where they are declared
    (:class:`.improve_options.RepairStudyOptions`).
    """
    specs = [RowSpec(name, label, name) for name, label in BASE_ROWS[:2] if name in rows]
    plain = tuple(methods) == (WIN_LOSS,)
    suffix = " (sampled)" if sampled else ""
    for method in methods:
        for kind, label in BASE_ROWS[2:]:
            if kind not in rows:
                continue
            name = kind if method == WIN_LOSS else f"{kind}_{method}"
            shown = label if plain else label.replace("REPAIR-ed", f"REPAIR-ed {METHOD_LABELS[method]}")
            specs.append(RowSpec(name, shown + suffix, kind, method))
    return specs


def downsample(examples: Sequence[T], size: int, *, seed: int) -> tuple[list[T], dict[str, Any]]:
    """A seeded random subset of ``size`` of ``examples`` in their order (all of them when there are no
    more than ``size``), and what was done (``from``, ``to``, ``seed``) for the row's record.

    The subset is ``numpy.random.default_rng(seed).choice(len, size, replace=False)``, sorted.
    """
    if size < 0:
        raise ValueError(f"downsample size must be >= 0, got {size}")
    if len(examples) <= size:
        return list(examples), {"from": len(examples), "to": len(examples), "seed": seed}
    chosen = sorted(np.random.default_rng(seed).choice(len(examples), size=size, replace=False).tolist())
    return [examples[i] for i in chosen], {"from": len(examples), "to": size, "seed": seed}


def layout_names(*, methods: Sequence[str], downsampled: bool, pairs: bool, train_data: str) -> list[str]:
    """The paper's tables the study's layout is (``Table 3``; ``Table 5`` with PairS or MS MARCO data,
    ``Table 6`` when down-sampled, ``Table 7`` with several methods)."""
    names = ["Table 3"]
    if pairs or train_data.startswith("msmarco"):
        names.append("Table 5")
    if downsampled:
        names.append("Table 6")
    if tuple(methods) != (WIN_LOSS,):
        names.append("Table 7")
    return names
