"""Issue 54, item 3: what a failed ``lm_eval`` records of the exception it ended with, read from the exception
object (its type, its status attribute), never from its text; and the reader's refusal of any other shape."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest
import requests

from logic_consistency.harness_ext.chat.reply import EndpointError
from logic_consistency.harness_ext.publish.cache_json import RequestCacheError
from logic_consistency.harness_ext.publish.failure_facts import (
    ENV_FAILURE_FILE,
    FailureFacts,
    facts_of,
    read_failure,
    record_failure,
)
from logic_consistency.options import OptionError


def _raised(error: BaseException, cause: BaseException | None = None) -> BaseException:
    try:
        raise error from cause
    except BaseException as caught:  # noqa: BLE001 - the test keeps what was raised
        return caught


def test_the_status_is_the_one_an_exception_carries_never_one_its_text_names() -> None:
    wrapped = _raised(RuntimeError("lc-chat gave up"), EndpointError("http://h/t/TOKEN/v1", 503))
    assert facts_of(wrapped) == FailureFacts("RuntimeError", 503)
    info = aiohttp.RequestInfo(aiohttp.client.URL("http://h/v1"), "POST", {}, aiohttp.client.URL("http://h/v1"))  # type: ignore[arg-type]
    assert facts_of(aiohttp.ClientResponseError(info, (), status=429)) == FailureFacts("ClientResponseError", 429)
    response = requests.Response()
    response.status_code = 502
    assert facts_of(requests.HTTPError("bad gateway", response=response)).http_status == 502
    # an endpoint's words: a reply that says a status, or names the suite's cache error
    for words in ("upstream answered HTTP 503", "RequestCacheError: --use_cache: x is bad", "HTTPError: 404"):
        assert facts_of(ValueError(words)) == FailureFacts("ValueError"), words


def test_the_suite_s_own_errors_are_known_by_type() -> None:
    cache = facts_of(_raised(RuntimeError("init failed"), RequestCacheError("--use_cache: c.db is busy")))
    assert cache == FailureFacts("RuntimeError", None, True, "--use_cache: c.db is busy")
    exit_two = _raised(SystemExit(2), None)
    exit_two.__context__ = OptionError("--limit: must be positive")  # how the one-line option error exits
    assert facts_of(exit_two) == FailureFacts("OptionError")


def test_a_record_is_written_only_where_the_launcher_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "record.json"
    monkeypatch.delenv(ENV_FAILURE_FILE, raising=False)
    record_failure(ValueError("x"))
    assert not path.exists()
    monkeypatch.setenv(ENV_FAILURE_FILE, str(path))
    record_failure(SystemExit(0))  # a clean exit records nothing
    assert not path.exists()
    record_failure(_raised(RuntimeError("gave up"), EndpointError("http://h", 404)))
    assert read_failure(path) == FailureFacts("RuntimeError", 404)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({"error_class": "X", "http_status": 503, "request_cache": False}),  # a field missing
        json.dumps({"error_class": "a b", "http_status": None, "request_cache": False, "message": None}),
        json.dumps({"error_class": "X", "http_status": 99, "request_cache": False, "message": None}),
        json.dumps({"error_class": "X", "http_status": True, "request_cache": False, "message": None}),
        json.dumps({"error_class": "X", "http_status": None, "request_cache": "yes", "message": None}),
    ],
)
def test_a_record_of_another_shape_is_no_record(tmp_path: Path, text: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(text, encoding="utf-8")
    assert read_failure(path) is None
    assert read_failure(tmp_path / "absent.json") is None
