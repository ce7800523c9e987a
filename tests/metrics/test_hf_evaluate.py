"""The evaluate modules load from the installed package without network and agree with the metrics."""

from __future__ import annotations

import numpy as np
import pytest

from logic_consistency.metrics import causal_consistency, pairwise_consistency
from logic_consistency.metrics.hf_evaluate import MODULES, module_path

evaluate = pytest.importorskip("evaluate")


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
        monkeypatch.setenv(variable, "1")


def test_pairwise_module_averages_the_metric_over_instances() -> None:
    rng = np.random.default_rng(0)
    instances = [(rng.random((5, 5)), rng.random((5, 5)), rng.random(5)) for _ in range(3)]
    module = evaluate.load(module_path("pairwise_consistency"))
    result = module.compute(
        predictions=[p.tolist() for p, _, _ in instances],
        references=[h.tolist() for _, _, h in instances],
        neg_predictions=[n.tolist() for _, n, _ in instances],
        ks=[3, 5],
    )
    direct = [pairwise_consistency(p, n, h, ks=(3, 5), nan_policy="omit") for p, n, h in instances]
    for name in ("s_tran_3", "s_tran_5", "s_comm", "s_neg", "human_agreement"):
        assert result[name] == pytest.approx(np.mean([d[name] for d in direct])), name
        assert result[f"n_{name}"] == 3


def test_causal_module_averages_the_metric_over_instances() -> None:
    rankings = [[-5, -4, -3, -2, -1, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, -1, -2, -3, -4, -5]]
    module = evaluate.load(module_path("causal_consistency"))
    result = module.compute(predictions=rankings)
    direct = [causal_consistency(r) for r in rankings]
    assert result["n"] == 2
    for name in direct[0]:
        assert result[name] == pytest.approx(np.mean([d[name] for d in direct])), name


def test_unknown_module_name() -> None:
    assert set(MODULES) == {"pairwise_consistency", "causal_consistency"}
    with pytest.raises(ValueError, match="name must be one of"):
        module_path("pairwise")
