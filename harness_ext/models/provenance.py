"""A tuned model as a leaderboard row: ``peft=ADAPTER`` in a row's ``model_args``.

The row's provenance records the adapter's base and recipe (from its manifest, :mod:`.adapter_manifest`), and
an adapter whose base is not the row's base is refused before any run: the scores would otherwise be
published under the wrong model. Plain peft adapters (no manifest) are checked against their
``adapter_config.json``'s ``base_model_name_or_path``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.args import parse_model_args

from .adapter_manifest import MANIFEST, check_adapter_weights
from .base_hash import base_sha256

__all__ = ["adapter_provenance", "check_adapter_base"]

#: The manifest fields a row's provenance publishes (an allowlist: no device, no library paths).
PUBLISHED = ("recipe", "round", "split", "base_sha256", "data_sha256", "data_examples", "hyperparameters", "seed")


def _args(model_args: str | Mapping[str, Any]) -> dict[str, Any]:
    return dict(model_args) if isinstance(model_args, Mapping) else parse_model_args(model_args)


def _read_object(path: Path, field: str) -> dict[str, Any]:
    """A JSON object file with a text ``field``; anything else is a :class:`ValueError` naming the file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: malformed adapter file ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get(field), str) or not document[field].strip():
        raise ValueError(f"{path}: malformed adapter file (expected a JSON object with a text field {field!r})")
    return document


def _adapter_base(adapter: Path) -> tuple[str | None, dict[str, Any] | None]:
    """(the base the adapter was trained on, its manifest; for a plain peft adapter its adapter_config.json).

    Raises:
        ValueError: A malformed manifest or adapter_config.json (naming the file).
    """
    manifest_path, config_path = adapter / MANIFEST, adapter / "adapter_config.json"
    if manifest_path.is_file():
        manifest = _read_object(manifest_path, "base_model")
        return manifest["base_model"], manifest
    if config_path.is_file():
        config = _read_object(config_path, "base_model_name_or_path")
        return config["base_model_name_or_path"], {"revision": config.get("revision")}
    return None, None


def _row_base(args: Mapping[str, Any]) -> str | None:
    """The row's base: ``pretrained`` (hf, lc-hf), else the embedded model's converted folder's name."""
    if args.get("pretrained"):
        return str(args["pretrained"])
    return str(args["model"]) if args.get("model") else None


def _embedded_folder(name: str) -> str | None:
    """The converted folder's name of embedded model ``name`` (``smollm2-135m-instruct-0.1.2-98362432``), or ``None``."""
    from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS, _source_fingerprint

    if name not in EMBEDDED_MODELS:
        return None
    try:
        return f"{name}-{_source_fingerprint(EMBEDDED_MODELS[name])}"
    except (ImportError, OSError):  # the model's package is not installed here: no folder to match
        return None


def _same_folder(row_base: str, trained_on: str) -> bool:
    """The same name or resolved folder, or an embedded model's name and its converted folder."""
    if row_base == trained_on or (Path(row_base).exists() and Path(row_base).resolve() == Path(trained_on).resolve()):
        return True
    return Path(trained_on).name == _embedded_folder(row_base)  # model=smollm2-135m-instruct -> its converted folder


def _same_base(row_base: str, trained_on: str, manifest: Mapping[str, Any] | None, revision: Any = None) -> bool:
    """Exactly the same base, never by prefix: the same hub id (and revision, where the adapter records one)
    or resolved folder; an embedded model's name and its converted folder; the same weights' hash."""
    recorded = (manifest or {}).get("revision")
    if recorded and revision and str(recorded) != str(revision):
        return False
    if _same_folder(row_base, trained_on):
        return True
    folder = Path(row_base)
    if manifest and manifest.get("base_sha256") and (folder / "config.json").is_file():
        return bool(base_sha256(folder) == manifest["base_sha256"])  # cached by the files' identity
    return False


def check_adapter_base(model_args: str | Mapping[str, Any]) -> None:
    """Refuse ``peft=ADAPTER`` whose adapter was trained on another base than the row's (before any run).

    Raises:
        ValueError: The adapter folder is missing, holds pickle weights or names no base, or its base
            is not the row's (naming both).
    """
    args = _args(model_args)
    if not args.get("peft"):
        return
    adapter = Path(str(args["peft"]))
    if not adapter.is_dir():
        raise ValueError(f"peft={adapter}: no such adapter folder")
    check_adapter_weights(adapter)
    trained_on, manifest = _adapter_base(adapter)
    row_base = _row_base(args)
    if trained_on is None or row_base is None:
        raise ValueError(
            f"peft={adapter}: cannot check its base (adapter base {trained_on!r}, row base {row_base!r}); "
            f"an adapter needs {MANIFEST} or adapter_config.json, the row pretrained= or model="
        )
    if not _same_base(row_base, trained_on, manifest, args.get("revision")):
        raise ValueError(
            f"peft={adapter}: the adapter was trained on base {trained_on}, but this row's base is {row_base}; "
            "use the adapter with the base it was trained on"
        )


def adapter_provenance(model_args: str | Mapping[str, Any], *, shown_path: Callable[[str], str]) -> dict[str, Any]:
    """``{"adapter": {...}}`` for a row run with ``peft=ADAPTER`` (its base and recipe), else ``{}``.

    The adapter may be gone when the run is ingested elsewhere: then only its path is known. ``shown_path``
    is how the caller publishes a path (the board: ``publish.allowlist.public_path``, a hash and the
    basename), so that this room reads the facts and the publisher projects them.
    """
    args = _args(model_args)
    if not args.get("peft"):
        return {}
    adapter = Path(str(args["peft"]))
    try:
        trained_on, manifest = _adapter_base(adapter) if adapter.is_dir() else (None, None)
    except ValueError:  # a malformed manifest: preflight refused it before any run; ingest records the path only
        trained_on, manifest = None, None
    record: dict[str, Any] = {"path": shown_path(str(adapter)), "base_model": trained_on and shown_path(trained_on)}
    record.update({key: (manifest or {}).get(key) for key in PUBLISHED})
    return {"adapter": record}
