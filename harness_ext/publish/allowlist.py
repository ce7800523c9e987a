"""What a written file may record of a model and its options: an allowlist, declared per backend.

Every file the suite writes (board, history, page, run folders, results JSON, logs) records of a
model only the arguments its backend declares public here (:data:`PUBLIC_ARGS`: ``model``,
``pretrained``, ``revision``, ``dtype``, ``max_tokens``, ...). ``base_url`` is recorded as scheme,
host and port, plus its path only where that is a known public API path (:data:`PUBLIC_API_PATHS`,
:func:`public_url`): never user info, another path, a path parameter, a query or a fragment, which
are named among what was left out. Anything else is left out, neither guessed secret nor guessed safe, and one line names what was left out. The same
rule holds for ``--metadata``, at any depth: only the suite's declared options
(:data:`logic_consistency.options.SUITE_OPTIONS`) with plain values are recorded.

Imports no lm-eval (the ``simple_evaluate`` wrapper that applies it to direct ``lm_eval`` runs is
:mod:`logic_consistency.harness_ext.publish.run`).
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.backends.registry import backends, built_in
from logic_consistency.harness_ext.models.args import _API_PUBLIC, _HF_PUBLIC, split_model_args
from logic_consistency.harness_ext.task.data_files import DATA_HASH_KEY
from logic_consistency.options import SUITE_OPTIONS

__all__ = [
    "PUBLIC_ARGS",
    "TASK_METADATA",
    "URL_ARGS",
    "Published",
    "public_args",
    "public_metadata",
    "public_model_args",
    "is_local_path",
    "public_path",
    "public_url",
    "public_url_parts",
]

#: Arguments that are URLs: recorded as scheme, host, port and a known API path (:func:`public_url`).
URL_ARGS = frozenset({"base_url"})
#: URL paths that are public API routes (OpenAI-compatible servers, Anthropic, Ollama), recorded as
#: they are; any other path may hold a token (``/t/<token>/v1``) and is left out.
PUBLIC_API_PATHS = frozenset(
    {"", "/v1", "/v1/chat/completions", "/v1/completions", "/chat/completions", "/completions", "/v1/messages",
     "/openai/v1", "/openai/v1/chat/completions", "/openai/v1/completions", "/api/chat", "/api/generate"}
)  # fmt: skip
#: Arguments that may name a local file or folder: a local one is recorded as a hash and its basename
#: (:func:`public_path`), never a home folder; a hub id as it is.
PATH_ARGS = frozenset({"pretrained", "peft", "tokenizer", "delta", "gguf_file", "lora_local_path"})
_VLLM_PUBLIC = frozenset(
    {
        "pretrained", "revision", "dtype", "tokenizer", "tokenizer_mode", "tokenizer_revision", "trust_remote_code",
        "tensor_parallel_size", "data_parallel_size", "quantization", "max_gen_toks", "swap_space", "batch_size",
        "max_batch_size", "max_length", "max_model_len", "seed", "gpu_memory_utilization", "device", "lora_local_path",
        "enable_thinking", "think_end_token",
    }
)  # fmt: skip
#: What the suite itself writes into a task's metadata and the row records (the hash of the data files read).
SUITE_RECORDED = frozenset({DATA_HASH_KEY})
#: A task file's own ``metadata:`` keys that are written: lm-eval's task version and file, and the
#: suite's record of its task keys (``task_config``, ``prompt_config``, ``stages_config``); with the
#: suite's options, nothing else of a task file's metadata is (a ``jwt`` there is left out).
TASK_METADATA = frozenset({"version", "config_source", "task_config", "prompt_config", "stages_config"})
#: What any backend not named below may record.
_ANY_PUBLIC = frozenset({"model", "pretrained", "revision", "dtype"})


#: The public model arguments, by lm-eval model name: the suite's backends declare theirs (``Backend.public``);
#: a backend plugged in by entry point too (:func:`public_args`); others: :data:`_ANY_PUBLIC`.
PUBLIC_ARGS: dict[str, frozenset[str]] = {
    **{backend.name: backend.public for backend in built_in()},
    "hf": _HF_PUBLIC,
    "vllm": _VLLM_PUBLIC,
    **{
        name: _API_PUBLIC | {"num_concurrent", "max_retries", "timeout"}
        for name in (
            "local-chat-completions",
            "local-completions",
            "openai-chat-completions",
            "openai-completions",
            "anthropic-chat",
            "anthropic-chat-completions",
            "anthropic-completions",
            "azure-openai-chat-completions",
        )
    },
}


@dataclass
class Published:
    """What may be written, and the names left out (never their values)."""

    value: Any
    left_out: list[str] = field(default_factory=list)

    def note(self, where: str) -> str | None:
        """The one line naming what was left out, or ``None``."""
        if not self.left_out:
            return None
        return (
            f"logic-consistency: {where}: not recorded in any written file (not declared public): "
            f"{', '.join(self.left_out)}"
        )


def public_url(url: str) -> str:
    """``url`` as scheme, host, port and a known API path (:func:`public_url_parts`)."""
    return public_url_parts(url)[0]


def _without_user_info(url: str) -> tuple[str, bool]:
    """``url`` with the user info of its authority cut out, and whether it had one. Cut before parsing:
    a redacted one (``[redacted X]``) is no IPv6 host."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep:
        return url, False
    end = min([index for index in (rest.find(char) for char in "/?#") if index >= 0] or [len(rest)])
    return f"{scheme}://{rest[:end].rpartition('@')[2]}{rest[end:]}", "@" in rest[:end]


