"""``lc-chat`` against misbehaving endpoints on 127.0.0.1: every call ends, every reply is checked.

A tiny HTTP server answers with whatever a test sets (a canned body, a slow trickle); no model runs.
"""

from __future__ import annotations

import http.server
import json
import logging
import math
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.api_models import JsonChatStr

pytest.importorskip("tenacity", reason="lm-eval's api extra (pip install -e '.[api]')")

from logic_consistency.credentials import url_origin
from logic_consistency.harness_ext.chat.judge import ChatJudgeLM  # noqa: E402

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"


def completion(top: list[tuple[str, float]], *, model: str = "judge") -> dict[str, Any]:
    """A chat completion whose one generated token lists ``top``."""
    entries = [{"token": token, "logprob": logprob} for token, logprob in top]
    return {
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": top[0][0]},
                "logprobs": {"content": [{**entries[0], "top_logprobs": entries}]},
            }
        ],
    }


class FakeEndpoint(http.server.ThreadingHTTPServer):
    """Answers every POST with ``respond(handler)``; counts the POSTs it received."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__((HOST, 0), _Handler)
        self.posts = 0
        self.respond: Callable[[_Handler], None] = lambda handler: handler.send(200, completion([("A", -0.1)]))

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/v1/chat/completions"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: FakeEndpoint

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def trickle(self) -> None:
        """One byte every 2 s, for ever (until the client gives up): each read succeeds."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(2)
        except OSError:
            return

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.posts += 1
        self.server.respond(self)


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    server = FakeEndpoint()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _judge(url: str, **more: Any) -> ChatJudgeLM:
    return ChatJudgeLM(base_url=url, model="judge", max_retries=1, timeout=5, **more)


def _requests(n: int = 1) -> list[Instance]:
    out = []
    for i in range(n):
        context = JsonChatStr(json.dumps([{"role": "user", "content": f"question {i}"}]))
        out += [Instance("loglikelihood", {}, (context, choice), 0, ("toy", i, 1)) for choice in ("A", "B")]
    return out


@pytest.mark.parametrize("concurrent", [1, 2])
def test_a_trickling_endpoint_ends_within_its_total_deadline(endpoint: FakeEndpoint, concurrent: int) -> None:
    endpoint.respond = _Handler.trickle
    lm = ChatJudgeLM(base_url=endpoint.url, model="judge", max_retries=1, timeout=3, num_concurrent=concurrent)
    start = time.monotonic()
    with pytest.raises(
        RuntimeError, match=f"base_url={url_origin(endpoint.url)} did not answer within timeout=3 s"
    ) as raised:
        lm.loglikelihood(_requests(), disable_tqdm=True)
    assert time.monotonic() - start < 10  # one attempt of 3 s, plus start-up; a per-read timeout never ends
    assert f"lc-chat: the chat endpoint base_url={url_origin(endpoint.url)} gave no usable answer" in str(raised.value)


@pytest.mark.parametrize(
    ("status", "body", "content_type", "match"),
    [
        (200, b'{"choices": [', "application/json", "sent a reply that is not JSON"),
        (200, b"<html><body>Sign in</body></html>", "text/html", r"not JSON \(text/html, starting '<html>"),
        (200, {"choices": []}, "application/json", "sent a reply without choices"),
        (200, {"object": "chat.completion"}, "application/json", "sent a reply without choices"),
        (200, [1, 2], "application/json", "sent JSON that is not an object"),
        (200, {"error": {"message": "quota"}}, "application/json", "answered with an error: .*quota"),
        (200, {"choices": [{"message": {"content": "A"}}]}, "application/json", "no choices.0..logprobs.content"),
        (200, {"choices": [{"logprobs": {"content": []}}]}, "application/json", "no choices.0..logprobs.content"),
    ],
)
@pytest.mark.parametrize("concurrent", [1, 2])
def test_a_broken_reply_is_one_error_naming_the_endpoint(
    endpoint: FakeEndpoint, status: int, body: Any, content_type: str, match: str, concurrent: int
) -> None:
    endpoint.respond = lambda handler: handler.send(status, body, content_type)
    with pytest.raises((ValueError, RuntimeError), match=match) as raised:
        _judge(endpoint.url, num_concurrent=concurrent).loglikelihood(_requests(), disable_tqdm=True)
    assert f"base_url={url_origin(endpoint.url)}" in str(raised.value)


