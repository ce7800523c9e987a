"""Train one LoRA adapter with TRL's ``SFTTrainer``: prompt-completion examples with the loss on the
completion only, checkpoints that a rerun resumes from, the loss history kept beside the adapter
(:mod:`.callbacks`), and a finished folder that appears only when the adapter and its manifest are
complete (:mod:`.adapter`).

The prompts come formatted as the evaluation formats them (the task's own prompt, the chat template
applied as lm-eval applies it, :mod:`.prompts`), so they are given to TRL as plain prompt-completion
text (TRL applies no template of its own to them) and the model is trained on the tokens it is
measured on.
"""

from __future__ import annotations

import errno
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapter_manifest import (
    BaseModelError,
    examples_sha256,
    is_complete,
    read_manifest,
    write_manifest,
)
from logic_consistency.harness_ext.models.base_hash import base_sha256

from .callbacks import CHECKPOINT_DONE, callbacks, history_folder, keep_history_until
from .devices import TrainingError, check_devices, quantization_config, uses_bf16
from .libraries import library_versions, training_libraries
from .merge import merge_adapter
from .recipes import TrainSettings

__all__ = ["CHECKPOINT_DONE", "Example", "TrainJob", "TrainingError", "good_checkpoint", "train_adapter"]


@dataclass(frozen=True)
class Example:
    """One training example: the prompt as the evaluation formats it, and the answer it should get."""

    prompt: str
    answer: str

    def record(self) -> dict[str, Any]:
        """The example as a chat record (a user turn, an assistant turn): what a manifest's ``data_sha256``
        hashes (:func:`.adapter.examples_sha256`) and a row's training-data file holds."""
        return {"messages": [{"role": "user", "content": self.prompt}, {"role": "assistant", "content": self.answer}]}


@dataclass(frozen=True)
class TrainJob:
    """One adapter to train.

    Attributes:
        base: The base model's transformers folder, checked (:func:`.adapter.check_base`: a study's
            driver checks it once, before any unit).
        examples: The training data (built from ``split: train`` documents only).
        out: The adapter folder to write (its loss history goes to ``<out>-history`` beside it).
        settings: The hyperparameters.
        recipe: ``repair`` or ``gv`` (recorded).
        label: The row or round, for messages and the manifest (``"round 2"``, ``"REPAIR-ed + Neg."``).
        split: The instance split the data came from (recorded).
        min_examples: Fewer examples than this is refused, naming ``label``.
        merge_weights: Also write the merged model beside the adapter (:func:`.merge.merge_adapter`).
        data_source: Where the examples came from (a dataset, its file's hash and size), recorded.
    """

    base: Path
    examples: Sequence[Example]
    out: Path
    settings: TrainSettings
    recipe: str
    label: str
    split: str = "train"
    min_examples: int = 1
    merge_weights: bool = False
    data_source: Mapping[str, Any] | None = None


def good_checkpoint(folder: Path) -> Path | None:
    """The newest complete checkpoint under ``folder``; partial ones (a full disk, a kill) are removed."""
    found = []
    for path in folder.glob("checkpoint-*") if folder.is_dir() else []:
        if (path / CHECKPOINT_DONE).is_file():
            found.append((int(path.name.rpartition("-")[2]), path))
        else:
            shutil.rmtree(path, ignore_errors=True)
    return max(found)[1] if found else None


def _check_job(job: TrainJob) -> None:
    if len(job.examples) < job.min_examples:
        raise TrainingError(
            f"{job.label}: the training set has {len(job.examples)} examples, fewer than the {job.min_examples} "
            "needed; not training on (almost) nothing (the model was rarely consistent: use more documents "
            "with --limit, or lower --min-examples)"
        )


