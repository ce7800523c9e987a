"""Credentials: what is refused (model arguments, URLs), what is redacted (key environment variables, ...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.credentials import (
    CredentialError,
    Redactor,
    find_credentials,
    is_key_name,
    redact,
    refuse_credentials,
    secret_environment,
)
from logic_consistency.harness_ext.autoload import refuse_credentials_first
from logic_consistency.leaderboard.board.modelid import identify
from logic_consistency.leaderboard.run.runner import cache_key
from logic_consistency.outputs import atomic_write, atomic_write_json, jsonl_chunks

SECRET = "SECRET-7f3c-9a1b2c3d4e5f"


@pytest.mark.parametrize(
    ("model_args", "found"),
    [
        (f"model=m,api_key={SECRET}", ["argument 'api_key'"]),
        (f"model=m,API-KEY={SECRET}", ["argument 'API-KEY'"]),
        ({"model": "m", "token": SECRET}, ["argument 'token'"]),
        (f"pretrained=org/m,openai_api_key={SECRET}", ["argument 'openai_api_key'"]),
        (f"base_url=http://user:{SECRET}@127.0.0.1:9/v1/chat/completions", ["user info in the URL of 'base_url'"]),
        (f"base_url=https://{SECRET}@h/v1", ["user info in the URL of 'base_url'"]),
        (f"base_url=http://h/v1/chat/completions?api-key={SECRET}", ["query parameter 'api-key' in 'base_url'"]),
        (  # issue 46: in a URL, every query parameter but the declared ones (api-version)
            f"base_url=http://h/v1?x=1&Access_Token={SECRET}",
            ["query parameter 'x' in 'base_url'", "query parameter 'Access_Token' in 'base_url'"],
        ),
        (f"base_url=http://h/v1?github_token={SECRET}", ["query parameter 'github_token' in 'base_url'"]),
        ({"model": "m", "jwt": SECRET, "sas_token": SECRET}, ["argument 'jwt'", "argument 'sas_token'"]),
        (
            f"base_url=http://h/v1?sig={SECRET}&password=p",
            ["query parameter 'sig' in 'base_url'", "query parameter 'password' in 'base_url'"],
        ),
        ({"base_url": "http://h/v1", "header": {"Authorization": f"Bearer {SECRET}"}}, ["argument 'header'"]),
        (f"http://u:{SECRET}@h/v1", ["user info in the URL of 'text'"]),
    ],
)
def test_credentials_are_found_by_name_never_by_value(model_args: Any, found: list[str]) -> None:
    assert find_credentials(model_args) == found
    with pytest.raises(CredentialError) as raised:
        refuse_credentials(model_args, "local-chat-completions", where="models.yaml: models[0] (m): model_args")
    message = str(raised.value)
    assert SECRET not in message and "\n" not in message
    assert message.startswith("models.yaml: models[0] (m): model_args: refusing a credential or an undeclared query")
    assert message.endswith("give the key in the OPENAI_API_KEY environment variable")


@pytest.mark.parametrize(
    "model_args",
    [
        "model=m,base_url=http://127.0.0.1:8000/v1/chat/completions,num_concurrent=8,tokenizer_backend=none",
        "pretrained=org/m,revision=abc,dtype=bfloat16,add_bos_token=True,max_length=2048",
        {"model": "m", "max_tokens": 8, "top_logprobs": 5, "base_url": "https://h/v1?api-version=2024-01-01"},
        None,
        "",
    ],
)
def test_ordinary_model_arguments_are_not_credentials(model_args: Any) -> None:
    assert find_credentials(model_args) == []
    refuse_credentials(model_args, "lc-chat", where="x")


def test_where_the_key_belongs_depends_on_the_backend() -> None:
    def message(backend: str | None) -> str:
        with pytest.raises(CredentialError) as raised:
            refuse_credentials("token=x", backend, where="w")
        return str(raised.value)

    assert message("lc-chat").endswith("the OPENAI_API_KEY environment variable")
    assert message("anthropic-chat-completions").endswith("the ANTHROPIC_API_KEY environment variable")
    assert message("hf").endswith("the HF_TOKEN environment variable")
    assert "OPENAI_API_KEY for the OpenAI-compatible backends" in message("some-other-backend")
    assert is_key_name("X-Api-Key") and is_key_name("client_secret") and not is_key_name("add_bos_token")


def test_secret_environment_variables() -> None:
    environ = {
        "OPENAI_API_KEY": SECRET + "-a",
        "HF_TOKEN": SECRET + "-b",
        "MY_SERVICE_SECRET": SECRET + "-c",
        "db_password": SECRET + "-d",
        "AWS_SECRET_ACCESS_KEY": SECRET + "-e",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",  # too short to be a key: never replaced
        "PATH": "/usr/local/bin:/usr/bin",
        "TOKENIZERS_PARALLELISM": "false",
    }
    assert secret_environment(environ) == {
        SECRET + "-a": "OPENAI_API_KEY",
        SECRET + "-b": "HF_TOKEN",
        SECRET + "-c": "MY_SERVICE_SECRET",
        SECRET + "-d": "db_password",
        SECRET + "-e": "AWS_SECRET_ACCESS_KEY",
    }
    text = f"key {SECRET}-a and {SECRET}-b; path /usr/bin; 1 true"
    assert redact(text, environ) == "key [redacted OPENAI_API_KEY] and [redacted HF_TOKEN]; path /usr/bin; 1 true"


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "HF_TOKEN", "GITHUB_TOKEN", "SAS_TOKEN", "GATEWAY_JWT", "id_jwt", "DB_PASSWD", "AUTH", "API-KEY",
     "CLIENT_SECRET", "X_AMZ_SIGNATURE", "PAD_TOKEN", "ADD_BOS_TOKEN", "PATH", "HOME", "TOKENIZERS_PARALLELISM",
     "SSH_AUTH_SOCK", "LANG", "OLDPWD"],
)  # fmt: skip
def test_one_vocabulary_of_key_names_for_variables_arguments_and_urls(name: str) -> None:
    """Issue 46: a variable's name is judged by :func:`is_key_name`, the ``--model_args`` and URL rule."""
    from logic_consistency.credentials import is_secret_name

    assert is_secret_name(name) == is_key_name(name)
    assert bool(secret_environment({name: SECRET})) == is_key_name(name)


