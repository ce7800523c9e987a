"""The LoRA trainer (TRL's SFTTrainer) on a tiny random model: an adapter folder with its manifest, its
loss history beside it, the tokens the steps ran, loss on the answer only, a finished adapter kept,
resume from the last good checkpoint, and the recipes' declared defaults. (Its bad inputs, NaN loss, out of memory, a full disk, Ctrl-C, are in
tests/bad_input_training.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.models.adapter_manifest import is_complete  # noqa: E402
from logic_consistency.harness_ext.training.callbacks import HISTORY, history_folder  # noqa: E402
from logic_consistency.harness_ext.training.devices import evaluation_dtype  # noqa: E402
from logic_consistency.harness_ext.training.study_eval import LmEvalRun  # noqa: E402
from logic_consistency.harness_ext.training.trainer import (  # noqa: E402
    CHECKPOINT_DONE,
    Example,
    TrainJob,
    train_adapter,
)
from logic_consistency.options import OptionError  # noqa: E402
from logic_consistency.tasks.gv.improve_training import TRAINING as GV_TRAINING  # noqa: E402
from logic_consistency.tasks.gv.improve_training import long_task_settings  # noqa: E402
from logic_consistency.tasks.improve_recipes import recipes  # noqa: E402
from logic_consistency.tasks.pairwise.improve_options import TRAINING as REPAIR_TRAINING  # noqa: E402

EXAMPLES = [Example(f"Q: What is {n} + 1? A:", f" {n + 1}") for n in range(12)]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_base(tmp_path_factory.mktemp("tiny") / "base")


def job(base: Path, out: Path, **overrides: Any) -> TrainJob:
    settings = GV_TRAINING.settings(
        {"max_steps": 3, "lr": 0.05, "batch_size": 4, "grad_accum": 1, "save_steps": 1, **overrides}
    )
    return TrainJob(base, EXAMPLES, out, settings, "gv", "round 1", "train", 4)


def logits(model: Any, tokens: list[int]) -> Any:
    import torch

    with torch.no_grad():
        return model(torch.tensor([tokens])).logits


@pytest.fixture(scope="module")
def trained(base: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One adapter trained once (3 steps of 4: one pass over the 12 examples), for several tests."""
    out = tmp_path_factory.mktemp("trained") / "adapter"
    return out, train_adapter(job(base, out))


def sft_trainer(base: Path, out: Path, **overrides: Any) -> Any:
    """The SFTTrainer a training would run (built, not run)."""
    from logic_consistency.harness_ext.training import trainer
    from logic_consistency.harness_ext.training.libraries import training_libraries

    peft, transformers, trl = training_libraries()
    the_job = job(base, out, **overrides)
    model = trainer._model(transformers, base, the_job.settings, False)
    tokenizer = trainer._load_base(transformers, base)
    return trainer._trainer(peft, transformers, trl, model, tokenizer, the_job, out / "checkpoints", False)


def test_an_adapter_is_written_with_its_manifest_and_changes_the_model(
    base: Path, trained: tuple[Path, dict[str, Any]]
) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    out, manifest = trained
    assert is_complete(out) and (out / "adapter_config.json").is_file()
    assert (out / "adapter_model.safetensors").is_file() and not list(out.glob("*.bin"))
    assert not out.with_name("adapter.partial").exists()  # checkpoints are removed once the adapter is finished
    for key in (
        "base_sha256",
        "recipe",
        "round",
        "split",
        "data_sha256",
        "data_examples",
        "hyperparameters",
        "seed",
        "libraries",
        "device",
        "wall_time_s",
        "train_tokens_per_s",
    ):
        assert manifest[key] is not None, key
    assert manifest["steps"] == 3 and manifest["hyperparameters"]["lora_r"] == 32 and manifest["split"] == "train"
    assert manifest["libraries"]["trl"] is not None and manifest["gradient_checkpointing"] is True
    plain = AutoModelForCausalLM.from_pretrained(base)
    tuned = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), out)
    tokens = [5, 6, 7, 8]
    assert not bool((logits(plain, tokens) == logits(tuned, tokens)).all())


