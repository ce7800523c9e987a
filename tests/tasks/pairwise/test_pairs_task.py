"""PairS ranking task through lm-eval's evaluator with a scripted judge."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
_OPTIONS = re.compile(r"Option A: item-(\d+)\nOption B: item-(\d+)\nQuestion: Which is larger\?")


class Judge(LM):
    """P(A) = sigmoid(value(A) - value(B) + bias): bias > 0 is a position bias toward option A."""

    def __init__(self, bias: float = 0.0) -> None:
        super().__init__()
        self.bias = bias
        self.batches: list[int] = []
        self.prompts: list[str] = []

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.batches.append(len(requests))
        out = []
        for request in requests:
            context, continuation = request.args
            match = _OPTIONS.search(context)
            if match is None:
                raise AssertionError(f"not a comparison (a placeholder?): {context!r}")
            self.prompts.append(context)
            a, b = map(int, match.groups())
            p_a = 1 / (1 + math.exp(-((a - b) + self.bias)))
            out.append((math.log(p_a if continuation.strip() == "A" else 1 - p_a), False))
        return out

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


def _run(model: LM, metadata: dict[str, Any] | None = None) -> dict[str, float]:
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False, metadata=metadata)
    results = simple_evaluate(model=model, tasks=["toy_pairs"], task_manager=manager)
    return {k.split(",")[0]: v for k, v in results["results"]["toy_pairs"].items() if k.endswith(",none")}


def test_unbiased_judge_ranks_perfectly_and_asks_each_prompt_once() -> None:
    judge = Judge()
    metrics = _run(judge)
    # toy items are "item-<k>" with human score k (tests/fixtures/tasks/utils.py)
    assert metrics["pairs_spearman"] == pytest.approx(1.0)
    assert metrics["pairs_spearman_calibrated"] == pytest.approx(1.0)
    assert len(judge.prompts) / 2 == len(set(judge.prompts))  # each prompt scored on A and B once
    assert 0 < metrics["pairs_comparisons_ratio"] <= 1
    # distinct prompts over both instances: at most all 20 + 12 ordered pairs
    assert len(set(judge.prompts)) <= 32
    assert metrics["pairs_model_calls_ratio"] <= 1
    # one batched call per merge round; the placeholder requests lm-eval sends afterwards are
    # answered without the model, so the slower instance needs as many rounds as there were calls
    assert len(judge.batches) >= 1
    assert 1 <= metrics["pairs_rounds"] <= len(judge.batches)


def test_position_biased_judge_gains_from_calibration() -> None:
    metrics = _run(Judge(bias=3.0))
    assert metrics["pairs_spearman_calibrated"] == pytest.approx(1.0)
    assert metrics["pairs_spearman_calibrated"] >= metrics["pairs_spearman"]
    assert metrics["pairs_spearman"] < 0.99


# The beam keeping every path (pairs_prob_gap 0.5 prunes nothing) asks every pair of each merge's two
# runs once, and every unordered pair meets in exactly one merge: n (n - 1) / 2 comparisons a run.
UNPRUNED_BEAM = {"pairs_method": "beam", "pairs_beam_size": 1000, "pairs_prob_gap": 0.5}


def test_beam_ranks_perfectly_and_asks_each_prompt_once() -> None:
    judge = Judge(bias=0.5)
    metrics = _run(judge, {"pairs_method": "beam", "pairs_beam_size": 3})
    assert metrics["pairs_spearman"] == pytest.approx(1.0)
    assert metrics["pairs_spearman_calibrated"] == pytest.approx(1.0)
    assert len(judge.prompts) / 2 == len(set(judge.prompts))
    assert 1 <= metrics["pairs_rounds"] <= len(judge.batches)  # one batched call per round (placeholders: none)


def test_unpruned_beam_asks_half_the_ordered_pairs_per_run_and_greedy_fewer() -> None:
    beam = _run(Judge(), UNPRUNED_BEAM)
    assert beam["pairs_comparisons_ratio"] == pytest.approx(0.5)
    assert beam["pairs_calibrated_comparisons_ratio"] == pytest.approx(1.0)
    assert beam["pairs_model_calls_ratio"] == pytest.approx(1.0)
    assert beam["pairs_spearman"] == pytest.approx(1.0)
    greedy = _run(Judge())
    assert greedy["pairs_comparisons_ratio"] <= (8 / 20 + 5 / 12) / 2 < 0.5


@pytest.mark.slow
@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_lm_eval_dummy_model_runs_the_summeval_pairs_task(tmp_path: Path, method: str) -> None:
    import json
    import os
    import shutil
    import sys

    root = Path(__file__).resolve().parents[3]
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    env = {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(root / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    metadata = {"max_items": 5, "pairs_runs": 10, **(UNPRUNED_BEAM if method == "beam" else {})}
    run = children.run(
        [
            lm_eval,
            "--model",
            "dummy",
            "--tasks",
            "logic_consistency_summeval_pairs",
            "--limit",
            "2",
            "--metadata",
            json.dumps(metadata),
            "--output_path",
            str(tmp_path),
            "--log_samples",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=root,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    (results_file,) = tmp_path.glob("*/results_*.json")
    results = json.loads(results_file.read_text())
    metrics = results["results"]["logic_consistency_summeval_pairs"]
    assert results["configs"]["logic_consistency_summeval_pairs"]["metadata"].get("pairs_method", "greedy") == method
    (samples_file,) = tmp_path.glob("*/samples_*.jsonl")
    records = [json.loads(line)["doc"]["pairs"] for line in samples_file.read_text().splitlines()]
    assert [record["search"]["method"] for record in records] == [method, method]
    assert -1.0 <= metrics["pairs_spearman,none"] <= 1.0
    assert -1.0 <= metrics["pairs_spearman_calibrated,none"] <= 1.0
    assert 0 < metrics["pairs_model_calls_ratio,none"] <= 1
    if method == "greedy":  # 5 items: a merge sort needs at most 8 of the 20 ordered pairs per run
        assert 0 < metrics["pairs_comparisons_ratio,none"] <= 8 / 20
    else:  # every pair once per run, half the ordered pairs; calibrated, all of them
        assert metrics["pairs_comparisons_ratio,none"] == pytest.approx(0.5)
        assert metrics["pairs_calibrated_comparisons_ratio,none"] == pytest.approx(1.0)
        for record in records:
            n_pairs = record["all_pairs"] // 2
            assert set(record["comparisons"]["raw"]) == set(record["comparisons"]["calibrated"]) == {n_pairs}
