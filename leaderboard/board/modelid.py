"""Who was measured: a model's display name, weights revision/checksum and precision.

The revision is what makes two rows of the same model name different rows. In order of preference:

1. ``revision`` given explicitly (model list entry or ``ingest --revision``): ``model_list``;
2. an embedded model (``--model lc-embedded --model_args model=NAME``): the sha256 of its GGUF file
   from the converted model's manifest (``harness_ext.models``): ``gguf_sha256``;
3. ``pretrained=DIR`` where ``DIR`` holds an embedded-model manifest (``logic-consistency
   model-path``): its ``gguf_sha256``: ``manifest``;
4. ``revision=...`` in ``--model_args`` (a hub commit or tag): ``model_args``;
5. otherwise ``unpinned``: the row still appears, but a changed checkpoint under the same name is
   not detected (pin a revision for anything on a leaderboard).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.credentials import Redactor, redact
from logic_consistency.harness_ext.models import embedded as models
from logic_consistency.harness_ext.models.args import split_model_args
from logic_consistency.harness_ext.publish.allowlist import URL_ARGS, is_local_path, public_model_args

__all__ = [
    "EMBEDDED_BACKEND",
    "ModelIdentity",
    "endpoint_label",
    "format_model_args",
    "identify",
    "parse_model_args",
    "published_model_args",
    "slug",
]

EMBEDDED_BACKEND = "lc-embedded"
MANIFEST = "logic_consistency_model.json"
UNPINNED = "unpinned"


@dataclass(frozen=True)
class ModelIdentity:
    """The model half of a row key.

    Attributes:
        name: Display name (model list ``name``; else derived from the model arguments).
        backend: lm-eval ``--model``.
        model_args: lm-eval ``--model_args`` string: only the arguments its backend declares public
            (:mod:`logic_consistency.harness_ext.publish.allowlist`; ``base_url`` without user info, query
            or fragment, and its host only where the model list declares it public, else
            :func:`endpoint_label`), credentials redacted (:mod:`logic_consistency.credentials`).
        revision: Checksum / revision of the weights (``"unpinned"`` when unknown).
        revision_source: Where ``revision`` came from (see the module docstring).
        precision: dtype or quantisation label.
    """

    name: str
    backend: str
    model_args: str
    revision: str
    revision_source: str
    precision: str

    def as_json(self) -> dict[str, str]:
        """The ``model`` object of a leaderboard row."""
        return {
            "name": self.name,
            "backend": self.backend,
            "model_args": self.model_args,
            "revision": self.revision,
            "revision_source": self.revision_source,
            "precision": self.precision,
        }


def parse_model_args(model_args: str | Mapping[str, Any] | None) -> dict[str, str]:
    """``"a=1,b=x"`` (lm-eval's format) or a mapping as a ``{str: str}`` dict."""
    if model_args is None:
        return {}
    if isinstance(model_args, Mapping):
        return {str(key): str(value) for key, value in model_args.items()}
    out: dict[str, str] = {}
    for key, value in split_model_args(str(model_args)):
        if value is None:
            raise ValueError(f"model_args: {redact(repr(key))} is not key=value (in {redact(repr(model_args))})")
        out[key] = value
    return out


def format_model_args(model_args: str | Mapping[str, Any] | None) -> str:
    """The lm-eval ``--model_args`` string of ``model_args`` (a string passes through)."""
    if model_args is None:
        return ""
    if isinstance(model_args, Mapping):
        return ",".join(f"{key}={value}" for key, value in model_args.items())
    return str(model_args)


#: What stands for an endpoint whose host is not declared public: ``private:<the entry's name>``.
ENDPOINT_LABEL = "private:"


def endpoint_label(name: str) -> str:
    """The stable label of an undeclared endpoint: ``private:`` and the model's name (the row's, already
    public), made of letters, digits, ``.``, ``_`` and ``-``; never anything of the URL (issue 54)."""
    return ENDPOINT_LABEL + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:80] or "model")


