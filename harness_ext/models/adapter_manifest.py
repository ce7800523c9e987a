"""An adapter folder's manifest, its completeness, and the identity of the base and the data.

A folder is complete when its manifest is there: the trainer writes the adapter under a hidden
temporary name, adds the manifest last and renames the folder, so a run stopped at any point (Ctrl-C,
a full disk) never leaves a folder that looks finished.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapters import check_adapter_rank, check_adapter_weights
from logic_consistency.outputs import atomic_write_json

__all__ = [
    "MANIFEST",
    "check_adapter_rank",
    "check_adapter_weights",
    "check_base",
    "data_sha256",
    "examples_sha256",
    "folder_sha256",
    "is_complete",
    "read_manifest",
    "write_manifest",
]

MANIFEST = "logic_consistency_adapter.json"
_WEIGHTS = ("*.safetensors", "*.bin")


class BaseModelError(ValueError):
    """A base model that cannot be trained (names the path and why)."""


def check_base(base: str | Path) -> Path:
    """The base model's folder, checked before anything loads.

    It must be a transformers folder (``config.json`` and safetensors or ``.bin`` weights); a GGUF file
    or a folder of GGUF files only is refused with the way to convert it.

    Raises:
        BaseModelError: Naming the path and what is missing.
    """
    path = Path(base)
    if path.suffix.lower() == ".gguf" or (path.is_dir() and any(path.glob("*.gguf")) and not _weights(path)):
        raise BaseModelError(
            f"--base {base}: a GGUF-only model cannot be trained (LoRA needs the transformers weights); "
            "convert it once (an embedded model: logic-consistency model-path NAME) and pass that folder"
        )
    if not path.is_dir():
        raise BaseModelError(
            f"--base {base}: not a folder (give a transformers model folder or an embedded model's name)"
        )
    if not (path / "config.json").is_file():
        raise BaseModelError(f"--base {base}: no config.json (not a transformers model folder)")
    if not _weights(path):
        raise BaseModelError(f"--base {base}: no *.safetensors or *.bin weights")
    return path


def _weights(folder: Path) -> list[Path]:
    return sorted(p for pattern in _WEIGHTS for p in folder.glob(pattern))


def folder_sha256(folder: Path) -> str:
    """SHA-256 over the base's config and weight files (names and bytes), its identity in a manifest."""
    digest = hashlib.sha256()
    for path in [folder / "config.json", *_weights(folder)]:
        digest.update(path.name.encode() + b"\x00")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def data_sha256(records: Iterable[Any]) -> str:
    """SHA-256 of the training records as canonical JSON lines (the data's identity in a manifest)."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return digest.hexdigest()


def examples_sha256(examples: Iterable[Any]) -> str:
    """The manifest's ``data_sha256`` of training examples: :func:`data_sha256` of their records
    (:meth:`.trainer.Example.record`), so a study can check, before anything trains, that a kept adapter
    was trained on the data this row builds now."""
    return data_sha256(example.record() for example in examples)


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` is a finished adapter (its manifest is written last)."""
    return (folder / MANIFEST).is_file()


def read_manifest(folder: Path) -> dict[str, Any]:
    """A finished adapter's manifest.

    Raises:
        ValueError: The folder is not a finished adapter, or its manifest is malformed (naming it).
    """
    if not is_complete(folder):
        raise ValueError(f"{folder}: not a finished adapter (no {MANIFEST})")
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{folder / MANIFEST}: malformed adapter manifest ({error})") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{folder / MANIFEST}: malformed adapter manifest (not a JSON object)")
    return manifest


def write_manifest(staging: Path, final: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest into ``staging`` (last), then rename it to ``final`` (an unfinished ``final`` is replaced)."""
    atomic_write_json(staging / MANIFEST, manifest, indent=2)
    if final.exists():
        if is_complete(final):
            raise FileExistsError(f"{final}: a finished adapter is already there")
        shutil.rmtree(final)
    staging.rename(final)
