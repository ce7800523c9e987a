"""``lc-chat`` without a server: its arguments, which requests it accepts, and its payload."""

from __future__ import annotations

import json

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.api_models import JsonChatStr

pytest.importorskip("tenacity", reason="lm-eval's api extra (pip install -e '.[api]')")

from logic_consistency.harness_ext.chat_judge import ChatJudgeLM, ChoiceRequestError, _group_by_context  # noqa: E402

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
        ({"top_logprobs": 21}, "top_logprobs must be in"),
        ({"top_logprobs": 0}, "top_logprobs must be in"),
        ({"max_tokens": 0}, "max_tokens must be >= 1"),
        ({"base_url": None}, "base_url is required"),
    ],
)
def test_bad_arguments_are_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ChatJudgeLM(**{"base_url": URL, "model": "m", **kwargs})
