"""A study's row scored by ``lc-hf`` (the default) equals the row scored by stock ``hf``.

The tiny random Llama of ``tests/tiny_model.py`` with a LoRA adapter whose weights are random (so it
changes the answers), both backends built from the study's own ``--model`` / ``--model_args``
(:func:`~logic_consistency.harness_ext.training.eval_backend.model_arguments`), run in process on a
CaTeRS story of the fixture data with the chat template, as a study's test evaluation runs it. Every
log-likelihood agrees within docs/backends.md's float32 tolerance (1e-4) and the row's metrics are
the same.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.registry import get_model
from lm_eval.tasks import TaskManager

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.autoload import tasks_dir  # noqa: E402
from logic_consistency.harness_ext.training.eval_backend import model_arguments  # noqa: E402

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
TASK = "logic_consistency_caters"
TOLERANCE = 1e-4  # docs/backends.md: float32 answers equal stock HFLM's within 1e-4


@pytest.fixture(scope="module")
def base_and_adapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("row")
    base = tiny_base(folder / "base")
    torch.manual_seed(0)
    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(base),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False),
    )
    model.save_pretrained(folder / "adapter")
    return base, folder / "adapter"


def _row(backend: str, base: Path, adapter: Path) -> dict[str, Any]:
    name, model_args = model_arguments(backend, base, "float32", adapter)
    model = get_model(name).create_from_arg_string(model_args, {"batch_size": 4, "device": "cpu"})
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    return simple_evaluate(
        model=model,
        tasks=[TASK],
        task_manager=manager,
        limit=1,
        metadata={"max_items": 4, "instance_split": "test"},
        apply_chat_template=True,
        log_samples=True,
    )


def test_a_row_scored_by_lc_hf_equals_the_row_scored_by_stock_hf(
    base_and_adapter: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    base, adapter = base_and_adapter
    stock, shared = _row("hf", base, adapter), _row("lc-hf", base, adapter)
    stock_resps = [r for s in stock["samples"][TASK] for r in s["filtered_resps"]]
    shared_resps = [r for s in shared["samples"][TASK] for r in s["filtered_resps"]]
    assert len(stock_resps) == len(shared_resps) > 8
    for (expected, _), (logprob, _) in zip(stock_resps, shared_resps, strict=True):
        assert abs(float(logprob) - float(expected)) <= TOLERANCE
    assert len({round(float(r[0]), 3) for r in shared_resps}) > 2  # not vacuous: the answers differ
    metrics = {k: v for k, v in stock["results"][TASK].items() if isinstance(v, float) and not math.isnan(v)}
    assert metrics
    for name, value in metrics.items():  # rates are equal; means of probabilities move with the log-probabilities
        assert math.isclose(shared["results"][TASK][name], value, abs_tol=TOLERANCE), name