def test_the_loss_history_outlives_the_checkpoints(trained: tuple[Path, dict[str, Any]]) -> None:
    out, manifest = trained
    lines = [json.loads(line) for line in (history_folder(out) / HISTORY).read_text(encoding="utf-8").splitlines()]
    steps = [line for line in lines if "loss" in line]
    assert [line["step"] for line in steps] == [1, 2, 3]
    assert all(isinstance(line["loss"], float) and "learning_rate" in line for line in steps)
    assert manifest["history"] == str(history_folder(out))


def test_the_tokens_are_those_the_steps_ran(base: Path, trained: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    # 3 steps of 4 examples are one pass over the 12: every token of the data (no padding) once, not
    # "dataset size x epochs" (the recipe's 3 epochs, which max_steps cut short).
    data = sft_trainer(base, tmp_path).train_dataset
    assert trained[1]["train_tokens"] == sum(len(row["input_ids"]) for row in data)
    assert trained[1]["hyperparameters"]["epochs"] == 3


def test_the_loss_is_on_the_answer_only(base: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    row = sft_trainer(base, tmp_path).train_dataset[0]  # EXAMPLES[0]: TRL keeps the order (no shuffle)
    prompt = tokenizer(EXAMPLES[0].prompt)["input_ids"]
    assert row["input_ids"][: len(prompt)] == prompt
    assert row["labels"][: len(prompt)] == [-100] * len(prompt)
    assert row["labels"][len(prompt) :] == row["input_ids"][len(prompt) :]
    assert row["labels"][-1] == tokenizer.eos_token_id


def test_gradient_checkpointing_is_on_by_default_and_can_be_switched_off(base: Path, tmp_path: Path) -> None:
    assert sft_trainer(base, tmp_path / "on").args.gradient_checkpointing is True
    assert sft_trainer(base, tmp_path / "off", gradient_checkpointing="no").args.gradient_checkpointing is False


def test_the_lora_target_modules_are_an_option(base: Path, tmp_path: Path) -> None:
    model = sft_trainer(base, tmp_path, lora_target_modules="q_proj+v_proj").model
    adapted = {name.split(".lora_A")[0].rsplit(".", 1)[-1] for name, _ in model.named_parameters() if "lora_A" in name}
    assert adapted == {"q_proj", "v_proj"}


def test_an_evaluation_during_training_is_logged(base: Path, tmp_path: Path) -> None:
    manifest = train_adapter(job(base, tmp_path / "adapter", eval_fraction=0.25, eval_steps=1, max_steps=2))
    lines = (history_folder(tmp_path / "adapter") / HISTORY).read_text(encoding="utf-8").splitlines()
    held_out = [json.loads(line) for line in lines if "eval_loss" in line]
    assert [line["step"] for line in held_out] == [1, 2] and manifest["data_examples_held_out"] == 3
    assert manifest["data_examples_trained"] == 9


def test_rows_are_scored_in_the_dtype_they_trained_in() -> None:
    settings = GV_TRAINING.settings({"bf16": "no"})
    assert evaluation_dtype(settings, {"bf16": True}) == "bfloat16"
    assert evaluation_dtype(settings, {"bf16": False}) == "float32"
    assert evaluation_dtype(settings, None) == "float32"
    assert evaluation_dtype(GV_TRAINING.settings({"bf16": "yes"}), None) == "bfloat16"
    run = LmEvalRun(
        Path("/m"), "t", {}, 3, Path("/o"), adapter=Path("/a"), dtype=evaluation_dtype(settings, {"bf16": True})
    )
    command = run.command()
    assert command[command.index("--model_args") + 1] == "pretrained=/m,dtype=bfloat16,peft=/a"


def test_a_finished_adapter_is_kept(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.harness_ext.training import trainer

    first = train_adapter(job(base, tmp_path / "a"))
    monkeypatch.setattr(trainer, "training_libraries", lambda: pytest.fail("a finished adapter was trained again"))
    assert train_adapter(job(base, tmp_path / "a")) == first


def test_ctrl_c_leaves_no_adapter_and_the_rerun_resumes_from_the_last_checkpoint(
    base: Path, trained: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trl

    from logic_consistency.harness_ext.training import trainer

    original = trl.SFTTrainer.compute_loss
    calls = {"n": 0}

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:  # in step 3, after the checkpoints of steps 1 and 2
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(trl.SFTTrainer, "compute_loss", interrupted)
    out = tmp_path / "adapter"
    with pytest.raises(KeyboardInterrupt):
        train_adapter(job(base, out))
    assert not out.exists() and not is_complete(out)
    checkpoints = out.with_name("adapter.partial") / "checkpoints"
    assert (checkpoints / "checkpoint-2" / CHECKPOINT_DONE).is_file()
    (checkpoints / "checkpoint-3").mkdir()  # a checkpoint cut off half-way: no completion marker
    monkeypatch.setattr(trl.SFTTrainer, "compute_loss", original)
    resumed_from = []
    real_good = trainer.good_checkpoint
    monkeypatch.setattr(
        trainer, "good_checkpoint", lambda folder: resumed_from.append(real_good(folder)) or resumed_from[-1]
    )
    manifest = train_adapter(job(base, out))
    assert resumed_from[0] is not None and resumed_from[0].name == "checkpoint-2"
    assert manifest["steps"] == 3 and is_complete(out)
    assert manifest["resumed_from_step"] == 2
    assert not checkpoints.exists()
    # the tokens and the history are those of one run of 3 steps, the steps before the resume counted once
    assert manifest["train_tokens"] == trained[1]["train_tokens"]
    lines = (history_folder(out) / HISTORY).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["step"] for line in lines if '"loss"' in line] == [1, 2, 3]


def test_the_rate_after_a_resume_counts_only_the_steps_run_since() -> None:
    # The Trainer's train_runtime covers the steps after the checkpoint only: counting all tokens over
    # it reported 28,045 tokens/s for a GPU row whose own steps ran at about 4,300.
    from types import SimpleNamespace

    from logic_consistency.harness_ext.training.trainer import _throughput

    state = SimpleNamespace(num_input_tokens_seen=2000)
    result = SimpleNamespace(global_step=25, metrics={"train_runtime": 5.0})
    fresh = _throughput(state, result, (0, 0))
    assert fresh == {"train_tokens": 2000, "train_tokens_per_s": 400.0, "resumed_from_step": 0}
    resumed = _throughput(state, result, (20, 1600))
    assert resumed == {"train_tokens": 2000, "train_tokens_per_s": 80.0, "resumed_from_step": 20}
    done_before = _throughput(state, result, (25, 2000))
    assert done_before["train_tokens_per_s"] is None  # no step ran in this process: no rate, not 0


def test_the_recipes_defaults_are_the_papers() -> None:
    repair, gv = REPAIR_TRAINING.settings({}), GV_TRAINING.settings({})
    assert (repair.lr, repair.epochs, repair.weight_decay, repair.lora_r, repair.lora_alpha) == (5e-5, 2, 0.01, 16, 64)
    assert (repair.batch_size, repair.grad_accum) == (4, 2)
    assert (gv.lr, gv.scheduler, gv.warmup_ratio, gv.lora_r, gv.lora_alpha, gv.epochs) == (
        2e-4,
        "cosine",
        0.03,
        32,
        32,
        3,
    )
    assert long_task_settings(GV_TRAINING.settings({}), {}).epochs == 6
    assert REPAIR_TRAINING.settings({"lr": "1e-4", "max_steps": "5"}).lr == 1e-4
    assert set(recipes()) == {"repair", "gv"}
    with pytest.raises(OptionError, match="improve repair --train-args.*'lora_rank'.*did you mean 'lora_r'"):
        REPAIR_TRAINING.settings({"lora_rank": 8})
