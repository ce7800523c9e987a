"""Hugging Face ``evaluate`` module: pairwise-judge consistency (Liu et al., "Aligning with Logic").

Load it with ``evaluate.load(logic_consistency.metrics.hf_evaluate.module_path("pairwise_consistency"))``.
One prediction is one instance's preference matrix ``prefs[i][j]`` = P(item i better than item j,
i shown first) (NaN = a missing judgement); its reference is the instance's human scores (higher =
better). ``compute`` returns the mean over instances of each metric of
:func:`logic_consistency.metrics.pairwise_consistency`; a metric undefined for an instance is left out
of that mean (and ``n_<metric>`` says over how many instances it is taken).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate
import numpy as np

from logic_consistency.metrics import pairwise_consistency
from logic_consistency.metrics.hf_evaluate._info import metric_info

_CITATION = """\
@article{liu2024aligning,
  title={Aligning with Logic: Measuring, Evaluating and Improving Logical Preference Consistency in Large Language Models},
  author={Liu, Yinhong and Guo, Zhijiang and Liang, Tianya and Shareghi, Ehsan and Vuli{\\'c}, Ivan and Collier, Nigel},
  year={2024}
}
"""

_KWARGS = """
Args:
    predictions: per instance, an N x N preference matrix (list of lists of floats, NaN = missing).
    references: per instance, N human scores (higher = better).
    neg_predictions: optional, per instance, the matrix of the negated question (for s_neg).
    ks: transitivity subset sizes K (default [3, 5]); a K larger than an instance is left out for it.
    calibrated: PairS calibration (default False).
    samples: null for exact s_tran(K), or the paper's estimator over this many random K-subsets.
    seed: seed of that estimator.
Returns:
    {metric: mean over instances, ..., "n_<metric>": instances it is defined on}
"""


class PairwiseConsistency(evaluate.Metric):  # type: ignore[misc]  # evaluate ships no type information
    """s_tran(K), s_comm, s_neg and human agreement, averaged over instances."""

    def _info(self) -> evaluate.MetricInfo:
        matrix = datasets.Sequence(datasets.Sequence(datasets.Value("float64")))
        return metric_info(
            __doc__,
            _CITATION,
            _KWARGS,
            {"predictions": matrix, "references": datasets.Sequence(datasets.Value("float64"))},
        )

    def _compute(
        self,
        predictions: Sequence[Sequence[Sequence[float]]],
        references: Sequence[Sequence[float]],
        neg_predictions: Sequence[Sequence[Sequence[float]]] | None = None,
        ks: Sequence[int] = (3, 5),
        calibrated: bool = False,
        samples: int | None = None,
        seed: int = 0,
    ) -> dict[str, Any]:
        if neg_predictions is not None and len(neg_predictions) != len(predictions):
            raise ValueError(
                f"neg_predictions must hold one matrix per prediction ({len(predictions)}), got {len(neg_predictions)}"
            )
        values: dict[str, list[float]] = {}
        for index, (prefs, human) in enumerate(zip(predictions, references, strict=True)):
            negated = None if neg_predictions is None else neg_predictions[index]
            scores = _defined_scores(prefs, negated, human, ks, calibrated=calibrated, samples=samples, seed=seed)
            for name, value in scores.items():
                values.setdefault(name, []).append(value)
        out: dict[str, Any] = {name: float(np.mean(found)) for name, found in values.items()}
        out.update({f"n_{name}": len(found) for name, found in values.items()})
        return out


def _defined_scores(
    prefs: Sequence[Sequence[float]],
    negated: Sequence[Sequence[float]] | None,
    human: Sequence[float],
    ks: Sequence[int],
    *,
    calibrated: bool,
    samples: int | None,
    seed: int,
) -> dict[str, float]:
    """The metrics of one instance that are defined for it (``nan_policy="omit"``), K larger than it left out."""
    matrix = np.asarray(prefs, dtype=float)
    scores = pairwise_consistency(
        matrix,
        None if negated is None else np.asarray(negated, dtype=float),
        np.asarray(human, dtype=float),
        ks=tuple(k for k in ks if k <= matrix.shape[0]),
        calibrated=calibrated,
        samples=samples,
        seed=seed,
        nan_policy="omit",
    )
    return {name: float(value) for name, value in scores.items() if name != "n_items" and value is not None}
