"""What a study's row records of everything that changes its numbers, and the check of a kept row.

A row's ``row.json`` carries its ``identity``: the study's (recipe, base as named, as resolved and its
fingerprint by content with the chat template's SHA-256 and its weights', :func:`base_identity`; tasks, limit, options, chat
template, hyperparameters with the seed, the recipe's own settings) and the row's own (name, label and,
for a trained row, the hash and count of its examples), and the SHA-256 of its evaluation files, its
adapter's weights and its measured values (:func:`row_hashes`). A rerun rebuilds the identity from
what it would run now and compares it with the kept ``row.json`` and adapter manifest, and verifies
the hashes (:func:`hash_mismatches`). A row that differs is refused, naming the row, the field (or the
file) and both values, or (``--rebuild-mismatched``) removed and run again; it is never trusted
because a file is there.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import file_sha256
from logic_consistency.harness_ext.models.adapter_manifest import (
    check_adapter_rank,
    examples_sha256,
    is_complete,
    read_manifest,
)
from logic_consistency.harness_ext.models.base_hash import base_sha256

__all__ = [
    "RowMismatch",
    "adapter_mismatches",
    "base_identity",
    "check_row",
    "hash_mismatches",
    "row_hashes",
    "row_identity",
]

#: The manifest fields a kept adapter must share with its row's identity: manifest key -> identity key.
MANIFEST_FIELDS = {
    "recipe": "recipe",
    "round": "label",
    "data_sha256": "data_sha256",
    "hyperparameters": "hyperparameters",
    "base_sha256": "base_sha256",  # the base by its weights' content (base_hash), never by its path
}


#: A base's small files hashed whole (what its tokenizer and chat template are made of); its weights are
#: hashed by :func:`..models.base_hash.base_sha256` (their bytes, cached by file identity: a rerun reads none).
_BASE_TEXT_FILES = ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json",
                    "special_tokens_map.json", "chat_template.jinja", "chat_template.json")  # fmt: skip
#: The evaluation files a row's ``row.json`` hashes (lm_eval's samples and results, anywhere in its folder).
_MEASURED = ("samples_*.jsonl", "results_*.json")
#: What :func:`row_hashes` leaves out of a row's measured values: the hashes themselves, and where
#: it ran (the same row measured on another node is the same row).
_NOT_MEASURED = ("hashes", "ran_on")


def _sha256_json(document: object) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def chat_template_text(base: Path) -> str | None:
    """The base's chat template as its files hold it (``tokenizer_config.json``'s ``chat_template``, a
    ``chat_template.jinja`` or ``chat_template.json``), ``None`` where it has none."""
    parts = []
    config = base / "tokenizer_config.json"
    if config.is_file():
        template = json.loads(config.read_text(encoding="utf-8")).get("chat_template")
        if template is not None:
            parts.append(json.dumps(template, sort_keys=True))
    parts += [(base / name).read_text(encoding="utf-8") for name in ("chat_template.jinja", "chat_template.json")
              if (base / name).is_file()]  # fmt: skip
    return "\n".join(parts) if parts else None


def base_identity(base: Path, *, chat_template: bool) -> dict[str, Any]:
    """What of the base changes a row's numbers, by content, never by its path: its chat template's
    SHA-256 (where the study applies it; ``None``: the base has none), the SHA-256 of its small files,
    and its weights' (``base_sha256``: :func:`..models.base_hash.base_sha256`, what an adapter's manifest records).
    The same model in another folder or on another machine is the same base; other weights of the same
    size are another."""
    digest = hashlib.sha256()
    for name in _BASE_TEXT_FILES:
        if (base / name).is_file():
            digest.update(f"{name}\0{file_sha256(base / name)}\n".encode())
    text = chat_template_text(base) if chat_template else None
    return {
        "chat_template_sha256": hashlib.sha256(text.encode()).hexdigest() if text is not None else None,
        "base_files_sha256": digest.hexdigest(),
        "base_sha256": base_sha256(base),
    }


def _measured_files(row_dir: Path) -> dict[str, str]:
    found = sorted(
        path
        for pattern in _MEASURED
        for path in row_dir.rglob(pattern)
        if "adapter" not in path.relative_to(row_dir).parts[:1]
    )
    return {str(path.relative_to(row_dir)): file_sha256(path) for path in found}


def _adapter_weights(row_dir: Path) -> dict[str, str]:
    adapter = row_dir / "adapter"
    files = [*adapter.glob("*.safetensors"), *adapter.glob("adapter_config.json")] if adapter.is_dir() else []
    return {path.name: file_sha256(path) for path in sorted(files)}


def row_hashes(row_dir: Path, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The SHA-256 of what a finished row measured: its evaluation files (``results``), its adapter's
    weights (``adapter``) and its measured values (``row``: the ``row.json`` fields but where it ran)."""
    measured = {key: value for key, value in summary.items() if key not in _NOT_MEASURED}
    return {"results": _measured_files(row_dir), "adapter": _adapter_weights(row_dir), "row": _sha256_json(measured)}


