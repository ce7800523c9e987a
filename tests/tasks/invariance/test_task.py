"""The wrapped task on the MMLU fixture, without a model: its requests and the reference judges.

The judges answer through ``process_results`` with made-up log-likelihoods (the displayed label a
judge prefers scores highest), and the corpus statistics go through the task's own aggregations, so
the task's wiring is tested against the values issue 55 states for k = 4 under ``cyclic``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.invariance.task import InvarianceTask

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
NAME = "logic_consistency_invariance_mmlu_abstract_algebra"


@pytest.fixture(scope="module")
def task() -> Iterator[InvarianceTask]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        manager = TaskManager(include_path=str(tasks_dir()))
        yield manager.load([NAME])["tasks"][NAME]


def _answer(task: InvarianceTask, judge: Callable[[dict[str, Any], tuple[int, ...]], int]) -> list[dict[str, Any]]:
    """Every document's results when ``judge(doc, order)`` names the displayed position it picks."""
    out = []
    for doc in task.eval_docs:
        results = []
        for order in task.orders(doc):
            chosen = judge(doc, order)
            results += [(-0.5 if p == chosen else -3.0, False) for p in range(len(order))]
        out.append(task.process_results(doc, results))
    return out


def _aggregate(task: InvarianceTask, values: list[dict[str, Any]], name: str) -> float:
    return float(task.aggregation()[name]([value[name] for value in values if value.get(name) is not None]))


def test_requests_one_document_per_question_every_rotation(task: InvarianceTask) -> None:
    doc = task.eval_docs[0]
    ctx = task.fewshot_context(doc, num_fewshot=0)
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=(NAME, 0, 1))
    assert [r.idx for r in requests] == list(range(16))
    assert [r.arguments for r in requests[:4]] == [(ctx, f" {label}") for label in "ABCD"]
    rotated = requests[4].arguments[0]
    options = doc["choices"]
    assert f"A. {options[1]}\nB. {options[2]}\nC. {options[3]}\nD. {options[0]}\nAnswer:" in rotated
    assert rotated.startswith(ctx[: ctx.index(doc["question"].strip())])  # the description is the base's


def test_always_one_letter(task: InvarianceTask) -> None:
    values = _answer(task, lambda doc, order: 0)
    assert all(v["acc_mean"] == 0.25 and v["acc_circular"] == 0 and v["content_consistency"] == 0 for v in values)
    assert _aggregate(task, values, "pick_rate_A") == 1.0
    assert _aggregate(task, values, "rstd_balanced") == pytest.approx(100 * math.sqrt(3) / 4)
    assert _aggregate(task, values, "pick_rate_kl") == pytest.approx(math.log(4))
    # four contents, one vote each: the majority is undefined, None on every document (lm-eval's aggregation
    # leaves it out through the autoload hook, so no "not scored on the same number of documents") and counted
    assert all("acc_majority" in v and v["acc_majority"] is None and v["undefined_acc_majority"] == 1 for v in values)


def test_content_oracle(task: InvarianceTask) -> None:
    values = _answer(task, lambda doc, order: order.index(doc["answer"]))
    for name in (
        "acc_original",
        "acc_mean",
        "acc_circular",
        "content_consistency",
        "pairwise_agreement",
        "acc_majority",
    ):
        assert all(v[name] == 1.0 for v in values), name
    assert _aggregate(task, values, "rstd_balanced") == 0.0
    assert [_aggregate(task, values, f"pick_rate_{label}") for label in "ABCD"] == [0.25] * 4


def test_same_wrong_content(task: InvarianceTask) -> None:
    values = _answer(task, lambda doc, order: order.index((doc["answer"] + 1) % 4))
    assert all(v["content_consistency"] == 1.0 and v["acc_mean"] == 0.0 and v["acc_original"] == 0.0 for v in values)


def test_documents_and_exclusions_are_recorded(task: InvarianceTask) -> None:
    assert task.fields is not None and (task.fields.options, task.fields.answer) == ("choices", "answer")
    assert task.config.metadata["task_config"]["base_task"] == "mmlu_abstract_algebra"
    assert task.config.metadata["task_config"]["excluded_questions"] == {}
    assert task.config.description.startswith("The following are multiple choice questions")


def test_ids_relabels_the_prompt_and_the_continuations() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        manager = TaskManager(include_path=str(tasks_dir()), metadata={"transform": "ids"})
        task = manager.load([NAME])["tasks"][NAME]
    doc = task.eval_docs[0]
    ctx = task.fewshot_context(doc, num_fewshot=0)
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=(NAME, 0, 1))
    assert [r.arguments[1] for r in requests] == [f" {label}" for label in "ABCD1234abcd"]
    assert f"\n1. {doc['choices'][0]}\n2. {doc['choices'][1]}" in requests[4].arguments[0]
    assert f"\nc. {doc['choices'][2]}\nd. {doc['choices'][3]}" in requests[8].arguments[0]
    values = _answer(task, lambda doc, order: 0)  # the first label of every label set: the same content
    assert all(v["label_consistency"] == 1.0 for v in values)


def test_negation_asks_every_variant_for_the_incorrect_option() -> None:
    name = "logic_consistency_invariance_mmlu_anatomy"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        manager = TaskManager(include_path=str(tasks_dir()), metadata={"ask_incorrect": True})
        task = manager.load([name])["tasks"][name]
    # the fixture's anatomy rows: one "All of the above", one "... do not have a nucleus?" (already negated)
    assert task.config.metadata["task_config"]["excluded_questions"] == {"referring_option": 1, "already_negated": 1}
    doc = task.eval_docs[0]
    ctx = task.fewshot_context(doc, num_fewshot=0)
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=(name, 0, 1))
    assert len(requests) == 32 and [r.idx for r in requests] == list(range(32))
    assert f"{doc['question'].strip()}\nWhich option is incorrect?\nA. {doc['choices'][0]}" in requests[16].arguments[0]
    assert "incorrect" not in requests[15].arguments[0]
    values = [task.process_results(d, [(-0.5 if p == 0 else -3.0, False) for _ in range(8) for p in range(4)])
              for d in task.eval_docs]  # fmt: skip
    # always "A": under each rotation the same content is picked as correct and as incorrect
    assert all(v["negation_contradiction"] == 1.0 for v in values)
    assert all(v["negation_accuracy"] == 0.75 for v in values)


def test_self_validation_asks_yes_or_no_of_each_option() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        manager = TaskManager(include_path=str(tasks_dir()), metadata={"self_validate": True})
        task = manager.load([NAME])["tasks"][NAME]
    doc = task.eval_docs[0]
    ctx = task.fewshot_context(doc, num_fewshot=0)
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=(NAME, 0, 1))
    assert len(requests) == 16 + 8 and [r.idx for r in requests] == list(range(24))
    assert requests[16].arguments == (f"{ctx} A\nIs this answer correct? Answer Yes or No.\nAnswer:", " Yes")
    assert requests[23].arguments == (f"{ctx} D\nIs this answer correct? Answer Yes or No.\nAnswer:", " No")
    gold = doc["answer"]
    # always "A", and Yes to every option: consistent with itself, right on the gold's verdict only
    answers = [(-0.5 if p == 0 else -3.0, False) for _ in range(4) for p in range(4)] + [
        (-0.1, False),
        (-2.0, False),
    ] * 4
    values = task.process_results(doc, answers)
    assert values["gv_consistency"] == 1.0 and values["validator_accuracy"] == 0.25
    assert ("self_endorsed_wrong" in values) == (gold != 0)
