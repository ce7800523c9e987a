"""A metric undefined (``None``) on some documents: aggregated by lm-eval over the others, with the same
scores and standard errors as a list without the ``None``, and without lm-eval's warning about metrics
scored on different numbers of documents; a metric left out of some documents still gets the warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from lm_eval import evaluator_utils
from lm_eval.api.metrics import mean

from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.undefined import over_defined_documents

#: The unpatched aggregation (the autoload hook wraps the module's attribute: this is what it wraps).
ORIGINAL = getattr(
    evaluator_utils._compute_task_aggregations, "__wrapped__", evaluator_utils._compute_task_aggregations
)
WARNING = "Metrics were not scored on the same number of documents"


class _Task:
    task_name = "t"

    @staticmethod
    def aggregation() -> dict[str, Any]:
        return {"tau_all": mean, "cgp": mean, "unparseable_generation": total}


def test_none_values_are_left_out_with_lm_evals_own_scores_and_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    tau, cgp, counts = [0.5, None, 1.0, -0.25, None], [1.0, None, 0.5, 0.0, None], [0.0, 1.0, 0.0, 0.0, 1.0]
    raw = {("tau_all", "none"): tau, ("cgp", "none"): cgp, ("unparseable_generation", "none"): counts}
    defined = {key: [value for value in values if value is not None] for key, values in raw.items()}
    with caplog.at_level(logging.WARNING):
        expected = ORIGINAL(_Task(), defined, 100000)  # lm-eval on the defined values: warns (3 vs 5)
        assert WARNING in caplog.text
        caplog.clear()
        got = over_defined_documents(ORIGINAL)(_Task(), raw, 100000)
    assert WARNING not in caplog.text
    assert got == expected and list(got[0]) == list(expected[0]) and got[1] == 5
    assert got[0]["tau_all,none"] == pytest.approx(0.4166666666666667) and got[0]["unparseable_generation,none"] == 2


def test_a_metric_defined_nowhere_is_left_out_and_an_omitted_one_keeps_the_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    nowhere = {("tau_all", "none"): [None, None], ("unparseable_generation", "none"): [1.0, 1.0]}
    aggregated, n = over_defined_documents(ORIGINAL)(_Task(), nowhere, 100000)
    assert "tau_all,none" not in aggregated and aggregated["unparseable_generation,none"] == 2 and n == 2
    omitted = {("tau_all", "none"): [0.5], ("unparseable_generation", "none"): [0.0, 1.0]}
    with caplog.at_level(logging.WARNING):
        assert over_defined_documents(ORIGINAL)(_Task(), omitted, 100000) == ORIGINAL(_Task(), omitted, 100000)
    assert caplog.text.count(WARNING) == 2  # left out instead of None: lm-eval's warning stays


def test_the_autoload_hook_wraps_lm_evals_aggregation() -> None:
    assert getattr(evaluator_utils._compute_task_aggregations, "_logic_consistency", False)