def test_the_shell_working_directory_is_no_secret_but_a_placeholder_key_is_none_either() -> None:
    """``PWD`` (a password as an argument, the working directory as a variable) and placeholders are no secrets."""
    from logic_consistency.credentials import NOT_KEY_VARIABLES, SENT_VARIABLES, is_secret_name

    assert is_key_name("pwd") and not is_secret_name("PWD") and NOT_KEY_VARIABLES == {"PWD"}
    assert all(is_secret_name(name) for name in SENT_VARIABLES)
    environ = {"PWD": "/home/someone/work", "GATEWAY_TOKEN": "EMPTY", "ID_JWT": "none", "OMP_NUM_THREADS": "1"}
    assert secret_environment(environ) == {}


def test_redactor_text_and_json() -> None:
    line = (
        f"$ lm_eval --model_args base_url=http://u:{SECRET}@h:8/v1?api-key={SECRET}&x=1,api_key={SECRET},model=m "
        f"{{'token': '{SECRET}', 'model': 'm'}} Authorization: Bearer {SECRET}"
    )
    redactor = Redactor()
    clean = redactor.text(line)
    assert SECRET not in clean
    assert "base_url=http://REDACTED@h:8/v1?api-key=REDACTED&x=1,api_key=REDACTED,model=m" in clean
    assert "'token': 'REDACTED', 'model': 'm'" in clean and "Bearer REDACTED" in clean
    document = {"config": {"model_args": f"base_url=http://h/v1?token={SECRET}"}, "metadata": {"api_key": SECRET}}
    redactor = Redactor()
    assert SECRET not in json.dumps(redactor.json(document))
    assert redactor.found == ["config.model_args: 'token'", "metadata.api_key: value"]
    assert Redactor().json({"n": 3, "add_bos_token": True, "text": "plain"}) == {
        "n": 3,
        "add_bos_token": True,
        "text": "plain",
    }


