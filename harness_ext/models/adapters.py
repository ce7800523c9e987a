"""An adapter folder given as a model argument (``peft=FOLDER``): its weights are safetensors only.

Checked before anything loads them, by a direct ``lm_eval`` run (``publish/``) and by the improve
study (``training/``), so it lives in the room both stand on.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PICKLED", "check_adapter_weights"]

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
