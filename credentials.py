"""Credentials are never written: found and refused in configuration, redacted from every output.

* **Refused** where lm-eval would write them (every results file records ``--model_args``): a key-like
  name (:func:`is_key_name`, the one vocabulary of names, also of environment variables), user info
  in a URL and any query parameter but the declared ones (:data:`PUBLIC_QUERY_PARAMETERS`), by
  :func:`refuse_credentials` naming where the key belongs (:func:`key_variable`).
* **Redacted** in string values only (a JSON key is never rewritten): the credential a backend sends
  (:func:`register_secret`) and the key environment variables (:func:`secret_environment`), in their
  echoed forms (:mod:`logic_consistency.secret_forms`; a placeholder or short value is none); then,
  only where the suite writes arguments and configuration (``patterns=True``), URL user info, key-like
  query parameters and pairs and ``Bearer`` tokens (linear time); never in what a model generated.

Neutral: imports only :mod:`logic_consistency.secret_forms` of the suite, and no lm-eval. (Not
named ``secrets``: at the repository root that name would shadow the standard library's module.)
"""

from __future__ import annotations

import functools
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from logic_consistency.secret_forms import MIN_SECRET_LENGTH, Echoes, is_placeholder, is_switch, literal_forms

__all__ = [
    "MIN_SECRET_LENGTH", "NOT_KEY_VARIABLES", "PUBLIC_QUERY_PARAMETERS", "REDACTED", "SECRET_NAMES_VARIABLE", "CredentialError", "Redactor",
    "find_credentials", "is_key_name", "is_secret_name", "is_switch", "key_variable", "redact",
    "refuse_credentials", "refuse_short_key", "register_header", "register_secret", "secret_environment", "url_origin",
]  # fmt: skip