def _netloc(parts: urllib.parse.SplitResult) -> str:
    """Host and port of a split URL (an IPv6 host in brackets); ``ValueError`` for a port that is no number."""
    host, port = parts.hostname or "", parts.port
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}" if port is not None else host


def public_url_parts(url: str) -> tuple[str, list[str]]:
    """``url`` as scheme, host and port, plus its path if it is in :data:`PUBLIC_API_PATHS`; and the
    parts left out (``"path"``, ``"query"``, ``"fragment"``, ``"user info"``), never their values."""
    without_user_info, userinfo = _without_user_info(url)
    try:
        parts = urllib.parse.urlsplit(without_user_info)
        netloc = _netloc(parts)
    except ValueError:  # a port that is not a number, a broken IPv6 host: nothing of it is written
        return "", ["URL"]
    path = parts.path if parts.path.rstrip("/") in PUBLIC_API_PATHS else ""
    left = [name for name, part in (("path", parts.path != path), ("query", parts.query),
            ("fragment", parts.fragment), ("user info", userinfo)) if part]  # fmt: skip
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, "", "")), left


def is_local_path(text: str) -> bool:
    """Whether ``text`` names a local file or folder (absolute, ``~``, ``./``, or existing), not a hub id."""
    return text.startswith(("/", "~", "./", "../", "\\")) or text[1:3] in (":\\", ":/") or Path(text).exists()


def public_path(text: str) -> str:
    """A local path as ``local:<SHA-256 of the resolved path, 12 hex digits>/<basename>``; anything else
    (a hub id such as ``org/model``) as it is."""
    if not is_local_path(text):
        return text
    resolved = Path(text).expanduser().resolve()
    return f"local:{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}/{resolved.name}"


def _is_plain(value: Any) -> bool:
    """A JSON scalar, or a list of them (an option's value; a mapping is never one)."""
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) and not isinstance(item, (list, tuple)) for item in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _parse(model_args: str) -> list[tuple[str, str]]:
    return [(name, "" if value is None else value) for name, value in split_model_args(model_args)]


def public_args(backend: str | None) -> frozenset[str]:
    """The model arguments ``backend`` declares public (:data:`PUBLIC_ARGS`, or a plugged-in backend's
    declaration; others: ``model``, ``pretrained``, ``revision``, ``dtype``)."""
    if (backend or "") in PUBLIC_ARGS:
        return PUBLIC_ARGS[backend or ""]
    declared = backends().get(backend or "")
    return _ANY_PUBLIC if declared is None else declared.public


def _keep(backend: str | None, name: str, value: Any) -> tuple[bool, Any, list[str]]:
    """(recorded, what is recorded, the parts of it left out)."""
    public = public_args(backend)
    if name in URL_ARGS and name in public and isinstance(value, str):
        url, left = public_url_parts(value)
        return True, url, [f"the {part} of model argument {name!r}" for part in left]
    if name in PATH_ARGS and name in public and isinstance(value, str):
        return True, public_path(value), []
    if name in public and _is_plain(value):
        return True, value, []
    return False, None, []


def public_model_args(backend: str | None, model_args: str | Mapping[str, Any] | None) -> Published:
    """The public part of ``model_args`` (same form: ``k=v,...`` text or a mapping) and the names left out."""
    if model_args is None:
        return Published(None)
    if isinstance(model_args, Mapping):
        kept: dict[str, Any] = {}
        left: list[str] = []
        for name, value in model_args.items():
            keep, shown, parts = _keep(backend, str(name), value)
            left += parts
            if keep:
                kept[str(name)] = shown
            else:
                left.append(f"model argument {str(name)!r}")
        return Published(kept, left)
    texts, left = [], []
    for name, value in _parse(str(model_args)):
        keep, shown, parts = _keep(backend, name, value)
        left += parts
        if keep:
            texts.append(f"{name}={shown}")
        else:
            left.append(f"model argument {name!r}")
    return Published(",".join(texts), left)


def public_metadata(metadata: Mapping[str, Any] | None, *, also: frozenset[str] = frozenset()) -> Published:
    """The declared options of ``metadata`` (and the names in ``also``: the public model arguments
    lm-eval copies there) with plain values; the rest named."""
    if metadata is None:
        return Published(None)
    kept: dict[str, Any] = {}
    left: list[str] = []
    for name, value in metadata.items():
        if (name in SUITE_OPTIONS or name in SUITE_RECORDED or name in also) and _is_plain(value):
            kept[name] = public_url(value) if name in URL_ARGS and isinstance(value, str) else value
        else:
            left.append(f"metadata {str(name)!r}")
    return Published(kept, left)
