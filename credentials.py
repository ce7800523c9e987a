"""Credentials are never written: found and refused in configuration, redacted from every output.

* **Refused** where a credential would be written as configuration (lm-eval records
  ``--model_args`` in every results file): a key-like argument name (:func:`is_key_name`), user
  info in a URL or a key-like query parameter. :func:`refuse_credentials` raises
  :class:`CredentialError` naming the environment variable the backend reads (:func:`key_variable`).
* **Redacted** everywhere the suite writes (:class:`Redactor`): the values of the key environment
  variables (:func:`secret_environment`), URL user info, key-like query parameters, ``Bearer``
  tokens and key-like ``name=value`` pairs. See docs/api-judges.md, "Where the key belongs".

Neutral like :mod:`logic_consistency.common`: imports nothing of the suite, and no lm-eval. (Not
named ``secrets``: at the repository root that name would shadow the standard library's module.)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "CredentialError",
    "Redactor",
    "find_credentials",
    "is_key_name",
    "key_variable",
    "redact",
    "refuse_credentials",
    "secret_environment",
]

#: What a redacted credential is replaced with (an environment variable's value: ``[redacted NAME]``).
REDACTED = "REDACTED"
#: Environment values shorter than this are not treated as secrets (``1``, ``true``: real keys are longer,
#: and replacing a short common value everywhere would corrupt the outputs).
MIN_SECRET_LENGTH = 8

#: Key-like names (lower case, ``-`` read as ``_``) of model arguments and URL query parameters.
KEY_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "key",
        "token",
        "access_token",
        "api_token",
        "auth_token",
        "bearer_token",
        "hf_token",
        "id_token",
        "refresh_token",
        "session_token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "authorization",
        "bearer",
        "credential",
        "credentials",
        "sig",
        "signature",
        "code",  # Azure Functions' ?code=<key>
        "header",  # lm-eval's API models send a ``header`` mapping instead of ``Authorization: Bearer $KEY``
        "headers",
    }
)
#: Name endings that make any model argument or query parameter key-like (``openai_api_key``, ...).
#: Not a bare ``_token``: ``add_bos_token`` is a model argument, not a credential.
KEY_SUFFIXES = ("_key", "_apikey", "_secret", "_password", "_passwd", "_access_token", "_api_token", "_auth_token")
#: Environment variable names whose values are secrets (case-insensitive).
SECRET_VARIABLE = re.compile(
    r"^(?:OPENAI_API_KEY|ANTHROPIC_API_KEY|HF_TOKEN|HUGGING_FACE_HUB_TOKEN|"
    r"(?:\w*_)?(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD))$",
    re.IGNORECASE,
)

#: Where each backend reads its key (lm-eval's API models and the suite's ``lc-chat``).
KEY_VARIABLES = {
    "lc-chat": "OPENAI_API_KEY",
    "local-chat-completions": "OPENAI_API_KEY",
    "local-completions": "OPENAI_API_KEY",
    "openai-chat-completions": "OPENAI_API_KEY",
    "openai-completions": "OPENAI_API_KEY",
    "anthropic-chat": "ANTHROPIC_API_KEY",
    "anthropic-chat-completions": "ANTHROPIC_API_KEY",
    "anthropic-completions": "ANTHROPIC_API_KEY",
    "azure-openai-chat-completions": "AZURE_OPENAI_API_KEY",
    "textsynth": "TEXTSYNTH_API_SECRET_KEY",
    "hf": "HF_TOKEN",
    "lc-hf": "HF_TOKEN",
    "lc-embedded": "HF_TOKEN",
    "vllm": "HF_TOKEN",
}

_NAME = r"[A-Za-z][A-Za-z0-9_.-]*"
#: ``scheme://user:pass@`` (the user info up to the ``@`` before the host).
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/\s@?#\"',]+)@")
#: ``?name=value`` / ``&name=value`` / ``;name=value`` in a URL.
_QUERY = re.compile(rf"(?P<head>[?&;](?P<name>{_NAME})=)(?P<value>[^&#\s\"',;]+)")
#: ``name=value`` in lm-eval's ``k=v,k=v`` text (a logged command line, an error message).
_PAIR = re.compile(rf"(?P<head>(?:^|(?<=[\s,{{(]))(?P<name>{_NAME})=)(?P<value>[^,\s\"'}})]+)")
#: ``"name": "value"`` / ``'name': 'value'`` (JSON, a logged Python dict).
_QUOTED = re.compile(rf"(?P<head>(?P<q>[\"'])(?P<name>{_NAME})(?P=q)\s*:\s*(?P<q2>[\"']))(?P<value>[^\"']*)(?P=q2)")
#: ``Bearer <token>`` (an ``Authorization`` header in an error message or a log).
_BEARER = re.compile(r"(?P<head>\bBearer\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})", re.IGNORECASE)


class CredentialError(ValueError):
    """A credential given where it would be written (a model argument, a URL): one line, never the value."""


def is_key_name(name: str) -> bool:
    """Whether a model argument or query parameter name is key-like (``api_key``, ``X-Api-Key``, ``token``)."""
    normal = name.strip().lower().replace("-", "_")
    return normal in KEY_NAMES or normal.endswith(KEY_SUFFIXES)


def key_variable(backend: str | None) -> str:
    """Where the key of ``backend`` belongs: the environment variable it reads, in words."""
    variable = KEY_VARIABLES.get(backend or "")
    if variable is not None:
        return f"the {variable} environment variable"
    return (
        "the environment variable the backend or tool reads (OPENAI_API_KEY for the OpenAI-compatible "
        "backends, HF_TOKEN for the Hugging Face hub, WANDB_API_KEY for Weights & Biases)"
    )


def _in_url(name: str, value: str) -> list[str]:
    found = []
    if _USERINFO.search(value):
        found.append(f"user info in the URL of {name!r}")
    for match in _QUERY.finditer(value):
        if is_key_name(match["name"]):
            found.append(f"query parameter {match['name']!r} in {name!r}")
    return found


def _pairs(model_args: str | Mapping[str, Any]) -> list[tuple[str, str]]:
    if isinstance(model_args, Mapping):
        return [
            (str(key), value if isinstance(value, str) else json.dumps(value, default=str))
            for key, value in model_args.items()
        ]
    pairs = []
    for part in str(model_args).split(","):
        name, sep, value = part.partition("=")
        pairs.append((name.strip(), value.strip()) if sep else ("", part))
    return pairs


def find_credentials(model_args: str | Mapping[str, Any] | None) -> list[str]:
    """Where ``model_args`` (lm-eval's ``k=v,...`` text or a mapping) holds a credential, in words.

    Returns:
        One entry per finding (``"argument 'api_key'"``, ``"user info in the URL of
        'base_url'"``, ``"query parameter 'api-key' in 'base_url'"``), never a value; empty if none.
    """
    if model_args is None:
        return []
    found: list[str] = []
    for name, value in _pairs(model_args):
        if name and is_key_name(name):
            found.append(f"argument {name!r}")
        else:
            found.extend(_in_url(name or "text", value))
    return found


def refuse_credentials(model_args: str | Mapping[str, Any] | None, backend: str | None, *, where: str) -> None:
    """Raise :class:`CredentialError` if ``model_args`` hold a credential (:func:`find_credentials`).

    The one-line message names ``where``, what was found (never the value) and where the key belongs.
    """
    found = find_credentials(model_args)
    if found:
        raise CredentialError(
            f"{where}: refusing a credential ({'; '.join(found)}): it would be written to every results "
            f"file, log and board; remove it and give the key in {key_variable(backend)}"
        )


def secret_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: variable name}`` of the key environment variables (see the module docstring)."""
    source = os.environ if environ is None else environ
    return {
        value: name
        for name, value in source.items()
        if SECRET_VARIABLE.match(name) and isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH
    }


def _forms(value: str) -> set[str]:
    """A secret as written raw and inside JSON strings (escaped, with and without ``ensure_ascii``)."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


@dataclass
class Redactor:
    """Replaces credentials in text and JSON values; remembers what it replaced (names, never values).

    Attributes:
        secrets: ``{secret value: label}`` replaced literally (the key environment variables).
        patterns: Also redact URL user info, key-like query parameters and pairs, and ``Bearer`` tokens.
        found: What was redacted so far (``"OPENAI_API_KEY"``, ``"query parameter 'api-key'"``, ...),
            with the JSON path where known.
    """

    secrets: dict[str, str] = field(default_factory=dict)
    patterns: bool = True
    found: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        forms = {form: name for value, name in self.secrets.items() for form in _forms(value) if form}
        self._literals = sorted(forms.items(), key=lambda item: -len(item[0]))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, *, patterns: bool = True) -> Redactor:
        """A redactor of the key environment variables of ``environ`` (default: this process's)."""
        return cls(secret_environment(environ), patterns)

    def _note(self, what: str, where: str) -> None:
        entry = f"{where}: {what}" if where else what
        if entry not in self.found:
            self.found.append(entry)

    def text(self, text: str, where: str = "") -> str:
        """``text`` with every credential replaced."""
        for value, name in self._literals:
            if value in text:
                text = text.replace(value, f"[redacted {name}]")
                self._note(name, where)
        if not self.patterns:
            return text
        return self._patterns(text, where)

    def _patterns(self, text: str, where: str) -> str:
        def userinfo(match: re.Match[str]) -> str:
            self._note("URL user info", where)
            return f"{match['head']}{REDACTED}@"

        def named(match: re.Match[str]) -> str:
            if not is_key_name(match["name"]) or match["value"] in ("", REDACTED):
                return match.group(0)
            self._note(repr(match["name"]), where)
            tail = match.group(0)[match.end("value") - match.start(0) :]
            return f"{match['head']}{REDACTED}{tail}"

        def bearer(match: re.Match[str]) -> str:
            self._note("Bearer token", where)
            return f"{match['head']}{REDACTED}"

        text = _USERINFO.sub(userinfo, text)
        for pattern in (_QUERY, _PAIR, _QUOTED):
            text = pattern.sub(named, text)
        return _BEARER.sub(bearer, text)

    def json(self, value: Any, where: str = "") -> Any:
        """A copy of a JSON value with every string (and key-like key's value) redacted."""
        if isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                path = f"{where}.{key}" if where else str(key)
                if (
                    self.patterns
                    and isinstance(key, str)
                    and is_key_name(key)
                    and isinstance(item, str)
                    and item not in ("", REDACTED)
                ):
                    self._note("value", path)
                    out[key] = REDACTED
                else:
                    out[self.text(key, path) if isinstance(key, str) else key] = self.json(item, path)
            return out
        if isinstance(value, (list, tuple)):
            return [self.json(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return value


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential replaced (key environment variables of ``environ``, URL user info, ...)."""
    return Redactor.from_environment(environ).text(text)
