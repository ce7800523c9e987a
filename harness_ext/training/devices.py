"""Where and how a training runs: one device (several GPUs are refused, never split by ``nn.DataParallel``),
the training dtype that the evaluation then uses, and the 4-bit base of a QLoRA.

Decided before any model loads, so that a refusal costs nothing.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from .recipes import TrainSettings

__all__ = ["TrainingError", "check_devices", "evaluation_dtype", "quantization_config", "uses_bf16"]


class TrainingError(RuntimeError):
    """A training that cannot go on (empty data, a NaN loss, out of memory, a full disk), saying what to do."""


def check_devices(settings: TrainSettings) -> str:
    """The device the training runs on (``cuda`` or ``cpu``), once the run is one it can do.

    Raises:
        TrainingError: Several GPUs are visible, or the process is one rank of a distributed launch:
            transformers would wrap the model in ``nn.DataParallel`` (a different effective batch, and
            GPUs idle in turn) or every rank would run the whole study; or ``quantize=4bit`` without a
            GPU or ``bitsandbytes``.
    """
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    ranks = int(os.environ.get("WORLD_SIZE", "1") or "1")
    if gpus > 1 or ranks > 1:
        seen = f"{gpus} GPUs (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"
        raise TrainingError(
            f"training sees {seen if gpus > 1 else f'WORLD_SIZE={ranks}'}: a study trains each adapter on one "
            "device (several GPUs would split each batch with nn.DataParallel, changing the effective batch, "
            "and a distributed launch would run the whole study once per rank); make one GPU visible "
            "(CUDA_VISIBLE_DEVICES=0, or --executor ray --gpus-per-row 1, which runs rows side by side on "
            "several GPUs), and fit a larger model with --train-args quantize=4bit,gradient_checkpointing=yes"
        )
    if settings.quantize == "4bit":
        _check_qlora(gpus)
    return "cuda" if gpus else "cpu"


def _check_qlora(gpus: int) -> None:
    """Refuse ``quantize=4bit`` without the one GPU and ``bitsandbytes`` it needs (naming what is missing)."""
    missing = [
        what
        for what, present in (
            ("a CUDA GPU", gpus == 1),
            ("the bitsandbytes package (pip install bitsandbytes)", importlib.util.find_spec("bitsandbytes")),
        )
        if not present
    ]
    if missing:
        raise TrainingError(
            f"--train-args quantize=4bit (QLoRA) needs {' and '.join(missing)}; it is missing here: "
            "drop quantize=4bit to train the base in its own dtype"
        )


def uses_bf16(settings: TrainSettings, device: str) -> bool:
    """Whether the base trains (and so is evaluated) in bf16: ``bf16=yes``, or ``auto`` on a GPU that has it."""
    import torch

    if settings.bf16 == "auto":
        return device == "cuda" and torch.cuda.is_bf16_supported()
    return settings.bf16 == "yes"


def evaluation_dtype(settings: TrainSettings, manifest: dict[str, Any] | None) -> str:
    """The ``dtype`` of the ``lm_eval`` model_args that score a row: the dtype its adapter trained in
    (the manifest's), else the one this study would train in here, so that every row of a study,
    the untrained ones included, is scored in the same dtype (bf16 halves a 30B model's 120 GB)."""
    if manifest is not None:
        return "bfloat16" if manifest.get("bf16") else "float32"
    import torch

    return "bfloat16" if uses_bf16(settings, "cuda" if torch.cuda.is_available() else "cpu") else "float32"


def quantization_config(transformers: Any, settings: TrainSettings, bf16: bool) -> Any:
    """The QLoRA paper's 4-bit base (NF4, double quantisation, computing in the training dtype), or ``None``."""
    if settings.quantize != "4bit":
        return None
    import torch

    return transformers.BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16 if bf16 else torch.float16,
    )