@pytest.mark.parametrize(
    ("top", "match"),
    [
        ([("A", math.nan), ("B", -1.0)], "position 0, top_logprobs entry 0 .'A'. has logprob nan"),
        ([("A", math.inf)], "has logprob inf"),
        ([("A", 3.0)], "has logprob 3.0"),
        ([("A", -0.1), ("B", -0.2)], "listed probabilities sum to 1.7"),
        ([], "no top log-probabilities"),
    ],
)
def test_impossible_readings_are_errors_naming_endpoint_and_position(
    endpoint: FakeEndpoint, top: list[tuple[str, float]], match: str
) -> None:
    reply = completion(top or [("A", -0.1)])
    if not top:
        reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = []
    # json.dumps writes NaN / Infinity, as a broken server would
    endpoint.respond = lambda handler: handler.send(200, reply)
    with pytest.raises(ValueError, match=match) as raised:
        _judge(endpoint.url).loglikelihood(_requests(), disable_tqdm=True)
    assert f"lc-chat: the reply of base_url={url_origin(endpoint.url)}" in str(raised.value)


def test_minus_infinity_is_probability_zero_and_a_missing_choice_loses(endpoint: FakeEndpoint) -> None:
    endpoint.respond = lambda handler: handler.send(200, completion([("The", -0.5), ("B", -3.0), ("A", -math.inf)]))
    a, b = _judge(endpoint.url, top_logprobs=3).loglikelihood(_requests(), disable_tqdm=True)
    assert a[0] == -math.inf and a.missing and b[0] == pytest.approx(-3.0) and not b.tied


@pytest.mark.parametrize(
    ("reported", "warned"),
    [("other-model", True), ("judge-2024-08-06", False)],  # a dated snapshot of the asked model is not warned
)
def test_the_reported_model_is_recorded_and_a_different_one_warned(
    endpoint: FakeEndpoint, caplog: pytest.LogCaptureFixture, reported: str, warned: bool
) -> None:
    endpoint.respond = lambda handler: handler.send(200, completion([("A", -0.1)], model=reported))
    lm = _judge(endpoint.url)
    with caplog.at_level(logging.INFO, logger="lm_eval.models.lc_chat"):
        lm.loglikelihood(_requests(2), disable_tqdm=True)
    assert lm.get_model_info() == {"reported_models": [reported]}
    lines = [r.message for r in caplog.records if "answers as model" in r.message]
    assert len(lines) == 1 and (f"{reported!r}, not the 'judge' asked for" in lines[0]) == warned


@pytest.mark.slow
def test_a_task_scoring_sentences_is_refused_before_its_generation_stage_calls(
    endpoint: FakeEndpoint, tmp_path: Path
) -> None:
    """As the conditional-probability causal tasks (generation, then whole-effect log-likelihoods)."""
    task = "toy_generate_then_sentence"
    command = [LM_EVAL, "--model", "lc-chat", "--model_args", f"base_url={endpoint.url},model=judge,max_retries=1"]
    command += ["--tasks", task, "--include_path", str(ROOT / "tests" / "fixtures" / "tasks"), "--limit", "2"]
    command += ["--apply_chat_template", "--output_path", str(tmp_path)]
    env = {**os.environ, "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data"), "HF_HUB_OFFLINE": "1"}
    run = children.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert run.returncode != 0
    assert f"lc-chat: task '{task}' scores, in its stage 'sentence', continuations built from each" in run.stderr
    assert "Refused before any call" in run.stderr
    assert endpoint.posts == 0


