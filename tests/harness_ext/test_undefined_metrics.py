"""A metric undefined (``None``) on some documents: aggregated by lm-eval over the others, with the same
scores and standard errors as a list without the ``None``, and without lm-eval's warning about metrics
scored on different numbers of documents; a metric left out of some documents still gets the warning. A
group of the suite's tasks aggregates only the metrics all of them report, without lm-eval's warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from lm_eval import evaluator_utils
from lm_eval.api.group import Group
from lm_eval.api.metrics import mean
from lm_eval.api.task import ConfigurableTask, Task
from lm_eval.config.group import AggMetricConfig

from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.undefined import over_defined_documents, over_every_member

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


# ----------------------------------------------------------------------------- groups (over_every_member)
GROUP_WARNING = "is missing in"


def _leaf(name: str, module: str) -> Task:
    """A leaf task whose class lives in ``module`` (the hook tells the suite's tasks by their class's module)."""
    leaf_class = type("Leaf", (ConfigurableTask,), {"__module__": module, "task_name": name})
    return object.__new__(leaf_class)


def _group(module: str) -> Group:
    group = Group(
        "g",
        aggregate_metric_list=[
            AggMetricConfig(metric, aggregation="mean", weight_by_size=False)
            for metric in ("gv_consistency", "gv_consistency_strict")
        ],
    )
    for name in ("a", "b", "c"):
        group.add(_leaf(name, module))
    return group


#: Three GV tasks' results: in "c" no generator answer parsed, so gv_consistency is undefined (left out).
RESULTS: dict[str, Any] = {
    name: {"alias": name, "sample_len": 3, **metrics}
    for name, metrics in {
        "a": {"gv_consistency,none": 1.0, "gv_consistency_stderr,none": 0.0, "gv_left_out,none": 0.0},
        "b": {"gv_consistency,none": 0.5, "gv_consistency_stderr,none": 0.25, "gv_left_out,none": 1 / 3},
        "c": {"gv_left_out,none": 1.0},
    }.items()
}
for _name, _strict in zip("abc", (1.0, 1 / 3, 0.0), strict=True):
    RESULTS[_name] |= {"gv_consistency_strict,none": _strict, "gv_consistency_strict_stderr,none": 0.1}


def test_a_suite_group_aggregates_only_what_every_task_reports(caplog: pytest.LogCaptureFixture) -> None:
    original = getattr(Group.aggregate, "__wrapped__", Group.aggregate)
    with caplog.at_level(logging.WARNING):
        got = over_every_member(original)(_group("logic_consistency.tasks.gv.fake"), RESULTS)
    assert GROUP_WARNING not in caplog.text
    assert "gv_consistency,none" not in got and "gv_consistency_stderr,none" not in got  # not a mean over a, b
    # the metric every task reports: lm-eval's own mean and standard error
    expected = original(_group("logic_consistency.tasks.gv.fake"), {n: RESULTS[n] for n in "abc"})
    assert got["gv_consistency_strict,none"] == expected["gv_consistency_strict,none"] == pytest.approx(4 / 9)
    assert got["gv_consistency_strict_stderr,none"] == expected["gv_consistency_strict_stderr,none"]
    assert RESULTS["c"]["gv_left_out,none"] == 1.0  # the task says so in its own count


def test_lm_evals_own_groups_are_aggregated_unchanged(caplog: pytest.LogCaptureFixture) -> None:
    original = getattr(Group.aggregate, "__wrapped__", Group.aggregate)
    with caplog.at_level(logging.WARNING):
        got = over_every_member(original)(_group("lm_eval.api.task"), RESULTS)
    assert "Group 'g': metric 'gv_consistency,none' is missing in 1/3 tasks" in caplog.text
    assert got["gv_consistency,none"] == pytest.approx(0.75)  # lm-eval's mean over the tasks that report it


def test_the_autoload_hook_wraps_lm_evals_group_aggregation() -> None:
    assert getattr(Group.aggregate, "_logic_consistency", False)
