"""Bad-input cases of credentials: a key given where it would be written (a model list's model
arguments, metadata or extra arguments; ``lm_eval --model_args``) is refused with one line naming the
entry and where the key belongs, never the key itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable

from logic_consistency.credentials import CredentialError
from logic_consistency.harness_ext.autoload import refuse_credentials_first
from logic_consistency.leaderboard.modellist import load_model_list

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


def _simple_evaluate(model: Any = None, model_args: Any = None, **_: Any) -> None:
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