#: What a redacted credential is replaced with (an environment variable's value: ``[redacted NAME]``).
REDACTED = "REDACTED"
#: Key-like names, compacted (percent-decoded, lower case, letters and digits: ``api%2Dkey`` -> ``apikey``).
KEY_NAMES = frozenset(
    {"apikey", "appkey", "ak", "sk", "key", "token", "secret", "password", "passwd", "pwd", "auth", "authorization",
     "bearer", "credential", "credentials", "sig", "signature",  # not "code": a URL's query is declared (below)
     "header", "headers",  # lm-eval's API models send a ``header`` mapping instead of ``Authorization: Bearer $KEY``
     "cookie"}
)  # fmt: skip
#: Endings (compacted) that make any name key-like (``openai_api_key``, ``clientSecret``, ``github_token``,
#: ``sas_token``, ``X-Amz-Security-Token``, ``id_jwt``), but for the names declared in :data:`NOT_KEY_NAMES`.
KEY_SUFFIXES = ("key", "secret", "password", "passwd", "signature", "credential", "credentials", "token", "jwt")
#: Names (compacted) with a key-like ending that lm-eval and transformers declare as model arguments
#: holding no secret (``add_bos_token``, ``think_end_token``: a token of the vocabulary).
NOT_KEY_NAMES = frozenset(
    {"addbostoken", "thinkendtoken", "prefixtoken", "imagetoken", "padtoken", "eostoken", "bostoken", "toptoken",
     "nexttoken", "septoken", "unktoken", "masktoken", "clstoken"}
)  # fmt: skip
#: URL query parameters declared public (issue 46): any other one in a URL is refused, whatever its
#: name looks like (``?github_token=``): it is sent with every request and printed in lm-eval's errors.
PUBLIC_QUERY_PARAMETERS = frozenset({"api-version"})  # Azure OpenAI's
#: Environment variables with a key-like name that hold no secret: the shell's working directory
#: (``pwd`` is a password as an argument or a URL parameter, never as the variable ``PWD``).
NOT_KEY_VARIABLES = frozenset({"PWD"})

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
#: The variables whose values a backend or tool sends: secrets from 8 characters, never placeholders.
SENT_VARIABLES = frozenset({*KEY_VARIABLES.values(), "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY"})
#: Names (comma-separated) of further variables whose values are secrets (not placeholders): a model list's
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
    return compact in KEY_NAMES or (compact.endswith(KEY_SUFFIXES) and compact not in NOT_KEY_NAMES)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable (or a model list's ``env`` entry) named ``name`` holds a secret: the
    one vocabulary of :func:`is_key_name`, as for arguments and URLs (``OPENAI_API_KEY``, ``HF_TOKEN``,
    ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``SAS_TOKEN``, ``ID_JWT``), but :data:`NOT_KEY_VARIABLES`; and every
    variable a backend or tool sends (:data:`SENT_VARIABLES`)."""
    upper = name.upper()
    return upper in SENT_VARIABLES or (is_key_name(name) and upper not in NOT_KEY_VARIABLES)


def key_variable(backend: str | None) -> str:
    """Where the key of ``backend`` belongs: the environment variable it reads, in words."""
    variable = KEY_VARIABLES.get(backend or "")
    if variable is not None:
        return f"the {variable} environment variable"
    return (
        "the environment variable the backend or tool reads (OPENAI_API_KEY for the OpenAI-compatible "
        "backends, HF_TOKEN for the Hugging Face hub, WANDB_API_KEY for Weights & Biases)"
    )


def url_origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, how every line the suite prints names an endpoint (issue 46):
    never its path (a gateway token), query, fragment or user info."""
    try:
        parts = urllib.parse.urlsplit(str(url).strip())
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return "<a URL that does not parse>"
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{'' if port is None else f':{port}'}"


def _in_url(name: str, value: str) -> list[str]:
    """User info, and query parameters: in a URL any undeclared one (:data:`PUBLIC_QUERY_PARAMETERS`), else key-like ones."""
    found = [f"user info in the URL of {name!r}"] if _USERINFO.search(value) else []
    url = "://" in value
    for match in _QUERY.finditer(value):
        if (match["name"] not in PUBLIC_QUERY_PARAMETERS) if url else is_key_name(match["name"]):
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
            f"{where}: refusing a credential or an undeclared query parameter ({'; '.join(found)}): it would be "
            f"written to every results file, log and board; remove it (a URL takes only the query parameters "
            f"{', '.join(sorted(PUBLIC_QUERY_PARAMETERS))}) and give the key in {key_variable(backend)}"
        )


def register_secret(value: str, label: str) -> None:
    """Redact ``value`` in everything this process writes or prints from now on (a placeholder or a
    value under :data:`MIN_SECRET_LENGTH` characters is no secret: ignored).

    Called by a backend with the exact credential it sends (an ``Authorization`` header, an
    ``api-key`` header, a query value) and by the model list for every secret ``env`` value;
    every :meth:`Redactor.from_environment` (so every writer of the suite) includes them.
    """
    if isinstance(value, str) and not is_placeholder(value):
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


def _named(source: Mapping[str, str]) -> frozenset[str]:
    return frozenset(name.strip() for name in str(source.get(SECRET_NAMES_VARIABLE, "")).split(",") if name.strip())


