"""Li et al. App. H's validator measure: a fixed set per task of a right and a verified wrong answer,
judged through the task's own validator prompt and parser. A validator that always answers False (or
always A) scores exactly 50% there; on the model's own answers (the suite's earlier measure) the same
validator can score 100%. In-process: the tasks' stage hooks with scripted verdicts, no model."""

from __future__ import annotations

from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.gv import plan_arithmetic, triviaqa
from logic_consistency.tasks.gv.common import score_document
from logic_consistency.tasks.gv.validator_sets import APP_H_METRIC, APP_H_TASKS

METADATA = {"n_docs": 12}


def _manager() -> TaskManager:
    """The suite's tasks only (not lm-eval's 13,000 YAML files: the check needs none of them)."""
    return TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=METADATA)


@pytest.fixture(scope="module")
def tasks(fixture_data: None) -> dict[str, Any]:
    return _manager().load(list(APP_H_TASKS.values()))["tasks"]  # type: ignore[no-any-return]


def _always(task: Any, doc: dict[str, Any], answer: str) -> dict[str, float]:
    """Score ``doc`` as if the validator answered ``answer`` to every item."""
    (stage,) = task.stages
    prompts = stage.render(doc)
    outputs: dict[str, Any]
    if stage.output_type == "loglikelihood":
        outputs = {name: [0.0 if choice == answer else -1.0 for choice in stage.choices] for name in prompts}
    else:
        outputs = {name: f"(worked out) || {answer}" for name in prompts}
    doc = {**doc, "stages": {stage.name: {"parsed": stage.parse(doc, outputs)}}}
    return dict(task.score(doc))


@pytest.mark.parametrize("gv_task", sorted(APP_H_TASKS))
def test_a_constant_validator_scores_half_on_the_fixed_set(tasks: dict[str, Any], gv_task: str) -> None:
    task = tasks[APP_H_TASKS[gv_task]]
    docs = list(task.test_docs())
    answers = ("A", "B") if "triviaqa" in gv_task else ("True", "False")
    for answer in answers:
        scores = [_always(task, doc, answer) for doc in docs]
        assert all(s["unparseable_validator"] == 0 for s in scores)
        assert sum(s[APP_H_METRIC] for s in scores) / len(scores) == 0.5, answer


def test_the_wrong_answers_are_verified_wrong_and_seeded(tasks: dict[str, Any]) -> None:
    for gv_task in ("logic_consistency_gv_arithmetic", "logic_consistency_gv_arithmetic_cot"):
        for doc in tasks[APP_H_TASKS[gv_task]].test_docs():
            items = tasks[APP_H_TASKS[gv_task]].stages[0].render(doc)
            assert f"A: {doc['answer']}\n" in items["right"] and f"A: {doc['answer']}\n" not in items["wrong"]
    for doc in tasks[APP_H_TASKS["logic_consistency_gv_plan_arithmetic"]].test_docs():
        prompt = tasks[APP_H_TASKS["logic_consistency_gv_plan_arithmetic"]].stages[0].render(doc)["wrong"]
        lhs = prompt.split("\n")[1].split(" = ")[0]
        numbers = [int(n) for n in lhs.replace("+", "*").split("*")]
        assert plan_arithmetic.evaluate(numbers) != doc["target"]
    trivia = list(tasks[APP_H_TASKS["logic_consistency_gv_triviaqa"]].test_docs())
    assert all(not triviaqa.matches(doc["app_h_incorrect"], doc["aliases"]) for doc in trivia)
    again = _manager().load(APP_H_TASKS["logic_consistency_gv_triviaqa"])["tasks"]
    assert [d["app_h_incorrect"] for d in next(iter(again.values())).test_docs()] == [
        d["app_h_incorrect"] for d in trivia
    ]


def test_on_its_own_answers_an_always_false_validator_can_score_100() -> None:
    # the suite's earlier measure: every shown answer the generator's wrong one (r = -1), judged False
    doc = {"r": -1, "stages": {"generator": {"parsed": {"shown": "7"}}, "validator": {"parsed": {"v": -1}}}}
    scores = score_document(doc, validator_truth=lambda d, parsed: -1)
    assert scores["validator_accuracy"] == 1.0