def test_the_suite_writer_never_writes_a_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``outputs.json_chunks`` / ``jsonl_chunks`` (every JSON / JSONL file the suite writes) redact them."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    document = {"a": [SECRET, {"b": f"x{SECRET}y"}], "quote": f'"{SECRET}"\n', "n": 2}
    # issue 39: keys are never rewritten (they are field and metric names); a key holding the key is refused
    with pytest.raises(CredentialError, match=r"^a\[1\]\.x.*: a JSON key holds the value of OPENAI_API_KEY"):
        atomic_write_json(tmp_path / "refused.json", {"a": [1, {f"x{SECRET}": 1}]})
    assert not (tmp_path / "refused.json").exists()
    atomic_write_json(tmp_path / "x.json", document)
    atomic_write(tmp_path / "x.jsonl", jsonl_chunks([document, {"c": SECRET}]))
    for name in ("x.json", "x.jsonl"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert SECRET not in text and "[redacted OPENAI_API_KEY]" in text
    assert json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))["n"] == 2


def test_row_identity_and_cache_key_ignore_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rotating a key keeps the row's model fields and the request cache (defence: the build refuses them)."""
    first_args = f"model=judge,base_url=http://u:{SECRET}@h/v1?api-key={SECRET},api_key=A1"
    second_args = f"model=judge,base_url=http://u:{SECRET}-rotated@h/v1?api-key={SECRET}-rotated,api_key=B2"
    first = identify("local-chat-completions", first_args)
    second = identify("local-chat-completions", second_args)
    assert SECRET not in json.dumps(first.as_json())
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    keys = [cache_key(first, first_args)]
    monkeypatch.setenv("OPENAI_API_KEY", f"{SECRET}-rotated")
    keys.append(cache_key(second, second_args))
    assert first == second and keys[0] == keys[1]  # the key's value is replaced by its name, a key argument left out
    # issue 54: the cache follows the private identity: another path of the same gateway is another cache
    gateway = [first_args.replace("/v1?", f"/deployment-{name}/v1?") for name in "ab"]
    public = [identify("local-chat-completions", args) for args in gateway]
    assert public[0] == public[1]  # the public projection shows no deployment's path
    assert cache_key(public[0], gateway[0]) != cache_key(public[1], gateway[1])
    # the allowlist: base_url as scheme, host, port and path where declared public (issue 54: else a label);
    # api_key is not a public argument
    assert first.model_args == "model=judge,base_url=private:judge"
    declared = identify("local-chat-completions", f"model=judge,base_url=http://u:{SECRET}@h/v1", public_endpoint=True)
    assert declared.model_args == "model=judge,base_url=http://h/v1"


def test_plain_lm_eval_refuses_credentials_before_the_model_is_built() -> None:
    """The autoload hook's wrapper of ``simple_evaluate`` (run by ``lm_eval``; see test_secrets for the command)."""
    calls: list[Any] = []

    def simple_evaluate(model: Any = None, model_args: Any = None, metadata: Any = None, **_: Any) -> str:
        calls.append(model)
        return "ran"

    guarded = refuse_credentials_first(simple_evaluate)
    with pytest.raises(CredentialError, match=r"^lm_eval --model_args: .*OPENAI_API_KEY"):
        guarded("local-chat-completions", f"base_url=http://u:{SECRET}@127.0.0.1:9/v1/chat/completions")
    with pytest.raises(CredentialError, match=r"^lm_eval --metadata: .*'password'"):
        guarded(model="hf", model_args="pretrained=x", metadata={"password": SECRET})
    assert calls == []
    assert guarded(model="dummy", model_args="") == "ran" and guarded(model=object()) == "ran"


