"""Credentials are never written: found and refused in configuration, redacted from every output.

* **Refused** where a credential would be written as configuration (lm-eval records
  ``--model_args`` in every results file): a key-like argument name (:func:`is_key_name`), user
  info in a URL or a key-like query parameter. :func:`refuse_credentials` raises
  :class:`CredentialError` naming the environment variable the backend reads (:func:`key_variable`).
* **Redacted** everywhere the suite writes (:class:`Redactor`), at any length: the credential a
  backend sends, a model list's ``env`` values (:func:`register_secret`) and the key environment
  variables (:func:`secret_environment`); then URL user info, key-like query parameters, ``Bearer``
  tokens and key-like pairs. In linear time: one ``str.replace`` per value (longest first), patterns
  with bounded names. See docs/api-judges.md, "Where the key belongs".

Neutral like :mod:`logic_consistency.common`: imports nothing of the suite, and no lm-eval. (Not
named ``secrets``: at the repository root that name would shadow the standard library's module.)
"""

from __future__ import annotations

import functools
import json
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "SECRET_NAMES_VARIABLE",
    "CredentialError",
    "Redactor",
    "find_credentials",
    "is_key_name",
    "is_switch",
    "key_variable",
    "redact",
    "refuse_credentials",
    "register_header",
    "register_secret",
    "secret_environment",
]

#: What a redacted credential is replaced with (an environment variable's value: ``[redacted NAME]``).
REDACTED = "REDACTED"
#: Values of environment variables that are key-like only by name (``MY_SERVICE_TOKEN``) are secrets
#: from this length on (``HF_HUB_DISABLE_IMPLICIT_TOKEN=1`` is a switch). The variables a backend sends
#: (:data:`SENT_VARIABLES`) and the values :func:`register_secret` was given are secrets at any length.
MIN_SECRET_LENGTH = 8

#: Key-like names, compacted (percent-decoded, lower case, only letters and digits: ``accessToken``,
#: ``X-Amz-Signature`` and ``api%2Dkey`` become ``accesstoken``, ``xamzsignature``, ``apikey``).
KEY_NAMES = frozenset(
    {
        "apikey",
        "appkey",
        "ak",
        "sk",
        "key",
        "token",
        "secret",
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
        "cookie",
    }
)
#: Endings (compacted) that make any name key-like (``openai_api_key``, ``clientSecret``,
#: ``private_token``, ``X-Amz-Security-Token``). Not a bare ``token``: ``add_bos_token`` is a model argument.
KEY_SUFFIXES = (
    "key",
    "secret",
    "password",
    "passwd",
    "signature",
    "credential",
    "credentials",
    "accesstoken",
    "apitoken",
    "authtoken",
    "bearertoken",
    "hftoken",
    "idtoken",
    "privatetoken",
    "refreshtoken",
    "securitytoken",
    "sessiontoken",
)
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
#: The variables whose values a backend or tool sends: secrets at any length.
SENT_VARIABLES = frozenset({*KEY_VARIABLES.values(), "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY"})
#: Names (comma-separated) of further variables whose values are secrets at any length: a model list's
#: ``env`` names them here, so the ``lm_eval`` it starts (and its request cache) redacts them too.
SECRET_NAMES_VARIABLE = "LOGIC_CONSISTENCY_SECRET_VARIABLES"
#: Values this process sends or was given as credentials (:func:`register_secret`): ``{value: label}``.
_REGISTERED: dict[str, str] = {}

# Every name and scheme is bounded (64 characters), and each pattern starts on a fixed character or
# after a separator, so no pattern rescans an unbounded run: linear time (issue 29 measured the
# unbounded scheme of the URL pattern at 5.8 s for 20,000 letters).
_NAME = r"[A-Za-z][A-Za-z0-9_.%-]{0,63}"
#: ``scheme://user:pass@`` (the user info up to the ``@`` before the host); found from the fixed
#: ``://``, which the regex engine searches for directly (a scheme pattern would start at every letter).
_USERINFO = re.compile(r"(?P<head>://)(?P<info>[^/\s@?#\"',]+)@")
#: ``?name=value`` / ``&name=value`` / ``;name=value`` in a URL.
_QUERY = re.compile(rf"(?P<head>[?&;](?P<name>{_NAME})=)(?P<value>[^&#\s\"',;]+)")
#: ``name=value`` in lm-eval's ``k=v,k=v`` text (a logged command line, an error message).
_PAIR = re.compile(rf"(?P<head>(?:^|(?<=[\s,{{(]))(?P<name>{_NAME})=)(?P<value>[^,\s\"'}})]+)")
#: ``"name": "value"`` / ``'name': 'value'`` (JSON, a logged Python dict).
_QUOTED = re.compile(
    rf"(?P<head>(?P<q>[\"'])(?P<name>{_NAME})(?P=q)\s{{0,8}}:\s{{0,8}}(?P<q2>[\"']))(?P<value>[^\"']*)(?P=q2)"
)
#: ``Bearer <token>`` (an ``Authorization`` header in an error message or a log).
_BEARER = re.compile(r"(?P<head>\bBearer\s{1,8})(?P<value>[A-Za-z0-9._~+/=-]{4,})", re.IGNORECASE)