def train_adapter(job: TrainJob) -> dict[str, Any]:
    """Train (or resume, or keep) the adapter of ``job``; return its manifest.

    A finished adapter at ``job.out`` is kept as it is. Otherwise checkpoints go to
    ``<out>.partial/checkpoints`` and training resumes from the newest complete one; the loss history
    goes to ``<out>-history`` (:func:`.callbacks.history_folder`) and outlives the checkpoints.

    Raises:
        BaseModelError: transformers cannot load the base (an unknown architecture).
        TrainingError: Too few examples (naming the round), a NaN loss (naming the step), out of
            memory (naming the settings to lower), a full disk (the last good checkpoint is kept),
            several GPUs, or QLoRA without a GPU or bitsandbytes (:func:`.devices.check_devices`).
        TrainingUnavailable: The ``train`` extra is missing (with the install line).
    """
    base = job.base
    _check_job(job)
    if is_complete(job.out):
        return _merged(job, read_manifest(job.out))
    peft, transformers, trl = training_libraries()
    device = check_devices(job.settings)
    started = time.monotonic()
    tokenizer = _load_base(transformers, base)
    work = job.out.with_name(f"{job.out.name}.partial")
    bf16 = uses_bf16(job.settings, device)
    model = _model(transformers, base, job.settings, bf16)
    resumed = good_checkpoint(work / "checkpoints")
    before = _tokens_at(resumed)
    history = history_folder(job.out)
    if resumed:
        keep_history_until(history, before[0])
    else:  # a fresh run: the lines of a try stopped before its first checkpoint are not this run's
        shutil.rmtree(history, ignore_errors=True)
    trainer = _trainer(peft, transformers, trl, model, tokenizer, job, work / "checkpoints", bf16)
    trained = len(trainer.train_dataset)
    if trained < job.min_examples:
        raise TrainingError(
            f"{job.label}: only {trained} of {len(job.examples)} examples are left to train on (held out for "
            f"eval_fraction={job.settings.eval_fraction}, or empty once cut to max_length="
            f"{job.settings.max_length}); lower --train-args eval_fraction or raise max_length"
        )
    result = _run(trainer, work / "checkpoints", resumed, job)
    wall = time.monotonic() - started
    staging = work / "adapter"
    shutil.rmtree(staging, ignore_errors=True)
    trainer.model.save_pretrained(staging)  # peft writes safetensors (adapter_model.safetensors)
    manifest = {
        "base_model": str(base),
        "base_sha256": base_sha256(base),  # folder_sha256, read once per state of the base's files
        "recipe": job.recipe,
        "round": job.label,
        "split": job.split,
        "data_sha256": examples_sha256(job.examples),
        "data_examples": len(job.examples),
        "data_examples_trained": trained,
        "data_examples_held_out": len(trainer.eval_dataset) if trainer.eval_dataset is not None else 0,
        "data_source": dict(job.data_source) if job.data_source is not None else None,
        "hyperparameters": job.settings.as_dict(),
        "seed": job.settings.seed,
        "libraries": library_versions(),
        "device": device,
        "bf16": bf16,
        "gradient_checkpointing": bool(trainer.args.gradient_checkpointing),
        "steps": int(result.global_step),
        "train_loss": float(result.training_loss),
        "wall_time_s": round(wall, 2),
        "train_runtime_s": round(float(result.metrics.get("train_runtime", wall)), 2),
        "history": str(history),
        **_throughput(trainer.state, result, before),
    }
    write_manifest(staging, job.out, manifest)
    shutil.rmtree(work, ignore_errors=True)
    return _merged(job, manifest)