def published_model_args(
    backend: str, model_args: str | Mapping[str, Any] | None, *, name: str, public_endpoint: bool = False
) -> str:
    """The ``--model_args`` a board, its history and page record: the backend's public arguments (the
    allowlist), a ``base_url`` as scheme, host, port and a known API path only where ``public_endpoint``
    (the model list declares its host public), else :func:`endpoint_label` of ``name``.

    A tunnel's host (ngrok, cloudflared) may be the only guard of an unauthenticated server: no host is
    published unless declared (issue 54).
    """
    public = format_model_args(public_model_args(backend, model_args).value)
    if public_endpoint:
        return public
    return ",".join(
        key if value is None else f"{key}={endpoint_label(name) if key in URL_ARGS and value else value}"
        for key, value in split_model_args(public)
    )


def slug(name: str) -> str:
    """A file-name-safe, collision-resistant form of a model name (``org/model`` -> ``org-model-1a2b3c``)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "model"
    return f"{readable}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:6]}"


def _manifest_sha(folder: str) -> str | None:
    path = Path(folder).expanduser() / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sha = data.get("gguf_sha256") if isinstance(data, dict) else None
    return sha if isinstance(sha, str) and sha else None


def _embedded_sha(name: str) -> str:
    """The GGUF sha256 of an embedded model (converts it on first use, like lm-eval would)."""
    sha = models.manifest(models.resolve(name)).get("gguf_sha256")
    if not isinstance(sha, str) or not sha:
        raise ValueError(f"embedded model {name!r}: its manifest has no gguf_sha256")
    return sha


def _default_name(backend: str, args: Mapping[str, str], embedded_name: str | None) -> str:
    """An embedded model's name, the folder name of a local ``pretrained`` (never its home folder), a
    hub id, ``model=``, or the backend."""
    pretrained = args.get("pretrained")
    if isinstance(pretrained, str) and is_local_path(pretrained):
        pretrained = Path(pretrained).expanduser().resolve().name
    return embedded_name or pretrained or args.get("model") or backend


def _revision(
    args: Mapping[str, str], revision: str | None, embedded_name: str | None, embedded_sha: Callable[[str], str]
) -> tuple[str, str]:
    """The revision and where it came from: the model list, the GGUF's sha256, a converted folder's
    manifest, ``revision=``, or unpinned."""
    if revision:
        return revision, "model_list"
    if embedded_name is not None:
        return embedded_sha(embedded_name), "gguf_sha256"
    if args.get("pretrained") and _manifest_sha(args["pretrained"]):
        return str(_manifest_sha(args["pretrained"])), "manifest"
    if args.get("revision"):
        return args["revision"], "model_args"
    return UNPINNED, "unpinned"


def identify(
    backend: str,
    model_args: str | Mapping[str, Any] | None,
    *,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    embedded_sha: Callable[[str], str] = _embedded_sha,
    public_endpoint: bool = False,
) -> ModelIdentity:
    """Work out a model's identity from how lm-eval was asked to load it.

    Args:
        backend: lm-eval ``--model`` (``lc-embedded``, ``hf``, ``vllm``, ``dummy``, ...).
        model_args: lm-eval ``--model_args`` (string or mapping).
        name: Display name; derived from ``model=`` / ``pretrained=`` / the backend if omitted.
        revision: Explicit revision or checksum (wins over everything else).
        precision: Explicit precision label (wins over ``dtype=``).
        embedded_sha: Returns the GGUF sha256 of an embedded model by name (injectable for tests).
        public_endpoint: The model list declares the host of ``base_url`` public (else a label names it).

    Returns:
        The identity.

    Raises:
        ValueError: ``model_args`` is malformed, or an embedded model cannot be resolved.
        ModuleNotFoundError: An embedded model's package is not installed.
    """
    args = parse_model_args(model_args)
    clean = Redactor.from_environment()  # credentials never enter a row, its identity or a cache name
    embedded_name = args.get("model", "smollm2-135m-instruct") if backend == EMBEDDED_BACKEND else None
    found, source = _revision(args, revision, embedded_name, embedded_sha)
    shown = clean.text(_default_name(backend, args, embedded_name)) if name is None else name
    return ModelIdentity(
        name=shown,
        backend=backend,
        # a row records only the backend's public arguments (harness_ext.publish): the allowlist decides
        model_args=clean.text(published_model_args(backend, model_args, name=shown, public_endpoint=public_endpoint)),
        revision=found,
        revision_source=source,
        precision=precision or args.get("dtype") or ("float32" if backend == EMBEDDED_BACKEND else "auto"),
    )
