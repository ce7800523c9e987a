"""The ``improve gv`` recipe's training, as the GV paper states it: its hyperparameters as the
``--train-args`` defaults, where the paper states each, its trainer (TRL's SFT), and App. F's epochs
per task (:func:`long_task_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from logic_consistency.harness_ext.training.recipe_api import PaperValues, Stated, TrainingRecipe, TrainSettings

__all__ = ["GV_OTHER_TASK_EPOCHS", "TRAINING", "long_task_settings"]

#: The GV paper's fine-tuning (Li et al., Appendix F "Hyperparameters", and §5 "Models"): AdamW, cosine
#: schedule, warmup ratio 0.03, lr 2e-4, batch 64 "with gradient accumulation steps of 8 and 8 GPU
#: machines" (1 per GPU), LoRA r 32 and alpha 32, 3 epochs for arithmetic (6 for the other tasks:
#: :func:`long_task_settings`). Not stated there, the suite's choice: no weight decay (AdamW's usual value
#: in transformers). Batch: on the one device a study trains on, 8 per batch x accumulation 8 gives the
#: paper's 64 examples per step (a study trains on one visible GPU: ``devices.py`` refuses several).
#: Effective batch is ``batch_size * grad_accum``: the paper states the
#: product (64) and the accumulation (8).
TRAINING = TrainingRecipe(
    "gv",
    PaperValues(
        lr=2e-4, epochs=3, weight_decay=0.0, r=32, alpha=32, batch=8, accumulation=8, scheduler="cosine", warmup=0.03
    ),  # fmt: skip
    stated=(
        Stated("lr", 2e-4, "Li et al. §5 Models, App. F", "learning rate of 2e-4"),
        Stated("epochs", 3, "Li et al. App. F", "epoch size of 3 for arithmetic"),
        Stated("scheduler", "cosine", "Li et al. App. F", "a cosine learning rate schedule"),
        Stated("warmup_ratio", 0.03, "Li et al. App. F", "a warmup ratio of 0.03"),
        Stated("effective_batch", 64, "Li et al. §5 Models, App. F", "batch size of 64"),
        Stated("grad_accum", 8, "Li et al. App. F", "with gradient accumulation steps of 8 and 8 GPU machines"),
        Stated("lora_r", 32, "Li et al. §5 Models, App. F", "LoRA with low-rank dimension of 32"),
        Stated("lora_alpha", 32, "Li et al. App. F", "and alpha of 32"),
    ),
    trainer="sft",
)

#: The GV epochs for every task other than arithmetic (Li et al. App. F: "epoch size of 6 for all other tasks").
GV_OTHER_TASK_EPOCHS = 6.0


def long_task_settings(settings: TrainSettings, overrides: Mapping[str, Any]) -> TrainSettings:
    """GV's ``settings`` (checked: :meth:`TrainingRecipe.settings`) for a task other than arithmetic: 6 epochs
    (Li et al. App. F), unless ``overrides`` (``--train-args``) set the epochs."""
    return settings if "epochs" in overrides else replace(settings, epochs=GV_OTHER_TASK_EPOCHS)