class CredentialError(ValueError):
    """A credential given where it would be written (a model argument, a URL): one line, never the value."""


@functools.lru_cache(maxsize=4096)  # called once per name=value match: a 1 MB query string has thousands
def is_key_name(name: str) -> bool:
    """Whether a model argument or query parameter name is key-like (``api_key``, ``X-Api-Key``,
    ``accessToken``, ``private_token``, ``X-Amz-Signature``, ``api%2Dkey``, ``ak``), in any case or encoding."""
    compact = "".join(char for char in urllib.parse.unquote(name).lower() if char.isascii() and char.isalnum())
    return compact in KEY_NAMES or compact.endswith(KEY_SUFFIXES)


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


def _in_value(name: str, value: Any) -> list[str]:
    """Credentials at any depth of a JSON value (``{"gateway": {"api_key": ...}}``, ``[["Authorization", ...]]``)."""
    if isinstance(value, str):
        return _in_url(name, value)
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{name}.{key}"
            found.extend([f"argument {path!r}"] if is_key_name(str(key)) else _in_value(path, item))
    elif isinstance(value, (list, tuple)):
        if _is_key_pair(value):
            return [f"argument {value[0]!r} in {name!r}"]
        for index, item in enumerate(value):
            found.extend(_in_value(f"{name}[{index}]", item))
    return found


def _pairs(model_args: str | Mapping[str, Any]) -> list[tuple[str, Any]]:
    if isinstance(model_args, Mapping):
        return [(str(key), value) for key, value in model_args.items()]
    pairs: list[tuple[str, Any]] = []
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
            found.extend(_in_value(name or "text", value))
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


def register_secret(value: str, label: str) -> None:
    """Redact ``value`` (at any length) in everything this process writes or prints from now on.

    Called by a backend with the exact credential it sends (an ``Authorization`` header, an
    ``api-key`` header, a query value) and by the model list for every ``env`` value it names;
    every :meth:`Redactor.from_environment` (so every writer of the suite) includes them.
    """
    if isinstance(value, str) and value.strip():
        _REGISTERED.setdefault(value, label)
        _REGISTERED.setdefault(value.strip(), label)


def register_header(header: Mapping[str, Any] | None, label: str) -> None:
    """:func:`register_secret` for every value of the HTTP headers a backend sends (and the token of
    ``Authorization: Bearer <token>``)."""
    for value in (header or {}).values():
        if not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() in ("bearer", "basic", "token"):  # the token only: "Bearer " with no key is no secret
            register_secret(token, label)
        else:
            register_secret(value, label)


#: Values of a named variable that are switches or counts, never keys (``OMP_NUM_THREADS: 1``).
_SWITCH = re.compile(r"^\s*(?:[-+]?[0-9]+(?:\.[0-9]+)?|true|false|yes|no|on|off|none)\s*$", re.IGNORECASE)


def is_switch(value: str) -> bool:
    """Whether ``value`` is a number or a yes/no word: a model list's ``env`` value never redacted."""
    return bool(_SWITCH.match(value))


def _is_secret_variable(name: str, value: str, named: frozenset[str] = frozenset()) -> bool:
    if name.upper() in SENT_VARIABLES or (name in named and not is_switch(value)):
        return True
    return bool(SECRET_VARIABLE.match(name)) and len(value.strip()) >= MIN_SECRET_LENGTH