def _merged(job: TrainJob, manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest, after writing the merged weights where the job asks for them."""
    if job.merge_weights:
        return {**manifest, "merged": str(merge_adapter(job.out))}
    return manifest


def _tokens_at(checkpoint: Path | None) -> tuple[int, int]:
    """``(step, tokens seen)`` recorded in a checkpoint's ``trainer_state.json`` (``(0, 0)``: none)."""
    if checkpoint is None:
        return 0, 0
    state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    return int(state.get("global_step", 0)), int(state.get("num_input_tokens_seen", 0))


def _throughput(state: Any, result: Any, before: tuple[int, int]) -> dict[str, Any]:
    """The tokens the steps actually ran (prompt and completion, padding not counted; the Trainer counts
    them batch by batch, so ``max_steps`` below or above one pass over the data is counted as run), and
    their rate over this run's own time: after a resume from a checkpoint at ``before`` = ``(step,
    tokens)``, the Trainer's run time covers only the steps after it, and so does the rate."""
    runtime = float(result.metrics.get("train_runtime") or 0.0)
    total = int(state.num_input_tokens_seen)
    run_tokens = total - before[1]
    return {
        "train_tokens": total,
        "train_tokens_per_s": round(run_tokens / runtime, 1) if runtime > 0 and run_tokens > 0 else None,
        "resumed_from_step": before[0],
    }


def _load_base(transformers: Any, base: Path) -> Any:
    """The base's tokenizer, once its configuration names an architecture transformers can build."""
    try:
        config = transformers.AutoConfig.from_pretrained(base)
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

        MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]  # a KeyError for an architecture that is not a causal LM
        return transformers.AutoTokenizer.from_pretrained(base)
    except (ValueError, KeyError, OSError) as error:
        raise BaseModelError(f"--base {base}: transformers cannot load it as a causal LM ({error})") from None


def _model(transformers: Any, base: Path, settings: TrainSettings, bf16: bool) -> Any:
    import torch

    quantized = quantization_config(transformers, settings, bf16)
    # A 4-bit base is quantised while it loads onto the one GPU (check_devices made sure there is one).
    placed = {"quantization_config": quantized, "device_map": {"": 0}} if quantized is not None else {}
    try:
        return transformers.AutoModelForCausalLM.from_pretrained(
            base, dtype=torch.bfloat16 if bf16 else torch.float32, **placed
        )
    except (ValueError, KeyError, OSError) as error:
        raise BaseModelError(f"--base {base}: transformers cannot load it as a causal LM ({error})") from None


def _prompt(tokenizer: Any, prompt: str) -> str:
    """The prompt as TRL should get it to tokenise it as lm-eval does.

    Hand-written because the two differ on one point: lm-eval adds no BOS to a text that already starts
    with it (a chat template that writes it), TRL tokenises with the tokenizer's defaults. Where the
    tokenizer adds a BOS itself, the template's own BOS text is dropped here and the tokenizer adds it
    back: one BOS, as in the evaluation, not two.
    """
    bos = tokenizer.bos_token
    if bos and prompt.startswith(bos) and tokenizer("")["input_ids"][:1] == [tokenizer.bos_token_id]:
        return prompt[len(bos) :]
    return prompt


def _datasets(job: TrainJob, tokenizer: Any) -> tuple[Any, Any]:
    """TRL's prompt-completion dataset of the examples, and its held-out part (``None``: no evaluation)."""
    from datasets import Dataset

    data = Dataset.from_list([{"prompt": _prompt(tokenizer, e.prompt), "completion": e.answer} for e in job.examples])
    if job.settings.eval_fraction <= 0:
        return data, None
    split = data.train_test_split(test_size=job.settings.eval_fraction, seed=job.settings.seed)
    return split["train"], split["test"]


