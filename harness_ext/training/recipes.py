"""What a fine-tuning recipe declares about its training: its paper's values as defaults, where the
paper states each, and its trainer (:class:`TrainingRecipe`); and the hyperparameters every recipe
takes (:class:`TrainSettings`, checked like a backend's ``--model_args``).

A recipe declares its own (the pairwise paper's REPAIR in ``tasks/pairwise/improve_options.py``, the GV
paper's in ``tasks/gv/improve_options.py``): nothing here is keyed by a recipe's name, so a third recipe
with its own paper needs no edit here. A value its paper does not state (LoRA dropout, the target
modules, the maximum length, the seed, ...) is the suite's choice, the same for every recipe and said
so in ``docs/improving.md``. Every value is overridable (``--train-args lr=1e-4,max_steps=5``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, NamedTuple

from logic_consistency.harness_ext.models.args import Declaration, check_declared
from logic_consistency.options import Declared, OptionError, unique_keys

__all__ = [
    "TRAINERS",
    "PaperValues",
    "Stated",
    "TrainSettings",
    "TrainingRecipe",
    "parse_train_args",
]

#: The trainers a recipe may name, each with what it trains. TRL's ``SFTTrainer`` (:mod:`.trainer`) is the
#: only one today; a recipe names it, so that another (TRL's ``DPOTrainer``, say) is a new entry here and
#: a branch in :mod:`.trainer`, not a new kind of recipe.
TRAINERS: Mapping[str, str] = {
    "sft": "TRL's SFTTrainer: supervised fine-tuning on prompt-completion examples, the loss on the completion",
}


class PaperValues(NamedTuple):
    """A recipe's defaults: the values its paper states and, where it states none, the suite's choices."""

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


class Stated(NamedTuple):
    """One hyperparameter a recipe's paper states: the ``--train-args`` key (or ``effective_batch``:
    ``batch_size * grad_accum`` on one device), the value, the section and the words that state it."""

    key: str
    value: float | int | str
    section: str
    quote: str


#: A stated key that is no ``--train-args`` key: the product ``batch_size * grad_accum`` (one device).
EFFECTIVE_BATCH = "effective_batch"


@dataclass(frozen=True)
class TrainSettings:
    """One training run's hyperparameters (see :attr:`TrainingRecipe.declaration` for each one's meaning)."""

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
    """``"lr=1e-4,max_steps=5"`` as a mapping (values are checked by :meth:`TrainingRecipe.settings`).

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


@dataclass(frozen=True)
class TrainingRecipe:
    """What a recipe trains with, as it declares it in its family's module.

    Attributes:
        name: The recipe (``improve <name>``), in messages.
        paper: Its defaults: the values its paper states, else the suite's choices.
        stated: Each value the paper states, with its section and words (``tests/test_paper_settings.py``
            compares each with the declared default).
        trainer: A key of :data:`TRAINERS` (``sft``, TRL's ``SFTTrainer``).

    Raises:
        ValueError: An unknown trainer, or a stated key that is not a ``--train-args`` key.
    """

    name: str
    paper: PaperValues
    stated: tuple[Stated, ...] = ()
    trainer: str = "sft"

    def __post_init__(self) -> None:
        if self.trainer not in TRAINERS:
            raise ValueError(f"recipe {self.name!r}: trainer {self.trainer!r} is not one of {sorted(TRAINERS)}")
        keys = {arg.name for arg in self.declaration.declared} | {EFFECTIVE_BATCH}
        unknown = [s.key for s in self.stated if s.key not in keys]
        if unknown:
            raise ValueError(f"recipe {self.name!r}: stated {unknown} are not --train-args keys ({sorted(keys)})")

    @cached_property
    def declaration(self) -> Declaration:
        """Its ``--train-args``: every hyperparameter, with its paper's values as the defaults."""
        return _declaration(self.name, self.paper)

    def settings(self, overrides: Mapping[str, Any]) -> TrainSettings:
        """The recipe's defaults with ``overrides`` applied, each checked against its declaration.

        Args:
            overrides: Values given by the user (strings are converted; a typo names the closest key).

        Raises:
            OptionError: An unknown key or a value out of bounds, naming ``--train-args`` and the key.
        """
        declaration = self.declaration
        defaults: dict[str, Any] = {arg.name: arg.default for arg in declaration.declared}
        checked = check_declared(dict(overrides), declaration, text=True)
        if checked.get("max_steps") == 0:  # the declared bound is -1 (as many as the epochs make): 0 trains nothing
            raise OptionError(
                f"{declaration.where}: max_steps must be -1 (as many as the epochs make) or at least 1, got 0"
            )
        return TrainSettings(**{**defaults, **checked})
