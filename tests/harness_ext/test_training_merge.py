"""Merged weights (``--merge-weights``): the adapter folded into its base is a plain transformers folder
of safetensors beside the adapter, and it scores text as the base with the adapter does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.models.adapter_manifest import is_complete, read_manifest  # noqa: E402
from logic_consistency.harness_ext.training.trainer import Example, TrainJob, train_adapter  # noqa: E402
from logic_consistency.tasks.gv.improve_training import TRAINING as GV_TRAINING  # noqa: E402

EXAMPLES = [Example(f"Q: What is {n} + 1? A:", f" {n + 1}") for n in range(8)]


def log_likelihoods(model: Any, tokens: list[int]) -> Any:
    """Each next token's log-probability (what lm_eval's loglikelihood sums)."""
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([tokens])).logits[0, :-1]
    return torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(tokens[1:])[:, None])[:, 0]


def test_merged_weights_score_as_the_adapter_does(tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = tiny_base(tmp_path / "base")
    settings = GV_TRAINING.settings({"max_steps": 3, "lr": 0.05, "batch_size": 4})
    adapter = tmp_path / "adapter"
    manifest = train_adapter(TrainJob(base, EXAMPLES, adapter, settings, "gv", "round 1", merge_weights=True))
    merged = tmp_path / "adapter-merged"
    assert manifest["merged"] == str(merged) and is_complete(merged)
    assert sorted(p.name for p in merged.glob("*.safetensors")) == ["model.safetensors"]
    assert not list(merged.glob("adapter_*"))  # a plain model, no LoRA left
    assert read_manifest(merged)["merged_from"] == str(adapter)

    tokens = AutoTokenizer.from_pretrained(merged)("Q: What is 3 + 1? A: 4", add_special_tokens=False)["input_ids"]
    plain = log_likelihoods(AutoModelForCausalLM.from_pretrained(base), tokens)
    tuned = log_likelihoods(PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), adapter), tokens)
    folded = log_likelihoods(AutoModelForCausalLM.from_pretrained(merged), tokens)
    assert not torch.allclose(plain, tuned, atol=1e-3)  # the adapter changed the model ...
    torch.testing.assert_close(folded, tuned, atol=1e-4, rtol=1e-4)  # ... and the merged model is that change

    # a rerun keeps both folders as they are (resume)
    stamp = (merged / "model.safetensors").stat().st_mtime_ns
    train_adapter(TrainJob(base, EXAMPLES, adapter, settings, "gv", "round 1", merge_weights=True))
    assert (merged / "model.safetensors").stat().st_mtime_ns == stamp