def _slow(respond: Callable[[_Handler], None], seconds: float = 0.3) -> Callable[[_Handler], None]:
    """``respond`` after ``seconds``: several calls are in flight at once."""

    def answer(handler: _Handler) -> None:
        time.sleep(seconds)
        respond(handler)

    return answer


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        (b"<html>Bad gateway</html>", "text/html", "not JSON"),
        ({"choices": []}, "application/json", "without choices"),
        (completion([("A", 3.0)]), "application/json", "has logprob 3.0"),
    ],
)
@pytest.mark.parametrize("concurrent", [2, 4])
def test_a_bad_reply_costs_at_most_one_wave(
    endpoint: FakeEndpoint, body: Any, content_type: str, reason: str, concurrent: int
) -> None:
    """Issue 29: 13 calls (38 with num_concurrent=4) and ``Server disconnected`` became at most one wave."""
    endpoint.respond = _slow(lambda handler: handler.send(200, body, content_type))
    retries = 3
    lm = ChatJudgeLM(base_url=endpoint.url, model="judge", max_retries=retries, timeout=5, num_concurrent=concurrent)
    with pytest.raises(ValueError, match=reason) as raised:
        lm.loglikelihood(_requests(12), disable_tqdm=True)
    message = str(raised.value)
    assert f"base_url={url_origin(endpoint.url)}" in message and "disconnected" not in message.lower()
    assert 1 <= endpoint.posts <= concurrent + retries, endpoint.posts


def test_a_failing_endpoint_is_retried_then_stops_every_call(endpoint: FakeEndpoint) -> None:
    """An HTTP error is retried (it may heal); when the last attempt fails, no new call is sent."""
    endpoint.respond = _slow(lambda handler: handler.send(500, {"error": "down"}), 0.1)
    lm = ChatJudgeLM(base_url=endpoint.url, model="judge", max_retries=2, timeout=5, num_concurrent=2)
    with pytest.raises(RuntimeError, match=f"base_url={url_origin(endpoint.url)} gave no usable answer.*500") as raised:
        lm.loglikelihood(_requests(12), disable_tqdm=True)
    assert "disconnected" not in str(raised.value).lower()
    assert endpoint.posts <= 2 * 2, endpoint.posts  # num_concurrent calls, each with its max_retries attempts


@pytest.mark.parametrize("length", [8, 12, 162, 200])
@pytest.mark.parametrize("form", ["json", "html"])
def test_an_echoed_key_is_never_shown_from_8_characters(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, length: int, form: str
) -> None:
    """The key the backend sends is redacted from the error body before the 200-character cut (issue 39:
    a key under 8 characters is no secret, tests/test_secret_model.py)."""
    key = ("k9Zq" * 60)[:length]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    if form == "json":
        body: Any = {"error": {"message": f"Incorrect API key provided: {key}. Find your key at ..."}}
        content_type = "application/json"
    else:
        body, content_type = f"<html>{key} is not a valid key</html>".encode(), "text/html"
    endpoint.respond = lambda handler: handler.send(200, body, content_type)
    with pytest.raises(ValueError) as raised:
        _judge(endpoint.url).loglikelihood(_requests(), disable_tqdm=True)
    message = str(raised.value)
    assert key not in message and key[: min(length, 20)] not in message
    assert "[redacted" in message and f"base_url={url_origin(endpoint.url)}" in message


def test_the_request_cache_never_stores_the_key(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A generation echoing the key goes through lm-eval's ``CachingLM`` (``--use_cache``) redacted."""
    from lm_eval.api.model import CachingLM

    key = "Qx7w-local-12"  # a local server's key (issue 39: under 8 characters it would be no secret)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    reply = completion([("A", -0.1)])
    reply["choices"][0]["message"]["content"] = f"my key is {key}"
    endpoint.respond = lambda handler: handler.send(200, reply)
    lm = CachingLM(_judge(endpoint.url), str(tmp_path / "cache" / "judge_rank0.db"))
    context = JsonChatStr(json.dumps([{"role": "user", "content": "say the key"}]))
    request = Instance("generate_until", {}, (context, {"until": [], "max_gen_toks": 8}), 0, ("toy", 0, 1))
    assert lm.generate_until([request]) == [f"my key is {key}"]  # the run gets the answer as it came
    lm.dbdict.commit()
    stored = b"".join(path.read_bytes() for path in (tmp_path / "cache").iterdir())
    assert key.encode() not in stored and b"my key is [redacted " in stored