@pytest.mark.parametrize(
    "name",
    ["accessToken", "authToken", "apiToken", "secretKey", "clientSecret", "private_token", "X-Amz-Signature"]
    + ["X-Amz-Security-Token", "api%2Dkey", "API%2dKEY", "appkey", "ak", "AK", "x-amz-credential"],
)
def test_key_names_in_any_case_and_encoding(name: str) -> None:
    """Issue 29: each of these query names was accepted and written."""
    assert is_key_name(name)
    url = f"base_url=http://127.0.0.1:9/v1/chat/completions?api-version=1&{name}={SECRET}"
    assert find_credentials(url) == [f"query parameter {name!r} in 'base_url'"]
    assert SECRET not in Redactor().text(url)


def test_credentials_at_any_depth_of_metadata_and_in_lists() -> None:
    metadata = {"gateway": {"api_key": SECRET}, "headers_list": [["Authorization", f"Bearer {SECRET}"]], "seed": 3}
    assert find_credentials(metadata) == ["argument 'gateway.api_key'", "argument 'Authorization' in 'headers_list[0]'"]
    assert SECRET not in json.dumps(Redactor().json(metadata))
    assert Redactor().json({"pairs": [["model", "m"]], "n": [1, 2]}) == {"pairs": [["model", "m"]], "n": [1, 2]}


@pytest.mark.parametrize("length", [8, 12, 200])
def test_the_key_a_backend_sends_is_redacted_from_8_characters(length: int, tmp_path: Path) -> None:
    """Issue 39 changed "at any length": a key under 8 characters is no secret (see test_secret_model.py)."""
    key = ("Zk4" * 70)[:length]
    environ = {"OPENAI_API_KEY": key, "MY_SERVICE_TOKEN": "short7c"}  # key-like only by name: from 8 characters
    assert secret_environment(environ) == {key: "OPENAI_API_KEY"}
    assert key not in redact(f"echo {key}!", environ)
    # JSON: strings only, so a key never rewrites a number, a JSON key or the syntax
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", key)
        atomic_write_json(tmp_path / "x.json", {"text": f"a {key} b", "n": 123, "list": [key]})
        document = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert document["n"] == 123 and key not in json.dumps(document).replace('"n": 123', "")


def test_a_short_key_never_rewrites_another_secrets_label() -> None:
    """Placeholders first: a key ``redacted`` does not turn ``[redacted OPENAI_API_KEY]`` into ``[[redacted ...] ...]``."""
    clean = Redactor({"redacted": "HF_TOKEN", "long-secret": "OPENAI_API_KEY"}, patterns=False).text(
        "x long-secret redacted"
    )
    assert clean == "x [redacted OPENAI_API_KEY] [redacted HF_TOKEN]"


def test_redacting_twice_changes_nothing() -> None:
    """A secret that is another secret's variable name (a model list's ``env`` value naming a variable)
    leaves the labels of the first pass as they are: ``[redacted KEY]``, never ``[redacted [redacted ECHO]]``."""
    redactor = Redactor({"sk-long-1": "MY_API_KEY", "MY_API_KEY": "ECHO"})
    once = redactor.text("key=sk-long-1 and MY_API_KEY and api_key=sk-long-1")
    assert "sk-long-1" not in once and once.count("[redacted MY_API_KEY]") == 2 and "[redacted ECHO]" in once
    assert redactor.text(once) == once
    assert Redactor({"sk-long-1": "MY_API_KEY", "MY_API_KEY": "ECHO"}).text(once) == once


