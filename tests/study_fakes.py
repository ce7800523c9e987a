"""Stand-ins a study's tests and ``scripts/walk_climbs.py`` share: a trainer that leaves a finished adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapter_manifest import examples_sha256, write_manifest
from logic_consistency.harness_ext.models.base_hash import base_sha256


def finished_adapter(job: Any) -> dict[str, Any]:
    """Leave ``job``'s adapter folder finished, its manifest holding the fields a rerun checks against the row
    (``study_identity.py``); return the manifest, as the trainer does."""
    manifest = {"data_examples": len(job.examples), "steps": 1, "train_loss": 0.5, "train_tokens_per_s": 1,
                "wall_time_s": 1, "device": "cpu", "round": job.label, "recipe": job.recipe,
                "base_model": str(job.base), "base_sha256": base_sha256(Path(job.base)),
                "data_sha256": examples_sha256(job.examples),
                "hyperparameters": job.settings.as_dict()}  # fmt: skip
    staging = job.out.with_name("staging")
    staging.mkdir(parents=True)
    write_manifest(staging, job.out, manifest)
    return manifest
