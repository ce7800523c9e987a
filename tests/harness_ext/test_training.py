"""The LoRA trainer on a tiny random model: an adapter folder with its manifest, loss on the answer
only, a finished adapter kept, resume from the last good checkpoint, and the recipes' declared
defaults. (Its bad inputs, NaN loss, out of memory, a full disk, Ctrl-C, are in
tests/bad_input_training.py.)"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.training.adapter import is_complete  # noqa: E402
from logic_consistency.harness_ext.training.recipes import RECIPES, settings_for  # noqa: E402
from logic_consistency.harness_ext.training.trainer import (  # noqa: E402
    CHECKPOINT_DONE,
    Example,
    TrainJob,
    _tokenise,
    train_adapter,
)
from logic_consistency.options import OptionError  # noqa: E402

EXAMPLES = [Example(f"Q: What is {n} + 1? A:", f" {n + 1}") for n in range(12)]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_base(tmp_path_factory.mktemp("tiny") / "base")


def job(base: Path, out: Path, **overrides: Any) -> TrainJob:
    settings = settings_for(
        "gv", {"max_steps": 3, "lr": 0.05, "batch_size": 4, "grad_accum": 1, "save_steps": 1, **overrides}
    )
    return TrainJob(base, EXAMPLES, out, settings, "gv", "round 1", "train", 4)


def logits(model: Any, tokens: list[int]) -> Any:
    import torch

    with torch.no_grad():
        return model(torch.tensor([tokens])).logits


def test_an_adapter_is_written_with_its_manifest_and_changes_the_model(base: Path, tmp_path: Path) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    manifest = train_adapter(job(base, tmp_path / "adapter"))
    assert is_complete(tmp_path / "adapter") and (tmp_path / "adapter" / "adapter_config.json").is_file()
    assert not (tmp_path / "adapter.partial").exists()  # checkpoints are removed once the adapter is finished
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
    plain = AutoModelForCausalLM.from_pretrained(base)
    tuned = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), tmp_path / "adapter")
    tokens = [5, 6, 7, 8]
    assert not bool((logits(plain, tokens) == logits(tuned, tokens)).all())


def test_the_loss_is_on_the_answer_only(base: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    (row,) = _tokenise(tokenizer, [Example("Q: What is 7 - 2? A:", " 5")], 64)
    prompt = tokenizer("Q: What is 7 - 2? A:", add_special_tokens=False)["input_ids"]
    assert row["labels"][: len(prompt)] == [-100] * len(prompt)
    assert row["labels"][len(prompt) :] == row["input_ids"][len(prompt) :]
    assert row["labels"][-1] == tokenizer.eos_token_id


def test_a_finished_adapter_is_kept(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.harness_ext.training import trainer

    first = train_adapter(job(base, tmp_path / "a"))
    monkeypatch.setattr(trainer, "training_libraries", lambda: pytest.fail("a finished adapter was trained again"))
    assert train_adapter(job(base, tmp_path / "a")) == first


def test_ctrl_c_leaves_no_adapter_and_the_rerun_resumes_from_the_last_checkpoint(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers

    from logic_consistency.harness_ext.training import trainer

    original = transformers.Trainer.compute_loss
    calls = {"n": 0}

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:  # in step 3, after the checkpoints of steps 1 and 2
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(transformers.Trainer, "compute_loss", interrupted)
    out = tmp_path / "adapter"
    with pytest.raises(KeyboardInterrupt):
        train_adapter(job(base, out))
    assert not out.exists() and not is_complete(out)
    checkpoints = out.with_name("adapter.partial") / "checkpoints"
    assert (checkpoints / "checkpoint-2" / CHECKPOINT_DONE).is_file()
    (checkpoints / "checkpoint-3").mkdir()  # a checkpoint cut off half-way: no completion marker
    monkeypatch.setattr(transformers.Trainer, "compute_loss", original)
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


def test_the_rate_after_a_resume_counts_only_the_steps_run_since() -> None:
    # The Trainer's train_runtime covers the steps after the checkpoint only: counting all tokens over
    # it reported 28,045 tokens/s for a GPU row whose own steps ran at about 4,300.
    from types import SimpleNamespace

    from logic_consistency.harness_ext.training.trainer import _throughput

    args = SimpleNamespace(
        per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=-1, num_train_epochs=2
    )
    rows = [{"input_ids": [0] * 10}] * 100  # 200 examples over 2 epochs: 25 steps of 8
    result = SimpleNamespace(global_step=25, metrics={"train_runtime": 5.0})
    fresh = _throughput(SimpleNamespace(args=args), rows, result, 0)
    assert fresh == {"train_tokens": 2000, "train_tokens_per_s": 400.0, "resumed_from_step": 0}
    resumed = _throughput(SimpleNamespace(args=args), rows, result, 20)
    assert resumed == {"train_tokens": 2000, "train_tokens_per_s": 80.0, "resumed_from_step": 20}
    done_before = _throughput(SimpleNamespace(args=args), rows, result, 25)
    assert done_before["train_tokens_per_s"] is None  # no step ran in this process: no rate, not 0


def test_the_recipes_defaults_are_the_papers() -> None:
    repair, gv = settings_for("repair", {}), settings_for("gv", {})
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
    assert settings_for("gv", {}, long_task=True).epochs == 6
    assert settings_for("repair", {"lr": "1e-4", "max_steps": "5"}).lr == 1e-4
    assert set(RECIPES) == {"repair", "gv"}
    with pytest.raises(OptionError, match="improve repair --train-args.*'lora_rank'.*did you mean 'lora_r'"):
        settings_for("repair", {"lora_rank": 8})
