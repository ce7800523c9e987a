"""Train one LoRA adapter: tokenised prompt + answer with the loss on the answer only, checkpoints
that a rerun resumes from, and a finished folder that appears only when the adapter and its manifest
are complete (:mod:`.adapter`).

The prompts come formatted as the evaluation formats them (the task's own prompt, the chat template
applied as lm-eval applies it), and prompt and answer are tokenised as lm-eval's hf backend
tokenises a context and its continuation (no special tokens added; the answer's tokens are those of
``prompt + answer`` after the prompt's), so the model is trained on the tokens it is measured on.
"""

from __future__ import annotations

import errno
import math
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .adapter import BaseModelError, check_base, data_sha256, folder_sha256, is_complete, read_manifest, write_manifest
from .libraries import library_versions, training_libraries
from .merge import merge_adapter
from .recipes import TrainSettings

__all__ = ["Example", "TrainJob", "TrainingError", "good_checkpoint", "train_adapter"]

#: The file a checkpoint gets once the Trainer has written all of it (a checkpoint without it is partial).
CHECKPOINT_DONE = ".logic_consistency_complete"


class TrainingError(RuntimeError):
    """A training that cannot go on (empty data, a NaN loss, out of memory, a full disk), saying what to do."""


@dataclass(frozen=True)
class Example:
    """One training example: the prompt as the evaluation formats it, and the answer it should get."""

    prompt: str
    answer: str


@dataclass(frozen=True)
class TrainJob:
    """One adapter to train.

    Attributes:
        base: The base model's transformers folder.
        examples: The training data (built from ``split: train`` documents only).
        out: The adapter folder to write.
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


def _records(examples: Sequence[Example]) -> list[dict[str, Any]]:
    return [
        {"messages": [{"role": "user", "content": e.prompt}, {"role": "assistant", "content": e.answer}]}
        for e in examples
    ]


def _tokenise(tokenizer: Any, examples: Sequence[Example], max_length: int) -> list[dict[str, list[int]]]:
    """Input ids and labels (``-100`` over the prompt) of each example that fits ``max_length``."""
    rows = []
    for example in examples:
        context = tokenizer(example.prompt, add_special_tokens=False)["input_ids"]
        whole = tokenizer(example.prompt + example.answer, add_special_tokens=False)["input_ids"]
        answer = whole[len(context) :] + ([tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else [])
        ids = whole[: len(context)] + answer
        if len(ids) > max_length or not answer:
            continue
        rows.append({"input_ids": ids, "labels": [-100] * len(context) + answer})
    return rows


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
    ``<out>.partial/checkpoints`` and training resumes from the newest complete one.

    Raises:
        BaseModelError: The base cannot be trained (GGUF only, no weights, unknown architecture).
        TrainingError: Too few examples (naming the round), a NaN loss (naming the step), out of
            memory (naming the settings to lower), a full disk (the last good checkpoint is kept).
        TrainingUnavailable: The ``train`` extra is missing (with the install line).
    """
    base = check_base(job.base)
    _check_job(job)
    if is_complete(job.out):
        return _merged(job, read_manifest(job.out))
    peft, transformers = training_libraries()
    started = time.monotonic()
    tokenizer = _load_base(transformers, base)
    rows = _tokenise(tokenizer, job.examples, job.settings.max_length)
    if len(rows) < job.min_examples:
        raise TrainingError(
            f"{job.label}: only {len(rows)} of {len(job.examples)} examples fit max_length={job.settings.max_length} "
            "tokens; raise --train-args max_length"
        )
    work = job.out.with_name(f"{job.out.name}.partial")
    model, device, bf16 = _model(peft, transformers, base, job)
    resumed = good_checkpoint(work / "checkpoints")
    trainer = _trainer(transformers, model, tokenizer, rows, work / "checkpoints", job.settings, bf16)
    result = _run(trainer, work / "checkpoints", resumed, job)
    wall = time.monotonic() - started
    staging = work / "adapter"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    records = _records(job.examples)
    manifest = {
        "base_model": str(base),
        "base_sha256": folder_sha256(base),
        "recipe": job.recipe,
        "round": job.label,
        "split": job.split,
        "data_sha256": data_sha256(records),
        "data_examples": len(job.examples),
        "data_examples_trained": len(rows),
        "data_source": dict(job.data_source) if job.data_source is not None else None,
        "hyperparameters": job.settings.as_dict(),
        "seed": job.settings.seed,
        "libraries": library_versions(),
        "device": device,
        "bf16": bf16,
        "steps": int(result.global_step),
        "train_loss": float(result.training_loss),
        "wall_time_s": round(wall, 2),
        "train_runtime_s": round(float(result.metrics.get("train_runtime", wall)), 2),
        **_throughput(trainer, rows, result, int(resumed.name.rpartition("-")[2]) if resumed else 0),
    }
    write_manifest(staging, job.out, manifest)
    shutil.rmtree(work, ignore_errors=True)
    return _merged(job, manifest)


