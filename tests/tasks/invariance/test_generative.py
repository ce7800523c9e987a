"""Generative self-validation (``base_task: triviaqa``, ``self_validate: true``) through lm-eval's evaluator.

A scripted model answers the TriviaQA fixture (``tests/fixtures/data/triviaqa``, read through the local-copy
hook): two questions right, one wrong, one empty. The wrapped task and lm-eval's own ``triviaqa`` run in one
``simple_evaluate``; the test holds the answer stage to the base's own requests, the base's ``exact_match``
to lm-eval's per question, and each validation metric to its value for the scripted verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.multistage import PLACEHOLDER_PROMPT
from logic_consistency.tasks.invariance.generative import GenerativeValidationTask
from logic_consistency.tasks.invariance.task import VALIDATION

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
NAME = "logic_consistency_invariance_triviaqa_self_validate"
#: The scripted answers, by question: right, right, wrong, empty.
ANSWERS = {
    "What is Bruce Willis' real first name?": " Walter\n",
    "Which planet is known as the Red Planet?": " mars, the fourth",
    "In which city is the Colosseum?": " Wrongtown.",
    "What is the chemical symbol for gold?": "   ",
}
RIGHT = {"Walter", "mars"}


class ScriptedLM(LM):
    """Answers each question as :data:`ANSWERS` says (cut at the stop sequences); " Yes" / " No" by
    ``says_yes(validated answer)``."""

    def __init__(self, says_yes: Callable[[str], bool]) -> None:
        super().__init__()
        self.says_yes = says_yes
        self.generated: list[tuple[str, dict[str, Any]]] = []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            context, kwargs = request.args[:2]
            self.generated.append((context, dict(kwargs)))
            question = re.search(r"Question: (.*)\?\nAnswer:$", context)  # lm-eval's "{{question}}?"
            text = ANSWERS[question.group(1)] if question else ""
            for stop in kwargs["until"]:  # as a backend stops at the request's stop sequences
                text = text.split(stop)[0]
            out.append(text)
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for context, continuation in (request.args for request in requests):
            if context.startswith(PLACEHOLDER_PROMPT):
                out.append((-1.0, False))
                continue
            assert context.endswith(VALIDATION) and continuation in (" Yes", " No"), (context, continuation)
            answer = context[: -len(VALIDATION)].rsplit("\nAnswer: ", 1)[1]
            yes = self.says_yes(answer)
            out.append((-0.5 if (continuation == " Yes") == yes else -2.0, False))
        return out

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


@pytest.fixture(scope="module")
def data() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        yield


def _run(model: LM, **kwargs: Any) -> dict[str, Any]:
    manager = TaskManager(include_path=str(tasks_dir()))
    return simple_evaluate(model=model, tasks=[NAME, "triviaqa"], task_manager=manager, log_samples=True, **kwargs)


def _metrics(results: dict[str, Any], task: str) -> dict[str, float]:
    raw = results["results"][task]
    return {key.split(",")[0]: value for key, value in raw.items() if "," in key and "_stderr" not in key}


@pytest.fixture(scope="module")
def yes_to_all(data: None) -> tuple[dict[str, Any], ScriptedLM]:
    model = ScriptedLM(lambda answer: True)
    return _run(model), model


def test_the_answer_stage_is_the_base_request_and_its_metric_equals_the_base(
    yes_to_all: tuple[dict[str, Any], ScriptedLM],
) -> None:
    results, model = yes_to_all
    # every base request was asked twice, unchanged: once by triviaqa, once by the answer stage
    assert len(model.generated) == 8
    assert all(model.generated.count(request) == 2 for request in model.generated)
    base = {row["doc"]["question"]: row for row in results["samples"]["triviaqa"]}
    wrapped = {row["doc"]["question"]: row for row in results["samples"][NAME]}
    assert set(base) == set(wrapped) and len(base) == 4
    for question, row in wrapped.items():
        answer = row["doc"]["stages"]["answer"]
        assert answer["prompts"]["main"] == base[question]["arguments"][0][0]
        assert answer["parsed"]["answer"] == base[question]["filtered_resps"][0]
        assert row["exact_match"] == base[question]["exact_match"]
    assert _metrics(results, NAME)["exact_match"] == _metrics(results, "triviaqa")["exact_match"] == 0.5


def test_yes_to_every_answer(yes_to_all: tuple[dict[str, Any], ScriptedLM]) -> None:
    values = _metrics(yes_to_all[0], NAME)
    # 3 answers validated (the empty one counted, not validated); Yes to the wrong one too
    assert values["gv_consistency"] == 1.0 and values["validator_accuracy"] == pytest.approx(2 / 3)
    assert values["self_endorsed_wrong"] == 1.0
    assert values["unparseable"] == 1 and values["undefined_gv_consistency"] == 1
    assert values["undefined_validator_accuracy"] == 1 and values["undefined_self_endorsed_wrong"] == 3


def test_a_validator_that_knows_the_truth(data: None) -> None:
    results = _run(ScriptedLM(lambda answer: answer in RIGHT))
    values = _metrics(results, NAME)
    assert values["gv_consistency"] == pytest.approx(2 / 3) and values["validator_accuracy"] == 1.0
    assert values["self_endorsed_wrong"] == 0.0 and values["exact_match"] == 0.5


def test_the_validator_prompt_quotes_the_extracted_answer(yes_to_all: tuple[dict[str, Any], ScriptedLM]) -> None:
    rows = {row["doc"]["question"]: row for row in yes_to_all[0]["samples"][NAME]}
    row = rows["Which planet is known as the Red Planet?"]
    context = row["doc"]["stages"]["answer"]["prompts"]["main"]
    assert [tuple(arguments) for arguments in row["arguments"]] == [
        (f"{context} mars{VALIDATION}", " Yes"),
        (f"{context} mars{VALIDATION}", " No"),
    ]


def _load(**metadata: Any) -> Any:
    manager = TaskManager(include_path=str(tasks_dir()), metadata=metadata or None)
    return manager.load([NAME])["tasks"][NAME]


def test_the_wrapped_class_hands_a_generative_base_on(data: None) -> None:
    task = _load()
    assert isinstance(task, GenerativeValidationTask)
    assert task.config.metadata["task_config"] == {
        "base_task": "triviaqa",
        "stages": ["answer", "validator"],
        "validated_filter": "remove_whitespace",
    }


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"transform": "cyclic"}, "transform varies a question's options, and base task 'triviaqa' is generate_until"),
        ({"ask_incorrect": True}, "ask_incorrect varies a question's options"),
        ({"self_validate": False}, "set self_validate: true"),
    ],
)
def test_options_that_need_options_are_refused(data: None, metadata: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        _load(**metadata)


def test_the_plan_prices_both_stages(data: None) -> None:
    from logic_consistency.harness_ext.plan.counts import load_tokenizer, plan_tasks
    from logic_consistency.harness_ext.plan.report import DEFAULT_TOKENIZER

    (plan,) = plan_tasks([NAME], limit=2, tokenizer=load_tokenizer(DEFAULT_TOKENIZER))
    # the answer stage as built (the base's two requests), the validator bounded from its definition
    assert plan.documents == 2 and plan.building["generate_until"].requests == 2
    (validator,) = plan.later_stages
    assert (validator.stage, validator.request_type, validator.requests, validator.contexts) == (
        "validator",
        "loglikelihood",
        4,
        2,
    )
    assert validator.bounded is not None and len(validator.bounded) == 2
    for context, extra in validator.bounded:  # the base's prompt, the answer at its bound, the question
        assert context.startswith("Question: ") and context.endswith(VALIDATION) and extra == 256
