"""The families an improve study's transfer table evaluates each row on (``--transfer``, beyond the
papers; the generic part is :mod:`logic_consistency.harness_ext.training.transfer`).

One task per family, its headline metrics as the leaderboard names them (each family's
``_metrics_yaml``): pairwise, the study's own pairwise task or CaTeRS (Liu et al. Table 1's H, s_tran(K),
s_comm, s_neg); GV, the study's own GV task or arithmetic (Li et al.'s GV-consistency, generator and
validator accuracy); causal, the prompted ranking on δ-CAUSAL (Cui et al.'s tau-all, CGP, IGC). The
study's own family keeps the study's task and task options; the others run with their defaults. A
neutral module: it names tasks, and imports no family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logic_consistency.harness_ext.training.recipe_api import TransferFamily

__all__ = ["DEFAULT_TASKS", "FAMILIES", "transfer_families"]

#: The transfer table's families, in column order.
FAMILIES = ("pairwise", "gv", "causal")
#: Each family's task when the study is of another family.
DEFAULT_TASKS = {
    "pairwise": "logic_consistency_caters",
    "gv": "logic_consistency_gv_arithmetic",
    "causal": "logic_consistency_causal_ranking",
}


def _columns(family: str, metadata: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if family == "pairwise":
        k = max(metadata.get("ks") or (5,))  # the largest K asked (the pairwise tasks' default ks ends in 5)
        return (("H", "human_agreement"), (f"s_tran({k})", f"s_tran_{k}"), ("s_comm", "s_comm"), ("s_neg", "s_neg"))
    if family == "gv":
        return (("GV", "gv_consistency"), ("gen acc", "generator_accuracy"), ("val acc", "validator_accuracy"))
    return (("tau-all", "tau_all"), ("CGP", "cgp"), ("IGC", "igc"))


def transfer_families(study_family: str, study_task: str, metadata: Mapping[str, Any]) -> list[TransferFamily]:
    """Every family of :data:`FAMILIES`, the study's own (``study_family``) with its task and options.

    Raises:
        ValueError: ``study_family`` is not one of :data:`FAMILIES`.
    """
    if study_family not in FAMILIES:
        raise ValueError(f"transfer: unknown study family {study_family!r}; families: {list(FAMILIES)}")
    out = []
    for family in FAMILIES:
        own = family == study_family
        options = dict(metadata) if own else {}
        out.append(
            TransferFamily(family, study_task if own else DEFAULT_TASKS[family], _columns(family, options), options)
        )
    return out