def _trainer(
    peft: Any, transformers: Any, trl: Any, model: Any, tokenizer: Any, job: TrainJob, folder: Path, bf16: bool
) -> Any:
    import torch

    s = job.settings
    train, held_out = _datasets(job, tokenizer)
    checkpointing = s.gradient_checkpointing == "yes" and bool(getattr(model, "supports_gradient_checkpointing", False))
    arguments = trl.SFTConfig(
        output_dir=str(folder),
        per_device_train_batch_size=s.batch_size,
        per_device_eval_batch_size=s.batch_size,
        gradient_accumulation_steps=s.grad_accum,
        learning_rate=s.lr,
        num_train_epochs=s.epochs,
        max_steps=s.max_steps,
        weight_decay=s.weight_decay,
        lr_scheduler_type=s.scheduler,
        warmup_steps=s.warmup_ratio,  # transformers 5: a float in [0, 1) is a share of the steps
        optim="adamw_torch",
        logging_steps=1,
        logging_nan_inf_filter=False,  # a NaN must reach the guard, not be averaged away
        save_strategy="steps",
        save_steps=s.save_steps,
        save_total_limit=2,
        eval_strategy="steps" if held_out is not None else "no",
        eval_steps=s.eval_steps or s.save_steps,
        seed=s.seed,
        bf16=bf16,  # SFTConfig's default is bf16 on: the study decides (devices.uses_bf16)
        fp16=False,
        gradient_checkpointing=checkpointing,
        use_cpu=not torch.cuda.is_available(),
        report_to=[],  # the history callbacks write the logs beside the adapter, not under the checkpoints
        include_num_input_tokens_seen="non_padding",
        max_length=s.max_length,
        completion_only_loss=True,
        packing=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    lora = peft.LoraConfig(
        r=s.lora_r,
        lora_alpha=s.lora_alpha,
        lora_dropout=s.lora_dropout,
        target_modules=_targets(model, s.lora_target_modules),
        task_type="CAUSAL_LM",
    )
    transformers.set_seed(s.seed)  # the LoRA initialisation, drawn when the trainer wraps the model
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return trl.SFTTrainer(
        model=model,
        args=arguments,
        train_dataset=train,
        eval_dataset=held_out,
        processing_class=tokenizer,
        peft_config=lora,
        callbacks=callbacks(transformers, history_folder(job.out)),
    )


def _targets(model: Any, text: str) -> str | list[str]:
    """``lora_target_modules`` as peft takes it, each name checked against the model's modules.

    Hand-written because peft adapts the names that match and drops a mistyped one without a word
    (it refuses only when none matches).
    """
    if text == "all-linear":
        return text
    names = {name.rpartition(".")[2] for name, _ in model.named_modules()}
    wanted = [name for name in text.split("+") if name]
    unknown = [name for name in wanted if name not in names]
    if unknown or not wanted:
        raise TrainingError(
            f"--train-args lora_target_modules={text}: the model has no module {', '.join(unknown) or '(none named)'}; "
            f"its linear modules: {'+'.join(_linear_modules(model))} (or all-linear)"
        )
    return wanted


def _linear_modules(model: Any) -> list[str]:
    """The names of the model's linear modules (what ``lora_target_modules`` may name), sorted."""
    return sorted(
        {name.rpartition(".")[2] for name, module in model.named_modules() if type(module).__name__ == "Linear"}
    )


def _run(trainer: Any, folder: Path, resume: Path | None, job: TrainJob) -> Any:
    """``trainer.train()``, resumed from ``resume`` (the last good checkpoint under ``folder``); memory and
    disk errors say what to do."""
    import torch

    try:
        return trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    except torch.OutOfMemoryError:
        raise TrainingError(_oom_message(job)) from None
    except RuntimeError as error:
        if "can't allocate memory" in str(error) or "out of memory" in str(error).lower():
            raise TrainingError(_oom_message(job)) from None
        raise
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        kept = good_checkpoint(folder)
        raise TrainingError(
            f"{job.label}: the disk filled while writing under {folder} ({error.strerror}); "
            f"the last good checkpoint ({kept.name if kept else 'none yet'}) is kept: free space and run "
            "the same command again to resume"
        ) from None


def _oom_message(job: TrainJob) -> str:
    s = job.settings
    larger = [] if s.gradient_checkpointing == "yes" else ["gradient_checkpointing=yes"]
    larger += [] if s.quantize == "4bit" else ["quantize=4bit (QLoRA, on a GPU)"]
    return (
        f"{job.label}: out of memory with batch_size={s.batch_size}, max_length={s.max_length}; lower "
        f"--train-args batch_size (and raise grad_accum to keep batch_size x grad_accum = {s.batch_size * s.grad_accum}) "
        f"or max_length{', or set ' + ' and '.join(larger) if larger else ''}"
    )


def remove_partial(out: Path) -> None:
    """Remove the checkpoints of an adapter that is finished (a study cleaning up after itself)."""
    if is_complete(out):
        shutil.rmtree(out.with_name(f"{out.name}.partial"), ignore_errors=True)
