"""Hugging Face ``evaluate`` module: causal epistemic consistency (Cui et al., "Nuance Matters").

Load it with ``evaluate.load(logic_consistency.metrics.hf_evaluate.module_path("causal_consistency"))``.
One prediction is one instance's ranking: the ten intensity labels (-5..-1 defeaters, +1..+5
supporters) in the order the model ranked its own intermediates. ``compute`` returns the mean over
instances of each metric of :func:`logic_consistency.metrics.causal_consistency` (Kendall tau of
supporters, defeaters and all, CGP, IGC and the density IGC), and ``n`` instances.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate
import numpy as np

from logic_consistency.metrics import causal_consistency
from logic_consistency.metrics.hf_evaluate._info import metric_info

_CITATION = """\
@article{cui2024nuance,
  title={Nuance Matters: Probing Epistemic Consistency in Causal Reasoning},
  author={Cui, Shaobo and others},
  year={2024}
}
"""

_KWARGS = """
Args:
    predictions: per instance, the ten labels -5..-1, 1..5 in ranked order.
Returns:
    {"tau_supporters", "tau_defeaters", "tau_all", "cgp", "igc", "igc_density": mean over instances, "n": instances}
"""


class CausalConsistency(evaluate.Metric):  # type: ignore[misc]  # evaluate ships no type information
    """Causal epistemic consistency of self-ranked intermediates, averaged over instances."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(__doc__, _CITATION, _KWARGS, {"predictions": datasets.Sequence(datasets.Value("int64"))})

    def _compute(self, predictions: Sequence[Sequence[int]]) -> dict[str, Any]:
        if not predictions:
            raise ValueError("predictions must hold at least one ranking")
        scores = [causal_consistency(list(ranking)) for ranking in predictions]
        out: dict[str, Any] = {name: float(np.mean([score[name] for score in scores])) for name in scores[0]}
        out["n"] = len(scores)
        return out
