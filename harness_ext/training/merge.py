"""Merged weights: a finished adapter folded into its base (peft ``merge_and_unload``), written as a plain
transformers folder of safetensors beside the adapter, for servers that take no LoRA (vLLM without
``--enable-lora``, a llama.cpp GGUF conversion).

The merged folder appears complete or not at all, like an adapter: it is written under a temporary
name, its manifest (the adapter's, with ``merged_from``) last, then renamed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapter_manifest import (
    check_adapter_weights,
    is_complete,
    read_manifest,
    write_manifest,
)

from .libraries import training_libraries

__all__ = ["merge_adapter", "merged_folder"]


def merged_folder(adapter: Path) -> Path:
    """Where an adapter's merged weights go: ``<adapter>-merged`` beside it."""
    return adapter.with_name(f"{adapter.name}-merged")


def merge_adapter(adapter: Path, out: Path | None = None) -> Path:
    """Fold the finished ``adapter`` into its base and write the merged model (kept if already there).

    The base is the one the adapter's manifest names, loaded in the dtype it was trained in; the
    tokenizer is the base's, so ``transformers`` and vLLM load the folder as they load the base.

    Raises:
        ValueError: ``adapter`` is not a finished adapter (no manifest), or its weights are not safetensors.
        TrainingUnavailable: The ``train`` extra is missing.
    """
    manifest = read_manifest(adapter)
    check_adapter_weights(adapter)
    target = out or merged_folder(adapter)
    if is_complete(target):
        return target
    peft, transformers, _ = training_libraries()
    import torch

    base = Path(manifest["base_model"])
    dtype = torch.bfloat16 if manifest.get("bf16") else torch.float32
    model: Any = transformers.AutoModelForCausalLM.from_pretrained(base, dtype=dtype)
    merged = peft.PeftModel.from_pretrained(model, adapter).merge_and_unload()
    staging = target.with_name(f".{target.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    merged.save_pretrained(staging, safe_serialization=True)
    transformers.AutoTokenizer.from_pretrained(base).save_pretrained(staging)
    write_manifest(staging, target, {**manifest, "merged_from": str(adapter)})
    return target
