"""Placeholder requests are answered without a model call, on every backend (harness_ext/task/placeholders.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.instance import Instance
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.task import multistage
from logic_consistency.harness_ext.task.placeholders import FIXED_ANSWERS, answered_here, is_placeholder, placeholder
from logic_consistency.tasks.pairwise import pairs_task, self_agreement_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
PLACEHOLDER_PROMPTS = (
    multistage.PLACEHOLDER_PROMPT,
    pairs_task.PairsRankingTask.PLACEHOLDER_PROMPT,
    self_agreement_task.SelfAgreementTask.PLACEHOLDER_PROMPT,
)


class CountingDummy(DummyLM):
    """lm-eval's ``dummy`` model, keeping every request it receives (no hub tokenizer)."""

    tokenizer = None

    def __init__(self) -> None:
        super().__init__()
        self.received: list[Any] = []
        self.calls = 0

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.calls += 1
        self.received += requests
        return super().loglikelihood(requests, disable_tqdm)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        self.calls += 1
        self.received += requests
        return super().generate_until(requests, disable_tqdm)


def _request(text: str) -> Instance:
    return Instance("loglikelihood", {}, (text, " A"), 0, ("t", 0, 1))


def test_placeholders_are_taken_out_of_a_call_and_answered_in_place() -> None:
    model = CountingDummy()
    mixed = [_request("q1"), placeholder("loglikelihood", {}, "p", ("t", 1, 1)), _request("q2")]
    with answered_here(model):
        answers = model.loglikelihood(mixed)
        assert model.loglikelihood([placeholder("loglikelihood", {}, "p", ("t", 2, 1))]) == [
            FIXED_ANSWERS["loglikelihood"]
        ]
        (text,) = model.generate_until([placeholder("generate_until", {}, "p", ("t", 3, 1))])
    assert [r.args[0] for r in model.received] == ["q1", "q2"]
    assert model.calls == 1  # a call with nothing but placeholders never reaches the model
    assert answers[1] == FIXED_ANSWERS["loglikelihood"] and len(answers) == 3
    assert text == FIXED_ANSWERS["generate_until"]
    # the wrapping ends with the block: the class's own methods are back
    assert "loglikelihood" not in vars(model) and "generate_until" not in vars(model)


def test_placeholder_needs_a_known_request_type() -> None:
    with pytest.raises(ValueError, match="placeholder request_type must be one of"):
        placeholder("multiple_choice", {}, "p", ("t", 0, 1))
    assert is_placeholder(placeholder("generate_until", {}, "p", ("t", 0, 1)))
    assert not is_placeholder(_request("q"))


@pytest.mark.parametrize(
    ("task", "metadata"),
    [
        ("toy_pairs", None),  # PairS: every document's final request is a placeholder
        ("toy_pairwise_sc", {"samples": 2}),  # self-agreement: likewise
        ("toy_two_stage", None),  # the dummy's "lol" is unparseable: every validator is skipped
    ],
)
def test_no_placeholder_reaches_the_dummy_model(task: str, metadata: dict[str, Any] | None) -> None:
    model = CountingDummy()
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False, metadata=metadata)
    results = simple_evaluate(model=model, tasks=[task], task_manager=manager, limit=2, log_samples=True)
    assert task in results["results"]
    assert model.received, "the earlier stages / rounds / samples still reach the model"
    assert not [r for r in model.received if is_placeholder(r)]
    assert not [r for r in model.received if str(r.args[0]) in PLACEHOLDER_PROMPTS]
    # every document still has its one request in the sample log, answered with the fixed answer
    samples = results["samples"][task]
    assert len(samples) == 2
    if task != "toy_two_stage" or all("error" in s["doc"]["stages"]["generator"]["parsed"] for s in samples):
        assert all(len(s["resps"]) == 1 for s in samples)
