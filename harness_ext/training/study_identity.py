"""What a study's row records of everything that changes its numbers, and the check of a kept row.

A row's ``row.json`` carries its ``identity``: the study's (recipe, base as named and as resolved,
tasks, limit, options, chat template, hyperparameters with the seed, the recipe's own settings) and
the row's own (its name, label and, for a trained row, the hash and count of the examples it trains
on). A rerun rebuilds that identity from what it would run now and compares: the kept ``row.json``,
and the kept adapter's manifest (recipe, round, data hash, hyperparameters, base). A row that differs
is refused, naming the row, the field and both values, or (``--rebuild-mismatched``) removed and run
again; it is never trusted because a file is there.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .adapter import examples_sha256, is_complete, read_manifest

__all__ = ["RowMismatch", "adapter_mismatches", "check_row", "row_identity"]

#: The manifest fields a kept adapter must share with its row's identity: manifest key -> identity key.
MANIFEST_FIELDS = {
    "recipe": "recipe",
    "round": "label",
    "data_sha256": "data_sha256",
    "hyperparameters": "hyperparameters",
}


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
    """How a finished adapter's manifest differs from the row's identity (its base compared resolved)."""
    manifest = read_manifest(adapter)
    found = [
        (f"adapter {key}", manifest.get(key), identity.get(field))
        for key, field in MANIFEST_FIELDS.items()
        if manifest.get(key) != identity.get(field)
    ]
    trained_on = manifest.get("base_model")
    base = identity.get("base_path")
    if not isinstance(trained_on, str) or base is None or Path(trained_on).resolve() != Path(str(base)):
        found.append(("adapter base_model", trained_on, base))
    return found


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
    adapter = row_dir / "adapter"
    if is_complete(adapter):
        found += adapter_mismatches(adapter, identity)
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
