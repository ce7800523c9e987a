"""The suite's metrics as Hugging Face ``evaluate`` modules, loadable offline from the installed package.

``evaluate.load(module_path("pairwise_consistency"))`` (or ``"causal_consistency"``) needs no
network. The modules are thin wrappers: every number comes from
:func:`logic_consistency.metrics.pairwise_consistency` and
:func:`logic_consistency.metrics.causal_consistency`, averaged over instances as the lm-eval tasks
average them (an undefined metric is left out, never counted as 0 or 1). This package imports
nothing itself (not even ``evaluate``), so ``logic_consistency.metrics`` stays light.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODULES", "module_path"]

#: The evaluate modules shipped here: name -> script file.
MODULES = {
    "pairwise_consistency": "pairwise_consistency.py",
    "causal_consistency": "causal_consistency.py",
}


def module_path(name: str) -> str:
    """Path of the evaluate module script ``name``, for ``evaluate.load(path)``.

    Raises:
        ValueError: ``name`` is not one of :data:`MODULES`.
    """
    if name not in MODULES:
        raise ValueError(f"name must be one of {sorted(MODULES)}, got {name!r}")
    return str(Path(__file__).resolve().parent / MODULES[name])