def hash_mismatches(row_dir: Path, summary: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Each file of a finished row that changed since ``row.json`` recorded its SHA-256 (named by its path)."""
    kept = summary.get("hashes")
    if not isinstance(kept, Mapping):
        return [(f"{row_dir / 'row.json'} hashes", "not recorded", "recorded")]
    now = row_hashes(row_dir, summary)
    found: list[tuple[str, Any, Any]] = []
    if kept.get("row") != now["row"]:
        found.append((f"{row_dir / 'row.json'} (its measured values were edited) sha256", kept.get("row"), now["row"]))
    # the files recorded (a file written after the row, GV's train-split evaluation for the next round,
    # is that round's data, checked by its own identity); an adapter's weights added or removed count too
    for part, folder, names in (("results", row_dir, kept.get("results") or {}),
                                ("adapter", row_dir / "adapter", {**(kept.get("adapter") or {}), **now["adapter"]})):  # fmt: skip
        before, after = dict(kept.get(part) or {}), now[part]
        found += [(f"{folder / name} sha256", before.get(name, "absent"), after.get(name, "absent"))
                  for name in sorted(names) if before.get(name) != after.get(name)]  # fmt: skip
    return found


class RowMismatch(ValueError):
    """A kept row (or its adapter) was made otherwise than this run would make it: names the row, the
    field, the kept and the current value."""


def row_identity(
    study: Mapping[str, Any],
    row: str,
    *,
    label: str | None = None,
    recipe: str | None = None,
    examples: Sequence[Any] | None = None,
    unknown_data: str | None = None,
) -> dict[str, Any]:
    """The identity of one row: the study's, the row's name and label, and for a trained row its
    recipe and data (``examples``' hash and count; ``unknown_data`` says why they cannot be known now)."""
    identity = {**study, "row": row, "label": label}
    if examples is not None or unknown_data is not None:
        identity["recipe"] = recipe
        identity["data_sha256"] = examples_sha256(examples) if examples is not None else f"unknown ({unknown_data})"
        identity["data_examples"] = len(examples) if examples is not None else None
    return identity


def _differences(kept: Mapping[str, Any], now: Mapping[str, Any], prefix: str) -> list[tuple[str, Any, Any]]:
    return [
        (f"{prefix}{key}", kept.get(key), now.get(key))
        for key in sorted({*kept, *now})
        if kept.get(key) != now.get(key)
    ]


def adapter_mismatches(adapter: Path, identity: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """How a finished adapter's manifest differs from the row's identity (its base compared by the content
    of its weights, ``base_sha256``, never by its path: a study moved to another machine keeps its adapters)."""
    manifest = read_manifest(adapter)
    return [
        (f"adapter {key}", manifest.get(key), identity.get(field))
        for key, field in MANIFEST_FIELDS.items()
        if manifest.get(key) != identity.get(field)
    ]


def mismatches(
    row_dir: Path, summary: Mapping[str, Any] | None, identity: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """Every difference between what ``row_dir`` keeps and ``identity`` (empty: the row may be kept)."""
    found: list[tuple[str, Any, Any]] = []
    if summary is not None:
        kept = summary.get("identity")
        if not isinstance(kept, Mapping):  # a row of a study folder written before rows recorded their identity
            found.append(("identity", "not recorded", "recorded"))
        else:
            found += _differences(kept, identity, "")
        found += hash_mismatches(row_dir, summary)
    adapter = row_dir / "adapter"
    if is_complete(adapter):
        found += adapter_mismatches(adapter, identity)
        try:  # what lm_eval would load: its config's rank its weights'
            check_adapter_rank(adapter)
        except ValueError as error:
            found.append(("adapter weights", str(error), "weights that match their config"))
    elif summary is not None and summary.get("adapter") and "data_sha256" in identity:
        found.append(("adapter", "finished", "missing"))
    return found


def check_row(row_dir: Path, summary: Mapping[str, Any] | None, identity: Mapping[str, Any], *, rebuild: bool) -> bool:
    """Check what ``row_dir`` keeps against ``identity``; ``True`` when it may be kept.

    A trained row whose adapter is gone loses its evaluations too (they measured that adapter).

    Raises:
        RowMismatch: Something differs and ``rebuild`` is false (naming the row, each field, kept and now).
    """
    found = mismatches(row_dir, summary, identity)
    name = identity.get("row")
    if not found:
        if "data_sha256" in identity and not is_complete(row_dir / "adapter"):
            for stale in row_dir.glob("*_eval") if row_dir.is_dir() else []:
                shutil.rmtree(stale)
        return True
    listed = "; ".join(f"{field}: kept {kept!r}, now {now!r}" for field, kept, now in found)
    if not rebuild:
        raise RowMismatch(
            f"{row_dir.parent.parent}: row {name} was made otherwise than this run would make it ({listed}); "
            "rerun with --rebuild-mismatched to rebuild it, or choose another --out"
        )
    print(f"logic-consistency improve: row {name}: rebuilt ({listed})", file=sys.stderr)
    shutil.rmtree(row_dir)
    return False
