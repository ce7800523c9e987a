"""The two papers' fine-tuning hyperparameters, declared once as the defaults of every study.

Pairwise paper (Liu et al., Appendix F "Instruction-Tuning: Training Details"): lr 5e-5, 2 epochs,
weight decay 1e-2, LoRA r 16 and alpha 64, batch 4 with gradient accumulation 2. GV paper (Li et al.,
Appendix F "Hyperparameters", and §5 "Models"): AdamW, cosine schedule, warmup ratio 0.03, lr 2e-4,
batch 64 "with gradient accumulation steps of 8 and 8 GPU machines" (1 per GPU), LoRA r 32 and alpha
32, 3 epochs for arithmetic and 6 for the other tasks. :data:`STATED` holds each stated value with
its section; a value neither paper states (LoRA dropout, the target modules, the maximum length, the
seed; the GV weight decay; the pairwise schedule and warmup) is the suite's choice, said so in
``docs/improving.md``. Every value is overridable (``--train-args lr=1e-4,max_steps=5``), checked like
a backend's ``--model_args``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

from logic_consistency.harness_ext.models.args import Declaration, check_declared
from logic_consistency.options import Declared, OptionError, unique_keys

__all__ = [
    "PAPER_VALUES",
    "RECIPES",
    "STATED",
    "PaperValues",
    "Stated",
    "TrainSettings",
    "long_task_settings",
    "parse_train_args",
    "settings_for",
]


class PaperValues(NamedTuple):
    """A recipe's defaults: the values its paper states (Appendix F of each) and the suite's choices."""

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
            Declared("epochs", float, float(epochs), "passes over the training data", 0.0, 1000.0, exclusive=True),
            Declared("max_steps", int, -1, "optimizer steps (-1 = as many as the epochs make; 0 is refused)", -1),
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
            # Scale and the loss history (issue 41): not the papers' settings, so the same for both recipes.
            Declared(
                "lora_target_modules",
                str,
                "all-linear",
                "the modules LoRA adapts: all-linear, or module names joined by + (q_proj+v_proj)",
            ),
            Declared(
                "gradient_checkpointing",
                str,
                "yes",
                "recompute activations in the backward pass (less memory, about 30% slower) where the model supports it",
                choices=("yes", "no"),
            ),
            Declared(
                "quantize",
                str,
                "none",
                "4bit: QLoRA (the base loaded in NF4; bitsandbytes and a GPU)",
                choices=("none", "4bit"),
            ),
            Declared(
                "eval_fraction",
                float,
                0.0,
                "share of the training examples held out for a loss during training",
                0.0,
                0.5,
            ),
            Declared("eval_steps", int, 0, "optimizer steps between held-out losses (0: save_steps)", 0),
        ),
        unknown="refuse",
    )


#: Each recipe's defaults: the paper's values where it states them (:data:`STATED`), else the suite's
#: choice (repair: linear schedule, no warmup, as transformers' Trainer defaults; gv: no weight decay,
#: AdamW's usual value in transformers). The GV epochs (3) are the arithmetic setting; settings_for
#: raises them to 6 for the other GV tasks. GV batch: the paper's 64 is 1 per GPU x accumulation 8 x 8
#: GPUs; on the one device a study trains on, 8 per batch x accumulation 8 gives the same 64 updates'
#: worth of examples per step (a study trains on one visible GPU: ``devices.py`` refuses several).
PAPER_VALUES: Mapping[str, PaperValues] = {
    "repair": PaperValues(5e-5, 2, 0.01, 16, 64, 4, 2, "linear", 0.0),
    "gv": PaperValues(2e-4, 3, 0.0, 32, 32, 8, 8, "cosine", 0.03),
}


class Stated(NamedTuple):
    """One hyperparameter a paper states: the recipe, the ``--train-args`` key, the value and where."""

    recipe: str
    key: str
    value: float | int | str
    section: str
    quote: str


#: Every training value the two papers state, with its section and the words that state it
#: (``tests/test_paper_settings.py`` compares each with the declared default). Effective batch is
#: ``batch_size * grad_accum``: the GV paper states the product (64) and the accumulation (8).
STATED: tuple[Stated, ...] = (
    Stated("repair", "lr", 5e-5, "Liu et al. App. F", "A learning rate of 5x10^-5"),
    Stated("repair", "epochs", 2, "Liu et al. App. F", "over the course of 2 training epochs"),
    Stated("repair", "weight_decay", 0.01, "Liu et al. App. F", "A weight decay of 1x10^-2"),
    Stated("repair", "lora_r", 16, "Liu et al. App. F", "the rank r was set to 16"),
    Stated("repair", "lora_alpha", 64, "Liu et al. App. F", "the scaling factor alpha was set to 64"),
    Stated("repair", "batch_size", 4, "Liu et al. App. F", "The batch size during training was 4"),
    Stated("repair", "grad_accum", 2, "Liu et al. App. F", "with a gradient accumulation step of 2"),
    Stated("gv", "lr", 2e-4, "Li et al. §5 Models, App. F", "learning rate of 2e-4"),
    Stated("gv", "epochs", 3, "Li et al. App. F", "epoch size of 3 for arithmetic"),
    Stated("gv", "scheduler", "cosine", "Li et al. App. F", "a cosine learning rate schedule"),
    Stated("gv", "warmup_ratio", 0.03, "Li et al. App. F", "a warmup ratio of 0.03"),
    Stated("gv", "effective_batch", 64, "Li et al. §5 Models, App. F", "batch size of 64"),
    Stated("gv", "grad_accum", 8, "Li et al. App. F", "with gradient accumulation steps of 8 and 8 GPU machines"),
    Stated("gv", "lora_r", 32, "Li et al. §5 Models, App. F", "LoRA with low-rank dimension of 32"),
    Stated("gv", "lora_alpha", 32, "Li et al. App. F", "and alpha of 32"),
)

#: The GV epochs for every task other than arithmetic (Li et al. App. F: "epoch size of 6 for all other tasks").
GV_OTHER_TASK_EPOCHS = 6.0

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
    lora_target_modules: str
    gradient_checkpointing: str
    quantize: str
    eval_fraction: float
    eval_steps: int

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
    checked = check_declared(dict(overrides), declaration, text=True)
    if checked.get("max_steps") == 0:  # the declared bound is -1 (as many as the epochs make): 0 trains nothing
        raise OptionError(
            f"{declaration.where}: max_steps must be -1 (as many as the epochs make) or at least 1, got 0"
        )
    settings = TrainSettings(**{**defaults, **checked})
    return long_task_settings(settings, checked) if recipe == "gv" and long_task else settings


def long_task_settings(settings: TrainSettings, overrides: Mapping[str, Any]) -> TrainSettings:
    """GV's ``settings`` (checked: :func:`settings_for`) for a task other than arithmetic: 6 epochs (Li et
    al. App. F), unless ``overrides`` (``--train-args``) set the epochs."""
    return settings if "epochs" in overrides else replace(settings, epochs=GV_OTHER_TASK_EPOCHS)