def _merged(job: TrainJob, manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest, after writing the merged weights where the job asks for them."""
    if job.merge_weights:
        return {**manifest, "merged": str(merge_adapter(job.out))}
    return manifest


def _throughput(trainer: Any, rows: list[dict[str, list[int]]], result: Any, resumed_step: int) -> dict[str, Any]:
    """Tokens trained (prompt and answer, repeated epochs counted; estimated from the mean example
    length and the examples the steps took) and the rate of this run's own steps over the Trainer's
    run time: after a resume from ``checkpoint-<resumed_step>`` the run time covers only the steps
    after it, so the steps before it are not counted in the rate."""
    per_step = trainer.args.per_device_train_batch_size * trainer.args.gradient_accumulation_steps
    mean_length = sum(len(r["input_ids"]) for r in rows) / len(rows)

    def examples_by(step: int) -> int:
        examples = step * per_step
        if trainer.args.max_steps <= 0:  # the last batch of an epoch may be short
            examples = min(examples, len(rows) * math.ceil(trainer.args.num_train_epochs))
        return int(examples)

    runtime = float(result.metrics.get("train_runtime") or 0.0)
    run_tokens = (examples_by(result.global_step) - examples_by(resumed_step)) * mean_length
    return {
        "train_tokens": round(examples_by(result.global_step) * mean_length),
        "train_tokens_per_s": round(run_tokens / runtime, 1) if runtime > 0 and run_tokens > 0 else None,
        "resumed_from_step": resumed_step,
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


def _model(peft: Any, transformers: Any, base: Path, job: TrainJob) -> tuple[Any, str, bool]:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    bf16 = job.settings.bf16 == "yes" or (
        job.settings.bf16 == "auto" and device == "cuda" and torch.cuda.is_bf16_supported()
    )
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16 if bf16 else torch.float32)
    except (ValueError, KeyError, OSError) as error:
        raise BaseModelError(f"--base {base}: transformers cannot load it as a causal LM ({error})") from None
    config = peft.LoraConfig(
        r=job.settings.lora_r,
        lora_alpha=job.settings.lora_alpha,
        lora_dropout=job.settings.lora_dropout,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )
    transformers.set_seed(job.settings.seed)
    return peft.get_peft_model(model, config), device, bf16


def _trainer(
    transformers: Any,
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, list[int]]],
    folder: Path,
    settings: TrainSettings,
    bf16: bool,
) -> Any:
    import torch

    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    arguments = transformers.TrainingArguments(
        output_dir=str(folder),
        per_device_train_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.grad_accum,
        learning_rate=settings.lr,
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps,
        weight_decay=settings.weight_decay,
        lr_scheduler_type=settings.scheduler,
        warmup_steps=settings.warmup_ratio,  # transformers 5: a float in [0, 1) is a share of the steps
        optim="adamw_torch",
        logging_steps=1,
        logging_nan_inf_filter=False,  # a NaN must reach the check below, not be averaged away
        save_strategy="steps",
        save_steps=settings.save_steps,
        save_total_limit=2,
        seed=settings.seed,
        bf16=bf16,
        use_cpu=not torch.cuda.is_available(),
        report_to=[],
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    collator = transformers.DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=-100)
    callback = _guard_callback(transformers)
    return transformers.Trainer(
        model=model, args=arguments, train_dataset=rows, data_collator=collator, callbacks=[callback()]
    )


def _guard_callback(transformers: Any) -> Any:
    """A callback that stops on a NaN loss (naming the step) and marks each checkpoint complete."""

    class Guard(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            loss = (logs or {}).get("loss")
            if loss is not None and not math.isfinite(float(loss)):
                raise TrainingError(
                    f"the loss became {loss} at step {state.global_step}; stopped (lower --train-args lr, "
                    "or check the training data)"
                )

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                (folder / CHECKPOINT_DONE).write_text(str(state.global_step), encoding="utf-8")

    return Guard


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
    return (
        f"{job.label}: out of memory with batch_size={s.batch_size}, max_length={s.max_length}; lower "
        f"--train-args batch_size (and raise grad_accum to keep batch_size x grad_accum = {s.batch_size * s.grad_accum}) "
        "or max_length"
    )


def remove_partial(out: Path) -> None:
    """Remove the checkpoints of an adapter that is finished (a study cleaning up after itself)."""
    if is_complete(out):
        shutil.rmtree(out.with_name(f"{out.name}.partial"), ignore_errors=True)
