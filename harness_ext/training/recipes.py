"""The two papers' fine-tuning hyperparameters, declared once as the defaults of every study.

Pairwise paper (Liu et al., Appendix F): lr 5e-5, 2 epochs, weight decay 0.01, LoRA r 16 and alpha 64,
batch 4 with gradient accumulation 2. GV paper (Li et al., Appendix F): AdamW, cosine schedule, warmup
0.03, lr 2e-4, LoRA r 32 and alpha 32, 3 epochs for arithmetic and 6 for the other tasks. Every value
is overridable (``--train-args lr=1e-4,max_steps=5``), checked like a backend's ``--model_args``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from logic_consistency.harness_ext.models.args import Declaration, check_declared
from logic_consistency.options import Declared, unique_keys

__all__ = ["PAPER_VALUES", "RECIPES", "PaperValues", "TrainSettings", "parse_train_args", "settings_for"]


class PaperValues(NamedTuple):
    """The hyperparameters a paper states (Appendix F of each), the defaults of its recipe."""

    lr: float
    epochs: int
    weight_decay: float
    r: int
    alpha: int
    batch: int
    accumulation: int
    scheduler: str
    warmup: float


def _declaration(recipe: str, paper: PaperValues) -> Declaration:
    lr, epochs, weight_decay, r, alpha, batch, accumulation, scheduler, warmup = paper
    return Declaration(
        where=f"improve {recipe} --train-args",
        declared=(
            Declared("lr", float, lr, "peak learning rate (AdamW)", 0.0, 1.0),
            Declared("epochs", float, float(epochs), "passes over the training data", 0.0, 1000.0),
            Declared("max_steps", int, -1, "optimizer steps (-1 = as many as the epochs make)", -1),
            Declared("weight_decay", float, weight_decay, "AdamW weight decay", 0.0, 1.0),
            Declared("lora_r", int, r, "LoRA rank r", 1, 4096),
            Declared("lora_alpha", int, alpha, "LoRA scaling alpha", 1, 65536),
            Declared("lora_dropout", float, 0.05, "dropout on the LoRA input", 0.0, 1.0),
            Declared("batch_size", int, batch, "examples per device batch (lower it on out of memory)", 1, 4096),
            Declared("grad_accum", int, accumulation, "batches per optimizer step", 1, 4096),
            Declared("scheduler", str, scheduler, "learning-rate schedule", choices=("linear", "cosine", "constant")),
            Declared("warmup_ratio", float, warmup, "share of the steps spent warming up", 0.0, 0.99),
            Declared("max_length", int, 1024, "tokens per example, prompt + answer (lower it on out of memory)", 8),
            Declared("save_steps", int, 50, "optimizer steps between checkpoints (a resumed run starts there)", 1),
            Declared("seed", int, 1234, "seed of the LoRA initialisation and the data order", 0),
            Declared(
                "bf16", str, "auto", "bf16 training: auto = where the device supports it", choices=("auto", "yes", "no")
            ),
        ),
        unknown="refuse",
    )


#: Each recipe's paper values. The GV epochs (3) are the arithmetic setting; settings_for raises them
#: to 6 for the other GV tasks.
PAPER_VALUES: Mapping[str, PaperValues] = {
    "repair": PaperValues(5e-5, 2, 0.01, 16, 64, 4, 2, "linear", 0.0),
    "gv": PaperValues(2e-4, 3, 0.0, 32, 32, 4, 1, "cosine", 0.03),
}

#: Each recipe's declaration: its hyperparameters with the paper's values as defaults.
RECIPES: Mapping[str, Declaration] = {recipe: _declaration(recipe, paper) for recipe, paper in PAPER_VALUES.items()}


@dataclass(frozen=True)
class TrainSettings:
    """One training run's hyperparameters (see :data:`RECIPES` for each one's meaning)."""

    lr: float
    epochs: float
    max_steps: int
    weight_decay: float
    lora_r: int
    lora_alpha: int
    lora_dropout: float
    batch_size: int
    grad_accum: int
    scheduler: str
    warmup_ratio: float
    max_length: int
    save_steps: int
    seed: int
    bf16: str

    def as_dict(self) -> dict[str, Any]:
        """The settings as a JSON object (the manifest's ``hyperparameters``)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def parse_train_args(text: str | None) -> dict[str, str]:
    """``"lr=1e-4,max_steps=5"`` as a mapping (values are checked by :func:`settings_for`).

    Raises:
        ValueError: A part without ``=`` (naming it and ``--train-args``); a key given twice (an
            :class:`~logic_consistency.options.OptionError`).
    """
    if not text:
        return {}
    pairs = []
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--train-args: expected KEY=VALUE, got {part!r}")
        pairs.append((key.strip(), value.strip()))
    return unique_keys(pairs, where="--train-args")


def settings_for(recipe: str, overrides: Mapping[str, Any], *, long_task: bool = False) -> TrainSettings:
    """The recipe's defaults with ``overrides`` applied, each checked against its declaration.

    Args:
        recipe: ``repair`` or ``gv``.
        overrides: Values given by the user (strings are converted; a typo names the closest key).
        long_task: GV only: a task other than arithmetic (6 epochs, the paper's setting).

    Raises:
        OptionError: An unknown key or a value out of bounds, naming ``--train-args`` and the key.
    """
    declaration = RECIPES[recipe]
    defaults: dict[str, Any] = {arg.name: arg.default for arg in declaration.declared}
    if recipe == "gv" and long_task:
        defaults["epochs"] = 6.0
    checked = check_declared(dict(overrides), declaration, text=True)
    return TrainSettings(**{**defaults, **checked})
