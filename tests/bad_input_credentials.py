"""Bad-input cases of credentials: a key given where it would be written (a model list's model
arguments, metadata or extra arguments; ``lm_eval --model_args``) is refused with one line naming the
entry and where the key belongs, never the key itself."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable

from logic_consistency.credentials import CredentialError
from logic_consistency.harness_ext.autoload import refuse_credentials_first
from logic_consistency.leaderboard.run.modellist import load_model_list
from logic_consistency.options import OptionError
from logic_consistency.secret_forms import is_placeholder

CASES = CaseTable()
SECRET = "SECRET-7f3c-bad-input"


def _never_echoed(call: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """``call``, checked to raise without the secret in its message."""

    def run(tmp: Path) -> Any:
        try:
            return call(tmp)
        except Exception as error:
            assert SECRET not in str(error), str(error)
            raise

    return run


def _model_list(entry: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        path = tmp / "models.yaml"
        path.write_text(f"models:\n  - {{name: judge, {entry.format(s=SECRET)}}}\n", encoding="utf-8")
        return load_model_list(path)

    return _never_echoed(run)


for _name, _entry, _expect in [
    ("api_key model arg", "model: lc-chat, model_args: 'model=m,api_key={s}'", ("'api_key'", "OPENAI_API_KEY")),
    ("token in a model_args mapping", "model: hf, model_args: {{pretrained: m, token: {s}}}", ("'token'", "HF_TOKEN")),
    (
        "user info in base_url",
        "model: local-chat-completions, model_args: 'base_url=http://u:{s}@127.0.0.1:9/v1/chat/completions'",
        ("user info in the URL of 'base_url'", "OPENAI_API_KEY"),
    ),
    (
        "key query parameter in base_url",
        "model: lc-chat, model_args: 'base_url=http://127.0.0.1:9/v1/chat/completions?API-Key={s}'",
        ("query parameter 'API-Key'", "OPENAI_API_KEY"),
    ),
    ("password in metadata", "model: dummy, metadata: {{password: {s}}}", ("metadata", "'password'")),
    (
        "api_key in extra_args",
        "model: hf, extra_args: ['--wandb_args', 'api_key={s}']",
        ("extra_args", "WANDB_API_KEY"),
    ),
]:
    CASES.add(
        f"model list with a credential ({_name})",
        _model_list(_entry),
        "models.yaml",
        "models[0] (judge)",
        "refusing a credential",
        *_expect,
        error=CredentialError,
    )

CASES.add(
    "model list env that is not a mapping of text (values never echoed)",
    _model_list("model: lc-chat, env: {{OPENAI_API_KEY: [{s}]}}"),
    "'env'",
    "OPENAI_API_KEY",
    error=ValueError,
)


def _simple_evaluate(
    model: Any = None, model_args: Any = None, metadata: Any = None, gen_kwargs: Any = None, **_: Any
) -> None:
    raise AssertionError("the model was built although a credential was refused")


CASES.add(
    "lm_eval --model_args with a key in base_url",
    _never_echoed(
        lambda _: refuse_credentials_first(_simple_evaluate)(
            model="local-chat-completions", model_args=f"model=m,base_url=http://127.0.0.1:9/v1?token={SECRET}"
        )
    ),
    "lm_eval --model_args",
    "query parameter 'token'",
    "OPENAI_API_KEY",
    error=CredentialError,
)


# ----------------------------------------------------------------------------- issue 29: lost and silent cases
for _query in ("accessToken", "authToken", "apiToken", "secretKey", "clientSecret", "private_token"):
    CASES.add(
        f"model list with a credential (query name {_query} in base_url)",
        _model_list(f"model: lc-chat, model_args: 'base_url=http://127.0.0.1:9/v1/chat/completions?{_query}={{s}}'"),
        "models[0] (judge)",
        f"query parameter {_query!r}",
        "OPENAI_API_KEY",
        error=CredentialError,
    )
for _query in ("X-Amz-Signature", "X-Amz-Security-Token", "api%2Dkey", "appkey", "ak"):
    CASES.add(
        f"lm_eval --model_args with a key in base_url (query name {_query})",
        _never_echoed(
            lambda _, q=_query: refuse_credentials_first(_simple_evaluate)(
                model="local-chat-completions", model_args=f"model=m,base_url=http://127.0.0.1:9/v1?{q}={SECRET}"
            )
        ),
        "lm_eval --model_args",
        f"query parameter {_query!r}",
        error=CredentialError,
    )
CASES.add(
    "lm_eval --metadata with a key one level down",
    _never_echoed(
        lambda _: refuse_credentials_first(_simple_evaluate)(
            model="dummy", model_args="", metadata={"gateway": {"api_key": SECRET}}
        )
    ),
    "lm_eval --metadata",
    "'gateway.api_key'",
    error=CredentialError,
)
CASES.add(
    "lm_eval --gen_kwargs with a credential (lm-eval prints them)",
    _never_echoed(
        lambda _: refuse_credentials_first(_simple_evaluate)(
            model="dummy", gen_kwargs=f"temperature=0,api_key={SECRET}"
        )
    ),
    "lm_eval --gen_kwargs",
    "'api_key' is not a generation key",
    "allowed: do_sample",
    error=OptionError,
)
# issue 46: keys by declaration, not by look: any undeclared --gen_kwargs key, before any call
CASES.add(
    "lm_eval --gen_kwargs github_token, jwt, sas_token (undeclared generation keys)",
    _never_echoed(
        lambda _: refuse_credentials_first(_simple_evaluate)(
            model="lc-chat", gen_kwargs=f"github_token={SECRET},jwt={SECRET},sas_token={SECRET}"
        )
    ),
    "lm_eval --gen_kwargs: 'github_token', 'jwt', 'sas_token' are not generation keys",
    "allowed: do_sample",
    "top_p",
    error=OptionError,
)
CASES.add(
    "lm_eval --gen_kwargs as JSON with an undeclared key",
    _never_echoed(
        lambda _: refuse_credentials_first(_simple_evaluate)(model="hf", gen_kwargs=f'{{"jwt": "{SECRET}"}}')
    ),
    "'jwt' is not a generation key",
    error=OptionError,
)


def _build_gen_kwargs(tmp: Path) -> Any:
    from logic_consistency.leaderboard.run.preflight import check_extra_args

    (spec,) = _model_list("model: dummy, extra_args: ['--gen_kwargs', 'trace_id={s}']")(tmp)
    return check_extra_args(spec)


CASES.add(
    "model list extra_args --gen_kwargs with an undeclared key (before any run)",
    _never_echoed(_build_gen_kwargs),
    "models[0] (judge): extra_args: --gen_kwargs",
    "'trace_id' is not a generation key",
    "allowed:",
    error=ValueError,
)
for _query in ("github_token", "jwt", "sas_token", "tenant"):  # only declared query parameters (api-version)
    CASES.add(
        f"lm_eval --model_args with an undeclared query parameter ?{_query}= in base_url",
        _never_echoed(
            lambda _, q=_query: refuse_credentials_first(_simple_evaluate)(
                model="lc-chat", model_args=f"model=m,base_url=http://127.0.0.1:9/v1/chat/completions?{q}={SECRET}"
            )
        ),
        "lm_eval --model_args",
        f"query parameter {_query!r} in 'base_url'",
        "takes only the query parameters api-version",
        error=CredentialError,
    )
CASES.add(
    "model list with ?github_token= in base_url",
    _model_list("model: lc-chat, model_args: 'base_url=http://127.0.0.1:9/v1/chat/completions?github_token={s}'"),
    "models[0] (judge)",
    "query parameter 'github_token'",
    error=CredentialError,
)


def _hosted_with_placeholder(_: Path) -> Any:
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "-"
    try:
        return refuse_credentials_first(_simple_evaluate)(model="openai-chat-completions", model_args="model=m")
    finally:
        if saved is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = saved


CASES.add(
    "a hosted backend whose key is a placeholder (cannot be redacted safely)",
    _hosted_with_placeholder,
    "OPENAI_API_KEY: a key of 1 characters",
    "openai-chat-completions needs its real key",
    error=CredentialError,
)
CASES.add(
    "model list metadata with a key inside a list",
    _model_list("model: dummy, metadata: {{extra: [[Authorization, 'Bearer {s}']]}}"),
    "models[0] (judge): metadata",
    "'Authorization' in 'extra[0]'",
    error=CredentialError,
)


def _echoed(
    body: bytes,
    content_type: str,
    length: int,
    *,
    split: bool = False,
    entities: bool = False,
    variable: str = "OPENAI_API_KEY",
    key: str | None = None,
) -> Callable[[Path], Any]:
    """An endpoint's error body that echoes the key (of ``length`` characters) in ``variable``: as it is,
    split by a JSON newline (``split``) or as HTML entities (``entities``)."""
    from logic_consistency.harness_ext.chat.reply import checked_reply

    key = (SECRET * 20)[:length] if key is None else key
    echoed = key[:4] + "\\n" + key[4:] if split else "".join(f"&#{ord(char)};" for char in key) if entities else key

    def run(_: Path) -> Any:
        saved = os.environ.get(variable)
        os.environ[variable] = key
        try:
            text = body.replace(b"KEY", echoed.encode())
            checked_reply(text, url="http://127.0.0.1:9/v1", content_type=content_type)
        except Exception as error:
            if not is_placeholder(key):
                assert key not in str(error) and key[:4] not in str(error) and key[-4:] not in str(error), str(error)
            raise
        finally:
            if saved is None:
                del os.environ[variable]
            else:
                os.environ[variable] = saved

    return run


for _length in (8, 162):  # issue 39: a key under 8 characters is no secret (refused where it is a hosted one's)
    CASES.add(
        f"endpoint echoing a {_length}-character key in a JSON error body",
        _echoed(b'{"error": {"message": "Incorrect API key provided: KEY"}}', "application/json", _length),
        "base_url=http://127.0.0.1:9 answered with an error",
        "[redacted OPENAI_API_KEY]",
    )
    CASES.add(  # issue 46: the body printed as its repr, the newline in the key as two characters
        f"endpoint echoing a {_length}-character key split by a newline in a JSON error body",
        _echoed(b'{"error": {"message": "Incorrect API key: KEY"}}', "application/json", _length, split=True),
        "answered with an error",
        "[redacted OPENAI_API_KEY]",
    )
    CASES.add(  # issue 46: an HTML page printing the key as entities
        f"endpoint echoing a {_length}-character key as HTML entities",
        _echoed(b"<html>KEY is not valid</html>", "text/html", _length, entities=True),
        "not JSON",
        "[redacted OPENAI_API_KEY]",
    )
    CASES.add(
        f"endpoint echoing a {_length}-character key in an HTML page",
        _echoed(b"<html>KEY is not valid</html>", "text/html", _length),
        "not JSON",
        "[redacted OPENAI_API_KEY]",
    )

# issue 46 (leftover): one credential vocabulary (credentials.is_key_name) for environment variables, arguments
# and URLs: a variable named like a key-like argument is a secret (the old variable regex knew no ``*_JWT``)
for _variable in ("GATEWAY_JWT", "AZURE_SAS_TOKEN", "DB_PASSWORD", "CLIENT_SECRET"):
    CASES.add(
        f"endpoint echoing the value of {_variable} (named like a key-like argument) in a JSON error body",
        _echoed(b'{"error": {"message": "bad credential: KEY"}}', "application/json", 24, variable=_variable),
        "answered with an error",
        f"[redacted {_variable}]",
    )
CASES.add(  # a placeholder stays no secret, whatever its variable's name
    "endpoint echoing a placeholder key variable (GATEWAY_TOKEN=EMPTY): not redacted",
    _echoed(
        b'{"error": {"message": "bad credential: KEY"}}', "application/json", 5, variable="GATEWAY_TOKEN", key="EMPTY"
    ),
    "answered with an error",
    "bad credential: EMPTY",
)


# ----------------------------------------------------------------------------- issue 54, manual pass
class _Exited(Exception):
    """``lm_eval`` ended with an exit status: the status and the last line it wrote to stderr."""


def _lm_eval_cli(*argv: str) -> Callable[[Path], Any]:
    """``lm_eval ARGV`` in this process (the console entry point the hook wraps) on the toy task: its exit
    raised as :class:`_Exited` with one line; a traceback (any other exception) fails the case."""

    def run(_: Path) -> Any:
        from lm_eval.__main__ import cli_evaluate

        tasks = ["--tasks", "toy_pairwise", "--include_path", str(Path(__file__).parent / "fixtures" / "tasks")]
        err, saved = io.StringIO(), sys.argv
        sys.argv = ["lm_eval", "--model", "lc-chat", *argv, *tasks, "--limit", "1", "--apply_chat_template"]
        try:
            with contextlib.redirect_stderr(err):
                cli_evaluate()
        except SystemExit as exited:
            last = (err.getvalue().strip().splitlines() or [""])[-1]
            raise _Exited(f"exit status {exited.code}: {last}") from None
        finally:
            sys.argv = saved

    return _never_echoed(run)


_URL = "http://127.0.0.1:9/v1/chat/completions"
for _name, _argv, _expect in [
    ("a query parameter", ["--model_args", f"model=m,base_url={_URL}?tenant={SECRET}"], "query parameter 'tenant'"),
    ("a key-like argument", ["--model_args", f"model=m,base_url={_URL},api_key={SECRET}"], "argument 'api_key'"),
    ("user info", ["--model_args", f"model=m,base_url=http://u:{SECRET}@127.0.0.1:9/v1"], "user info in the URL"),
    (
        "a key in --metadata one level down",
        ["--model_args", f"model=m,base_url={_URL}", "--metadata", f'{{"gateway": {{"api_key": "{SECRET}"}}}}'],
        "'gateway.api_key'",
    ),
]:
    # a direct run refusing a credential ended in a 30-line traceback, exit status 1, not one line and 2
    CASES.add(
        f"lm_eval command line with a credential ({_name}): one line, exit status 2",
        _lm_eval_cli(*_argv),
        "exit status 2: lm_eval: error: lm_eval --",
        "refusing a credential",
        _expect,
        error=_Exited,
    )
