"""The plan's later-stage prompt tokens are an upper bound on what a real run sends (``harness_ext/plan/bounds.py``).

A ``dummy`` model run through lm-eval answers every generation with a long, parseable answer within
the stage's ``max_gen_toks``; each later prompt it then receives must count at most the plan's bound
for that stage, which is rendered from the same hooks with every quoted answer at its generation bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.plan.counts import load_tokenizer, plan_tasks
from logic_consistency.harness_ext.plan.report import DEFAULT_TOKENIZER

LIMIT = 4
#: A long answer each task's generator parses (arithmetic: two numbers; style transfer: a rewrite).
ANSWERS = {
    "logic_consistency_gv_arithmetic_cot": "-123456 || 9876543",
    "logic_consistency_gv_style_transfer": "Ponder, dear reader, how the economy's decline mirrors "
    "the slow and ineluctable fading of every mortal hope under an indifferent sky.",
}


class LongAnswers(DummyLM):
    """lm-eval's ``dummy`` model answering each generation with :data:`ANSWERS`, recording the prompts."""

    tokenizer = None

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer, self.prompts = answer, []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        self.prompts += [str(request.args[0]) for request in requests]
        return [self.answer] * len(requests)

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.prompts += list(dict.fromkeys(str(request.args[0]) for request in requests))  # one per prompt
        return [(-float(index), False) for index in range(len(requests))]


@pytest.mark.parametrize("task", sorted(ANSWERS))
def test_a_real_runs_later_prompts_count_at_most_the_plans_bound(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(Path(__file__).resolve().parents[1] / "fixtures" / "data"))
    tokenizer = load_tokenizer(DEFAULT_TOKENIZER)
    (plan,) = plan_tasks([task], limit=LIMIT, tokenizer=tokenizer)
    (later,) = plan.later_stages
    assert later.bounded is not None and len(later.bounded) == LIMIT
    # the answers fit the generation bound the plan counts them at
    assert len(tokenizer(ANSWERS[task], add_special_tokens=False)["input_ids"]) <= max(e for _, e in later.bounded)
    model = LongAnswers(ANSWERS[task])
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata={})
    simple_evaluate(model=model, tasks=[task], limit=LIMIT, task_manager=manager, bootstrap_iters=0)
    validator_prompts = model.prompts[LIMIT:]  # the generator's prompts come first, one per document
    assert len(validator_prompts) == LIMIT
    sent = sum(len(ids) for ids in tokenizer(validator_prompts, add_special_tokens=False)["input_ids"])
    assert later.context_tokens_estimate is not None and sent <= later.context_tokens_estimate
    # and the bound is tight: the prompts without the answers are the real prompts' frame
    assert later.context_tokens_estimate - sent <= sum(extra for _, extra in later.bounded)
