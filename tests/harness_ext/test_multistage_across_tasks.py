"""The earlier stages of every multi-stage task of a run go to the model in one call per stage.

On the deterministic hash model (``tests/fixtures/hash_lm.py``: every answer a function of its
request), the run of several generator-validator and causal tasks together must give the results
and samples that each task gives on its own, where its stages are its own calls (as before the
stages were batched across tasks), while the model sees one ``generate_until`` call for the first
stage of every task.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: Two-stage tasks whose first stage generates with different settings, and a causal one.
TASKS = (
    "logic_consistency_gv_arithmetic",
    "logic_consistency_gv_triviaqa",
    "logic_consistency_gv_harmful",
    "logic_consistency_causal_ranking",
)


def _hash_lm_class() -> Any:
    if "hash_lm" not in sys.modules:  # registers lc-test-hash once per process
        spec = importlib.util.spec_from_file_location("hash_lm", FIXTURES / "hash_lm.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["hash_lm"] = module
        spec.loader.exec_module(module)
    return sys.modules["hash_lm"].HashLM


@pytest.fixture(scope="module")
def counting_model() -> Any:
    class Counting(_hash_lm_class()):  # type: ignore[misc]
        """The hash model, recording each call's request type and size."""

        calls: list[tuple[str, int]]

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            self.calls.append(("generate_until", len(requests)))
            return list(super().generate_until(requests, disable_tqdm))

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            self.calls.append(("loglikelihood", len(requests)))
            return list(super().loglikelihood(requests, disable_tqdm))

    return Counting


def _run(model: Any, tasks: list[str]) -> dict[str, Any]:
    model.calls = []
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    return simple_evaluate(model=model, tasks=tasks, task_manager=manager, limit=3, log_samples=True)


def _samples(results: dict[str, Any], task: str) -> str:
    return json.dumps(results["samples"][task], sort_keys=True, default=repr)


def test_one_call_per_stage_across_tasks_gives_each_tasks_own_results_and_samples(
    counting_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES / "data"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = counting_model()
    together = _run(model, list(TASKS))
    calls_together = list(model.calls)
    first_calls_alone, calls_alone = [], 0
    for task in TASKS:
        alone = _run(model, [task])
        assert together["results"][task] == alone["results"][task], task
        assert _samples(together, task) == _samples(alone, task), task
        first_calls_alone.append(model.calls[0])
        calls_alone += len(model.calls)
    # alone, each task's first stage is its own generate_until call; together, one call holds them all
    assert all(kind == "generate_until" for kind, _ in first_calls_alone)
    assert calls_together[0] == ("generate_until", sum(size for _, size in first_calls_alone))
    assert len(calls_together) < calls_alone
