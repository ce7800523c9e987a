"""An adapter folder given as a model argument (``peft=FOLDER``): its weights are safetensors only.

Checked before anything loads them, by a direct ``lm_eval`` run (``publish/``) and by the improve
study (``training/``), so it lives in the room both stand on.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["PICKLED", "check_adapter_rank", "check_adapter_weights"]

#: Weight files in pickle's format (``torch.save``): loading one can run code, so no adapter may hold one.
PICKLED = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")


def check_adapter_weights(folder: Path) -> None:
    """Refuse an adapter folder whose weights are not safetensors only (before anything loads them).

    A ``.bin`` (or other pickle) adapter can run code when it is loaded, so it is refused, not loaded
    with a warning.

    Raises:
        ValueError: Naming the folder and the pickle files, or saying that no safetensors are there.
    """
    pickled = sorted(path.name for path in folder.iterdir() if path.suffix.lower() in PICKLED)
    if pickled:
        raise ValueError(
            f"adapter {folder}: {', '.join(pickled)} is in pickle format, which can run code when loaded; "
            "only safetensors adapters are accepted (where you trust it, load it once and save it with "
            "save_pretrained(..., safe_serialization=True))"
        )
    if not any(folder.glob("*.safetensors")):
        raise ValueError(f"adapter {folder}: no *.safetensors weights (only safetensors adapters are accepted)")
    check_adapter_rank(folder)


def _tensor_shapes(path: Path) -> dict[str, list[int]]:
    """The tensor shapes a safetensors file declares, read from its JSON header (no tensor is loaded).

    The format: 8 bytes little-endian header length, then the header (``{name: {"shape": [...]}, ...}``).
    """
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        if not 0 < size <= 100_000_000:
            raise ValueError(f"{path}: not a safetensors file (header length {size})")
        try:
            header = json.loads(handle.read(size))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"{path}: not a safetensors file (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file (its header is not a JSON object)")
    return {name: list(entry.get("shape") or []) for name, entry in header.items() if isinstance(entry, dict)}


def _lora_ranks(config_path: Path) -> tuple[int, dict[str, int]] | None:
    """The rank ``r`` and the per-module ``rank_pattern`` of a LoRA ``adapter_config.json``; None when there is
    no such config, or it is not one this check reads (peft names what it misses).
    """
    if not config_path.is_file():
        return None
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{config_path}: not valid JSON ({error})") from None
    if not isinstance(config, dict) or "r" not in config:
        return None
    rank, pattern = config.get("r"), config.get("rank_pattern") or {}
    if not isinstance(rank, int) or isinstance(rank, bool) or not isinstance(pattern, dict):
        raise ValueError(f"{config_path}: 'r' must be an integer (the LoRA rank), got {rank!r}")
    return rank, pattern


def _check_weights_rank(folder: Path, config_name: str, weights: Path, rank: int, pattern: dict[str, int]) -> None:
    """Refuse a LoRA A matrix of ``weights`` whose rank is not the one the config gives its module."""
    for name, shape in _tensor_shapes(weights).items():
        if ".lora_A." not in name or not shape:
            continue
        expected = next((r for key, r in pattern.items() if key in name), rank)
        if shape[0] != expected:
            raise ValueError(
                f"adapter {folder}: {config_name} says r={expected}, but {weights.name} holds rank "
                f"{shape[0]} ({name}, shape {shape}); the config does not match the weights"
            )


def check_adapter_rank(folder: Path) -> None:
    """Refuse a LoRA adapter whose ``adapter_config.json`` rank ``r`` is not its weights' (peft would stop
    with a size-mismatch traceback while loading it), naming both files.

    Raises:
        ValueError: Naming the config, its ``r``, the weight and its rank.
    """
    config_path = folder / "adapter_config.json"
    ranks = _lora_ranks(config_path)
    if ranks is None:
        return
    for weights in sorted(folder.glob("*.safetensors")):
        _check_weights_rank(folder, config_path.name, weights, *ranks)
