"""The suite's metrics as Hugging Face ``evaluate`` modules, loadable offline from the installed package.

```python
import evaluate
from logic_consistency.metrics.hf_evaluate import module_path

pairwise = evaluate.load(module_path("pairwise_consistency"))
pairwise.compute(predictions=[prefs], references=[human_scores], neg_predictions=[neg_prefs], ks=[3])
causal = evaluate.load(module_path("causal_consistency"))
causal.compute(predictions=[[-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]])
```

``evaluate.load`` of a local script needs no network. The modules are thin wrappers: every number
comes from :func:`logic_consistency.metrics.pairwise_consistency` and
:func:`logic_consistency.metrics.causal_consistency`, averaged over instances as the lm-eval tasks
average them (a metric undefined for an instance is left out of its mean, never counted as 0 or 1).
This package imports nothing itself (not even ``evaluate``), so ``logic_consistency.metrics`` stays
free of heavy imports.
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
