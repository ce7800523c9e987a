"""``lc-chat`` without a server: its arguments, which requests it accepts, and its payload."""

from __future__ import annotations

import json

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.api_models import JsonChatStr

pytest.importorskip("tenacity", reason="lm-eval's api extra (pip install -e '.[api]')")

from logic_consistency.harness_ext.chat.judge import ChatJudgeLM, ChoiceRequestError, _group_by_context  # noqa: E402

URL = "http://127.0.0.1:9/v1/chat/completions"


def _chat(text: str) -> JsonChatStr:
    return JsonChatStr(json.dumps([{"role": "user", "content": text}]))


def _request(context: object, continuation: str, task: str = "some_task") -> Instance:
    return Instance("loglikelihood", {}, (context, continuation), 0, (task, 0, 1))


def test_choices_of_one_context_are_grouped_into_one_call() -> None:
    requests = [
        _request(_chat("q1"), "A"),
        _request(_chat("q1"), "B"),
        _request(_chat("q2"), " A"),
        _request(_chat("q2"), " B"),
    ]
    groups = _group_by_context(requests)
    assert list(groups.values()) == [[0, 1], [2, 3]]


@pytest.mark.parametrize(
    ("request_", "match"),
    [
        (
            _request(_chat("q"), " the ground gets wet", "logic_consistency_causal_ctp_so"),
            "task 'logic_consistency_causal_ctp_so' asks for the log-likelihood of ' the ground gets wet'",
        ),
        (_request("plain text", " A"), "run with --apply_chat_template"),
        (_request(_chat("q"), "  "), "one-word answer choices"),
    ],
)
def test_other_requests_are_refused_naming_the_task(request_: Instance, match: str) -> None:
    with pytest.raises(ChoiceRequestError, match=match):
        _group_by_context([request_])


def test_same_choice_twice_is_refused() -> None:
    with pytest.raises(ChoiceRequestError, match="same choice twice"):
        _group_by_context([_request(_chat("q"), "A"), _request(_chat("q"), " A")])


def test_reading_payload_is_greedy_with_top_logprobs() -> None:
    lm = ChatJudgeLM(base_url=URL, model="m", top_logprobs=7, max_tokens=1)
    payload = lm._create_payload([{"role": "user", "content": "q"}], generate=False)
    assert payload["temperature"] == 0 and payload["logprobs"] is True
    assert payload["top_logprobs"] == 7 and payload["max_tokens"] == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"top_logprobs": 21}, "top_logprobs must be at most 20"),
        ({"top_logprobs": 0}, "top_logprobs must be at least 2"),
        ({"top_logprobs": 1}, "top_logprobs must be at least 2"),  # one listed token cannot order two choices
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"base_url": None}, "base_url is required"),
        ({"max_token": 1}, "did you mean 'max_tokens'"),
        ({"api_key": "sk-x"}, "api_key is refused: .*OPENAI_API_KEY"),
    ],
)
def test_bad_arguments_are_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ChatJudgeLM(**{"base_url": URL, "model": "m", **kwargs})


class _Stages:
    """A task declaring its log-likelihood stages, as ``MultiStageTask`` does."""

    def __init__(self, name: str, stages: dict) -> None:
        self.config = type("Config", (), {"task": name})()
        self._stages = stages

    def loglikelihood_continuations(self) -> dict:
        return self._stages


@pytest.mark.parametrize(
    ("stages", "match"),
    [
        ({"ranking": None}, "task 'logic_consistency_causal_ctp_so' scores, in its stage 'ranking', continuations"),
        ({"check": ("is true", "is false")}, "stage 'check' has choices .* of several words"),
    ],
)
def test_tasks_lc_chat_cannot_read_are_refused_when_the_run_starts(stages: dict, match: str) -> None:
    lm = ChatJudgeLM(base_url=URL, model="m")
    with pytest.raises(ChoiceRequestError, match=match):
        lm.check_tasks([object(), _Stages("logic_consistency_causal_ctp_so", stages)])
    lm.check_tasks([_Stages("gv", {"validator": ("True", "False")}), object()])  # one-word choices pass


def test_the_evaluate_hook_asks_the_model_about_every_task_of_either_task_dict_shape() -> None:
    from logic_consistency.harness_ext.task.current_run import check_tasks

    seen: list[list[object]] = []
    lm = type("LM", (), {"check_tasks": lambda self, tasks: seen.append(tasks)})()
    a, b = object(), object()
    check_tasks(lm, {"groups": {}, "tasks": {"a": a, "b": b}})
    check_tasks(lm, {"group": {"a": a}, "b": b})  # lm-eval's older nesting
    check_tasks(object(), {"tasks": {"a": a}})  # a model without the hook: nothing asked
    assert seen == [[a, b], [a, b]]