def test_registered_and_model_list_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency import credentials

    monkeypatch.setattr(credentials, "_REGISTERED", {})
    credentials.register_header({"Authorization": "Bearer Ab1-long-key", "X-Org": "org-9-long"}, "lc-chat")
    credentials.register_header({"Authorization": "Bearer "}, "lc-chat")  # no key: nothing (never "Bearer")
    credentials.register_header({"Authorization": "Bearer -"}, "lc-chat")  # a placeholder: no secret (issue 39)
    assert Redactor.from_environment({}).secrets == {"Ab1-long-key": "lc-chat", "org-9-long": "lc-chat"}
    named = {credentials.SECRET_NAMES_VARIABLE: "GATEWAY,THREADS", "GATEWAY": "gw1-long-key", "THREADS": "4"}
    assert secret_environment(named) == {"gw1-long-key": "GATEWAY"}  # a number is a switch, not a key


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "n" * 120_000,
        ("abc=" + "z" * 100) * 10_000,
        "?accessToken=q&" * 70_000,
        ("http://" + "a" * 1000) * 1000,
        ('"' + "a" * 10) * 90_000,
        "Bearer " * 150_000,
        f"x {SECRET} y Zk4-long-9 " * 40_000,
        "a=" * 500_000,
        "'a': '" * 150_000,
    ],
    ids=["run", "name", "pairs", "query", "urls", "quotes", "bearer", "secrets", "equals", "quoted"],
)
def test_redaction_of_a_megabyte_takes_under_a_second(text: str) -> None:
    """Issue 29: a 20,000-character run took 5.8 s (quadratic); a 120,000-character name never ended."""
    import time

    redactor = Redactor({SECRET: "OPENAI_API_KEY", "Zk4-long-9": "HF_TOKEN"})
    start = time.perf_counter()
    clean = redactor.text(text)
    assert time.perf_counter() - start < 1.0
    assert SECRET not in clean and "Zk4-long-9" not in clean


def test_a_direct_run_logs_and_records_only_public_model_arguments(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``simple_evaluate`` wrapper: lm-eval's log line and results show the allowlist, and one line says what was left out."""
    import logging

    from lm_eval.utils import simple_parse_args_string

    model_args = "model=judge,base_url=http://127.0.0.1:9/v1/chat/completions?api-version=acme#frag,organization=org-7"
    metadata = {"seed": 3, "gateway": {"url": "http://internal"}, "max_items": 5}

    def simple_evaluate(model: Any = None, model_args: Any = None, metadata: Any = None, **_: Any) -> dict[str, Any]:
        logging.getLogger("lm_eval.evaluator").info(
            "Initializing %s model, with arguments: %s", model, simple_parse_args_string(model_args)
        )
        # a task file's own metadata (--include_path): only declared keys are written (issue 46)
        task_metadata = {**simple_parse_args_string(model_args), **metadata, "version": 1.0, "jwt": SECRET}
        return {"config": {"model_args": model_args}, "configs": {"t": {"metadata": task_metadata}}}

    with caplog.at_level(logging.INFO, logger="lm_eval.evaluator"):
        results = refuse_credentials_first(simple_evaluate)("local-chat-completions", model_args, metadata=metadata)
    public = "model=judge,base_url=http://127.0.0.1:9/v1/chat/completions"
    assert results["config"]["model_args"] == public
    assert results["configs"]["t"]["metadata"] == {
        "model": "judge",
        "base_url": "http://127.0.0.1:9/v1/chat/completions",
        "seed": 3,
        "max_items": 5,
        "version": 1.0,
    }
    (line,) = [record.getMessage() for record in caplog.records if "Initializing" in record.getMessage()]
    assert "acme" not in line and "org-7" not in line and "'base_url': 'http://127.0.0.1:9/v1/chat/completions'" in line
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "not recorded in the results (not declared public): the query of model argument 'base_url', "
            "the fragment of model argument 'base_url', model argument 'organization', metadata 'gateway', "
            "task metadata 'jwt'"
            # issue 39: a URL's left-out parts are named in the same line
        )
    )