def secret_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: variable name}`` of the key environment variables (see the module docstring).

    A variable a backend sends (:data:`SENT_VARIABLES`: ``OPENAI_API_KEY``, ``HF_TOKEN``, ...) counts
    at any length; one key-like only by name from :data:`MIN_SECRET_LENGTH` characters.
    """
    source = os.environ if environ is None else environ
    named = frozenset(name.strip() for name in str(source.get(SECRET_NAMES_VARIABLE, "")).split(",") if name.strip())
    return {
        value: name
        for name, value in source.items()
        if isinstance(value, str) and value.strip() and _is_secret_variable(name, value, named)
    }


def _forms(value: str) -> set[str]:
    """A secret as written raw, inside JSON strings (escaped, with and without ``ensure_ascii``) and
    percent-encoded (in a logged URL)."""
    return {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value, safe=""),
    }


#: Placeholders for literal secrets while they are replaced (private-use characters: no secret or
#: label is made of them, so a short secret never rewrites another's label).
_MARK = "\uf8ff"


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
        literals = sorted(forms.items(), key=lambda item: -len(item[0]))
        self._literals = [
            (value, f"{_MARK}{chr(0xE000 + index)}{_MARK}", name) for index, (value, name) in enumerate(literals)
        ]
        # this redactor's own labels, kept as they are when a text is redacted again (idempotence: a
        # secret that is another's variable name must not rewrite ``[redacted THAT_NAME]``)
        names = sorted(set(self.secrets.values()), key=len, reverse=True)
        self._labels = [
            (f"[redacted {name}]", f"{_MARK}{chr(0xF000 + index)}{_MARK}") for index, name in enumerate(names)
        ]

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, *, patterns: bool = True) -> Redactor:
        """A redactor of the key environment variables of ``environ`` (default: this process's) and of
        every value given to :func:`register_secret`."""
        return cls({**secret_environment(environ), **_REGISTERED}, patterns)

    def _note(self, what: str, where: str) -> None:
        entry = f"{where}: {what}" if where else what
        if entry not in self.found:
            self.found.append(entry)

    def text(self, text: str, where: str = "") -> str:
        """``text`` with every credential replaced (linear in ``len(text)`` per secret)."""
        kept = [(label, mark) for label, mark in self._labels if label in text] if "[redacted " in text else []
        for label, mark in kept:
            text = text.replace(label, mark)
        replaced = []
        for value, mark, name in self._literals:
            if value in text:
                text = text.replace(value, mark)
                replaced.append((mark, name))
                self._note(name, where)
        for mark, name in replaced:
            text = text.replace(mark, f"[redacted {name}]")
        for label, mark in kept:
            text = text.replace(mark, label)
        if not self.patterns:
            return text
        return self._patterns(text, where)

    def _patterns(self, text: str, where: str) -> str:
        def userinfo(match: re.Match[str]) -> str:
            self._note("URL user info", where)
            return f"{match['head']}{REDACTED}@"

        def named(match: re.Match[str]) -> str:
            if not is_key_name(match["name"]) or match["value"] in ("", REDACTED) or match["value"] == "[redacted":
                return match.group(0)
            self._note(repr(match["name"]), where)
            tail = match.group(0)[match.end("value") - match.start(0) :]
            return f"{match['head']}{REDACTED}{tail}"

        def bearer(match: re.Match[str]) -> str:
            self._note("Bearer token", where)
            return f"{match['head']}{REDACTED}"

        # each pattern runs only where its fixed part occurs (a C-speed test): most texts have none
        if "://" in text:
            text = _USERINFO.sub(userinfo, text)
        if "=" in text:
            text = _PAIR.sub(named, _QUERY.sub(named, text))
        if ":" in text:
            text = _QUOTED.sub(named, text)
        if "bearer" in text.lower():
            text = _BEARER.sub(bearer, text)
        return text

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
            if self.patterns and _is_key_pair(value):  # [["Authorization", "Bearer ..."]], ["api_key", "..."]
                self._note("value", f"{where}[1]")
                return [self.text(value[0], f"{where}[0]"), REDACTED]
            return [self.json(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return value


def _is_key_pair(value: list[Any] | tuple[Any, ...]) -> bool:
    """A ``[name, value]`` pair whose name is key-like (a header list, a list of arguments)."""
    return (
        len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], str)
        and is_key_name(value[0])
        and value[1] not in ("", REDACTED)
    )


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential replaced (key environment variables of ``environ``, URL user info, ...)."""
    return Redactor.from_environment(environ).text(text)
