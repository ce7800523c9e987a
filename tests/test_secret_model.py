"""Redaction with a model of what a secret is (issue 39, item 2): it neither garbles nor leaks.

Garbles: a placeholder key (``-``, ``none``, ``EMPTY``) or a short value is no secret, so no field or
metric name is rewritten; JSON keys are never rewritten; a model list's ``LANG: C`` is configuration.
Leaks: a URL is published as scheme, host, port and a known API path; an echoed key is redacted in its
common encodings, split, or cut to a part of 16 characters; ``--gen_kwargs`` is checked for credentials.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from typing import Any

import pytest

from logic_consistency import credentials
from logic_consistency.credentials import CredentialError, Redactor, refuse_short_key, secret_environment
from logic_consistency.harness_ext.publish.allowlist import public_model_args, public_url_parts
from logic_consistency.harness_ext.publish.run import publishing
from logic_consistency.leaderboard.run.modellist import _env
from logic_consistency.options import OptionError

KEY = "sk-live-4f9Q2zT7xLm8Rb3Kd6Wy1Hc5"
#: lm-eval's own field and metric names, which no redaction may touch.
RESULTS = {
    "results": {"logic_consistency_caters": {"alias": "caters", "s_comm,none": 0.5, "s_comm_stderr,none": "N/A"}},
    "n-samples": {"logic_consistency_caters": {"original": 4, "effective": 4}},
    "higher_is_better": {"logic_consistency_caters": {"s_comm": True}},
    "config": {"model": "local-chat-completions", "device": None, "model_args": "model=m,base_url=http://h:8/v1"},
    "samples": [{"filter": "none", "metrics": ["s_comm"], "resps": [["- C -"]], "doc": {"C": "none EMPTY -"}}],
}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    table: dict[str, str] = {}
    monkeypatch.setattr(credentials, "_REGISTERED", table)
    return table


@pytest.mark.parametrize("placeholder", ["-", "none", "EMPTY", "None", "sk-no-key-required", "abc1234", " - "])
def test_a_placeholder_key_is_no_secret_and_changes_nothing(placeholder: str, registered: dict[str, str]) -> None:
    environ = {"OPENAI_API_KEY": placeholder, "HF_TOKEN": "x"}
    assert secret_environment(environ) == {}
    credentials.register_header({"Authorization": f"Bearer {placeholder}"}, "the lc-chat credential")
    assert registered == {}
    assert Redactor.from_environment(environ).json(RESULTS) == RESULTS  # byte-identical: nothing rewritten
    line = refuse_short_key("local-chat-completions", environ)
    assert line == (
        "logic-consistency: OPENAI_API_KEY is not treated as a secret (a placeholder or under 8 characters): "
        "it is not redacted from any output"
    )


@pytest.mark.parametrize("backend", ["openai-chat-completions", "anthropic-chat", "azure-openai-chat-completions"])
def test_a_hosted_backend_whose_key_is_that_short_is_refused(backend: str) -> None:
    variable = credentials.KEY_VARIABLES[backend]
    with pytest.raises(CredentialError, match=f"^{variable}: a key of 5 characters .* cannot be redacted safely"):
        refuse_short_key(backend, {variable: "ab-12"})
    assert refuse_short_key(backend, {variable: KEY}) is None
    assert refuse_short_key("hf", {}) is None


def test_a_real_key_is_redacted_in_values_only_never_in_keys_or_names() -> None:
    document = {**RESULTS, "samples": [{"filter": "none", "metrics": ["s_comm"], "resps": [[f"echo {KEY}"]]}]}
    clean = Redactor({KEY: "OPENAI_API_KEY"}).json(document)
    assert clean["samples"][0]["resps"] == [["echo [redacted OPENAI_API_KEY]"]]
    assert {k: v for k, v in clean.items() if k != "samples"} == {k: v for k, v in RESULTS.items() if k != "samples"}
    text = json.dumps(clean)
    assert KEY not in text and "s_comm,none" in text and "n-samples" in text


def test_model_list_env_values_are_secrets_only_when_named_or_declared(
    registered: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    env = {
        "LANG": "C",
        "OMP_NUM_THREADS": "4",
        "SERVICE_URL": "http://internal:8080/v1",
        "GATEWAY_API_KEY": KEY,
        "MY_GATEWAY": "gw-secret-value-1",
        "EMPTY_TOKEN": "-",
        credentials.SECRET_NAMES_VARIABLE: "MY_GATEWAY",
    }
    out = _env({"env": env}, "models.yaml entry 1 (m)")
    assert registered == {KEY: "GATEWAY_API_KEY", "gw-secret-value-1": "MY_GATEWAY"}
    assert out[credentials.SECRET_NAMES_VARIABLE] == "GATEWAY_API_KEY,MY_GATEWAY"
    assert capsys.readouterr().err.strip() == (
        "models.yaml entry 1 (m): env EMPTY_TOKEN: a placeholder, switch or value under 8 characters, "
        "not treated as a secret (never redacted)"
    )
    assert Redactor.from_environment({}).text("LANG=C SERVICE_URL C") == "LANG=C SERVICE_URL C"


@pytest.mark.parametrize(
    ("url", "published", "left"),
    [
        ("https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions", []),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/", []),
        ("https://gw.example.com/t/tok-9f8e7d6c5b4a/v1", "https://gw.example.com", ["path"]),
        ("https://gw.example.com/v1;key=abc", "https://gw.example.com", ["path"]),
        ("https://gw.example.com/v1#tok-9f8e7d6c5b4a", "https://gw.example.com/v1", ["fragment"]),
        ("https://u:p@gw.example.com:9/v1?x=1", "https://gw.example.com:9/v1", ["query", "user info"]),
        ("http://u:[redacted X]@h:9/v1", "http://h:9/v1", ["user info"]),
    ],
)
def test_a_url_is_published_as_scheme_host_port_and_a_known_api_path(url: str, published: str, left: list[str]) -> None:
    assert public_url_parts(url) == (published, left)
    shown = public_model_args("local-chat-completions", {"model": "m", "base_url": url})
    assert shown.value == {"model": "m", "base_url": published}
    assert shown.left_out == [f"the {part} of model argument 'base_url'" for part in left]


def _b64(prefix: bytes, alphabet: Any = base64.b64encode) -> str:
    return str(alphabet(prefix + KEY.encode()).decode())


ECHOES = {
    "base64": _b64(b""),
    "base64 after Bearer": _b64(b"Bearer "),
    "base64url after one byte": _b64(b"x", base64.urlsafe_b64encode),
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
    "u-escaped": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "percent every byte": "".join(f"%{b:02X}" for b in KEY.encode()),
    "percent": urllib.parse.quote(KEY, safe=""),
    "split by spaces": " ".join(KEY),
    "split by zero-width": "\u200b".join(KEY[:20]) + KEY[20:],
    "cut at the end": KEY[:-5],
    "cut at the start": KEY[6:],
    "a 16-character part": KEY[5:21],
}


@pytest.mark.parametrize("form", list(ECHOES))
def test_an_echoed_key_is_redacted_in_its_common_encodings(form: str) -> None:
    echo = ECHOES[form]
    clean = Redactor({KEY: "OPENAI_API_KEY"}, patterns=False).text(f"the server said: {echo}!")
    assert "[redacted OPENAI_API_KEY]" in clean
    # nothing of the key is left that decodes back: no 16 characters of it, raw or in the echo's encoding
    assert not any(KEY[i : i + 16] in clean for i in range(len(KEY) - 15))
    assert echo not in clean
    if form.startswith("base64"):
        core = echo[12:-12]
        assert core not in clean


def test_redacting_echoes_of_a_megabyte_takes_under_a_second() -> None:
    text = (f"s k - {KEY[:15]} " + KEY[3:19] + " sk-live") * 20_000
    redactor = Redactor({KEY: "OPENAI_API_KEY", KEY[::-1]: "HF_TOKEN"})
    start = time.perf_counter()
    clean = redactor.text(text)
    assert time.perf_counter() - start < 1.0
    assert KEY[3:19] not in clean


def test_gen_kwargs_are_checked_against_the_declared_generation_keys() -> None:
    """Issue 46: by declaration, not by look: any key but a declared generation key, before any call."""
    called: list[Any] = []

    def simple_evaluate(model: str, model_args: str = "", gen_kwargs: str | None = None) -> dict[str, Any]:
        called.append(gen_kwargs)
        return {}

    with pytest.raises(OptionError, match=r"^lm_eval --gen_kwargs: 'api_key' is not a generation key .*allowed: "):
        publishing(simple_evaluate)(model="dummy", gen_kwargs=f"temperature=0,api_key={KEY}")
    with pytest.raises(OptionError, match=r"lm_eval --gen_kwargs: 'extra_headers' is not a generation key"):
        publishing(simple_evaluate)(model="dummy", gen_kwargs={"extra_headers": {"Authorization": f"Bearer {KEY}"}})
    with pytest.raises(OptionError, match=r"'github_token', 'jwt', 'sas_token' are not generation keys"):
        publishing(simple_evaluate)(model="lc-chat", gen_kwargs=f"github_token={KEY},jwt={KEY},sas_token={KEY}")
    with pytest.raises(OptionError, match=r"--gen_kwargs: temperature must be in \[0, inf\], got -1"):
        publishing(simple_evaluate)(model="dummy", gen_kwargs="temperature=-1")
    publishing(simple_evaluate)(model="dummy", gen_kwargs="temperature=0,max_gen_toks=8,until=x,top_p=0.9")
    assert called == ["temperature=0,max_gen_toks=8,until=x,top_p=0.9"]