def secret_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: variable name}`` of the key environment variables (see the module docstring): named
    like a key (:func:`is_secret_name`) or declared in :data:`SECRET_NAMES_VARIABLE`, and not a
    placeholder, a switch or shorter than :data:`MIN_SECRET_LENGTH` characters."""
    source = os.environ if environ is None else environ
    named = _named(source)
    return {
        value: name
        for name, value in source.items()
        if isinstance(value, str)
        and (name in named or is_secret_name(name))
        and not is_placeholder(value)
        and not is_switch(value)
    }


#: Backends that send their key to a hosted service, where a placeholder cannot be the real key.
HOSTED_BACKENDS = frozenset(
    name for name in KEY_VARIABLES if name.startswith(("openai-", "anthropic-", "azure-", "textsynth"))
)


def refuse_short_key(backend: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The one line saying that ``backend``'s key variable is not treated as a secret, or ``None``.

    Raises:
        CredentialError: ``backend`` sends its key to a hosted service and the key is that short: it
            can neither be redacted safely nor published.
    """
    source = os.environ if environ is None else environ
    variable = KEY_VARIABLES.get(backend or "")
    value = source.get(variable or "")
    if variable is None or not value or not is_placeholder(value):
        return None
    if backend in HOSTED_BACKENDS:
        raise CredentialError(
            f"{variable}: a key of {len(value.strip())} characters (or a placeholder) cannot be redacted safely "
            f"nor published; {backend} needs its real key (at least {MIN_SECRET_LENGTH} characters)"
        )
    return (
        f"logic-consistency: {variable} is not treated as a secret (a placeholder or under "
        f"{MIN_SECRET_LENGTH} characters): it is not redacted from any output"
    )


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
        replacements: How many occurrences of a secret (in any of its forms) were replaced so far.
    """

    secrets: dict[str, str] = field(default_factory=dict)
    patterns: bool = True
    found: list[str] = field(default_factory=list)
    replacements: int = 0

    def __post_init__(self) -> None:
        self.secrets = {value: name for value, name in self.secrets.items() if not is_placeholder(value)}
        forms = {form: name for value, name in self.secrets.items() for form in literal_forms(value)}
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
        self._echoes = [
            (Echoes(value), f"{_MARK}{chr(0xE800 + index)}{_MARK}", name)
            for index, (value, name) in enumerate(self.secrets.items())
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
        text, replaced = self._secrets(text, where)
        for mark, name in replaced:
            text = text.replace(mark, f"[redacted {name}]")
        for label, mark in kept:
            text = text.replace(mark, label)
        if not self.patterns:
            return text
        return self._patterns(text, where)

    def _secrets(self, text: str, where: str) -> tuple[str, list[tuple[str, str]]]:
        """``text`` with each secret's literal forms and echoes replaced by its mark, and the marks used."""
        replaced = []
        for value, mark, name in self._literals:
            if value in text:
                self.replacements += text.count(value)
                text = text.replace(value, mark)
                replaced.append((mark, name))
                self._note(name, where)
        for echoes, mark, name in self._echoes:
            text, count = echoes.sub(text, mark)
            self.replacements += count
            if count:
                replaced.append((mark, name))
                self._note(name, where)
        return text, replaced

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

    def _check_key(self, key: Any, path: str) -> None:
        """A JSON key is never rewritten (it is a field or metric name); one holding a secret is refused."""
        if isinstance(key, str) and any(value in key for value, _, _ in self._literals):
            name = next(name for value, _, name in self._literals if value in key)
            raise CredentialError(f"{path}: a JSON key holds the value of {name}; keys are never rewritten")

    def json(self, value: Any, where: str = "") -> Any:
        """A copy of a JSON value with every string value (and key-like key's value) redacted; keys
        are kept as they are (:meth:`_check_key`)."""
        if isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, Mapping):
            return {key: self._item(key, item, f"{where}.{key}" if where else str(key)) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            if self.patterns and _is_key_pair(value):  # [["Authorization", "Bearer ..."]], ["api_key", "..."]
                self._note("value", f"{where}[1]")
                return [self.text(value[0], f"{where}[0]"), REDACTED]
            return [self.json(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return value

    def _item(self, key: Any, item: Any, path: str) -> Any:
        """A mapping's value: ``REDACTED`` under a key-like key (where patterns apply), else redacted inside."""
        if (
            self.patterns
            and isinstance(key, str)
            and is_key_name(key)
            and isinstance(item, str)
            and item not in ("", REDACTED)
        ):
            self._note("value", path)
            return REDACTED
        self._check_key(key, path)
        return self.json(item, path)


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
