"""Self-agreement task: k sampled CoT judgements per prompt, through lm-eval's evaluator."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval import simple_evaluate
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM, CachingLM
from lm_eval.tasks import TaskManager

from logic_consistency.tasks.pairwise.self_agreement_task import sample_generations

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
_OPTIONS = re.compile(r"Option A: item-(\d+)\nOption B: item-(\d+)\nQuestion: Which is (larger|smaller)\?")


class Sampler(LM):
    """Answers the s-th request of a prompt with ``pattern[s % len(pattern)]`` ("A", "B", or text)."""

    def __init__(self, pattern: list[str]) -> None:
        super().__init__()
        self.pattern = pattern
        self.seen: dict[str, int] = defaultdict(int)
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            context, kwargs = request.args
            self.requests.append((context, kwargs))
            if _OPTIONS.search(context) is None:  # placeholder
                out.append("")
                continue
            out.append(self.pattern[self.seen[context] % len(self.pattern)])
            self.seen[context] += 1
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


def _run(model: LM, metadata: dict[str, Any] | None = None) -> dict[str, float]:
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False, metadata=metadata)
    results = simple_evaluate(model=model, tasks=["toy_pairwise_sc"], task_manager=manager)
    return {k.split(",")[0]: v for k, v in results["results"]["toy_pairwise_sc"].items() if k.endswith(",none")}


def test_seven_of_ten_samples_agree() -> None:
    model = Sampler(["A"] * 7 + ["B"] * 3)
    metrics = _run(model)
    assert metrics["self_agreement"] == pytest.approx(0.7)
    # the majority always says A: a pure position bias
    assert metrics["position_bias"] == 1.0
    assert metrics["s_comm"] == 0.0
    assert metrics["unparseable"] == 0 and metrics["n_majority_ties"] == 0 and metrics["n_single_sample"] == 0
    # every prompt sampled 10 times, none deduplicated, at the paper's temperature
    prompts = [(c, k) for c, k in model.requests if _OPTIONS.search(c)]
    assert len(prompts) == (20 + 12) * 2 * 10
    assert all(k["do_sample"] is True and k["temperature"] == 0.7 for _, k in prompts)
    assert set(model.seen.values()) == {10}


def test_unparseable_samples_and_ties_are_counted_not_guessed() -> None:
    # k = 4: "A", "B", babble, babble -> 2 parsed samples that tie
    metrics = _run(Sampler(["A", "B", "no idea", "no idea"]), metadata={"samples": 4})
    assert metrics["self_agreement"] == 0.5
    assert metrics["unparseable"] == (20 + 12) * 2 * 2
    assert metrics["n_majority_ties"] == (20 + 12) * 2
    assert "s_comm" not in metrics  # no majority judgement at all: undefined, not 0 or 1


def test_judgements_with_one_parsed_sample_are_counted_and_left_out() -> None:
    # k = 3: "A", babble, babble -> one parsed sample per judgement: no self-agreement at all
    metrics = _run(Sampler(["A", "no idea", "no idea"]), metadata={"samples": 3})
    assert "self_agreement" not in metrics  # undefined, never the 1.0 a lone sample would score
    assert metrics["n_single_sample"] == (20 + 12) * 2
    assert metrics["unparseable"] == (20 + 12) * 2 * 2
    # the lone samples are still the majority judgements: always A, a pure position bias
    assert metrics["position_bias"] == 1.0 and metrics["s_comm"] == 0.0
    # k = 4: "A", "A", "B", babble -> three parsed samples each: none single, 2 of 3 agree
    metrics = _run(Sampler(["A", "A", "B", "no idea"]), metadata={"samples": 4})
    assert metrics["n_single_sample"] == 0 and metrics["self_agreement"] == pytest.approx(2 / 3)


def test_consistent_sampler_scores_one() -> None:
    class Perfect(Sampler):
        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            out = []
            for request in requests:
                match = _OPTIONS.search(request.args[0])
                if match is None:
                    out.append("")
                    continue
                a, b, relation = match.groups()
                out.append("A" if (int(a) > int(b)) != (relation == "smaller") else "B")
            return out

    metrics = _run(Perfect([]), metadata={"samples": 3})
    for name in ("self_agreement", "s_tran_3", "s_comm", "s_neg", "human_agreement"):
        assert metrics[name] == pytest.approx(1.0), name
    assert metrics["position_bias"] == 0.5


def test_bad_sample_count_is_an_error() -> None:
    for bad in (0, 1):  # one sample always agrees with itself
        with pytest.raises(ValueError, match=r"samples must be at least 2"):
            _run(Sampler(["A"]), metadata={"samples": bad})


def test_cache_resumes_sampled_generations(tmp_path: Path) -> None:
    model = Sampler(["A", "B", "A"])
    requests = [
        Instance(
            "generate_until",
            {},
            (f"Option A: item-{a}\nOption B: item-1\nQuestion: Which is larger?", {"do_sample": True}),
            0,
        )
        for a in (2, 3)
    ]
    first = sample_generations(CachingLM(model, str(tmp_path / "cache.db")), requests, 3)
    assert first == [["A", "B", "A"], ["A", "B", "A"]]
    assert len(model.requests) == 6
    again = sample_generations(CachingLM(model, str(tmp_path / "cache.db")), requests, 3)
    assert again == first and len(model.requests) == 6  # read back, not re-sampled


@pytest.mark.slow
def test_lm_eval_dummy_model_runs_the_self_agreement_group(tmp_path: Path) -> None:
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
    run = children.run(
        [
            lm_eval,
            "--model",
            "dummy",
            "--tasks",
            "logic_consistency_pairwise_cot_sc",
            "--limit",
            "1",
            "--metadata",
            json.dumps({"max_items": 4, "ks": [3, 4], "samples": 2}),
            "--output_path",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=root,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    (results_file,) = tmp_path.glob("*/results_*.json")
    results = json.loads(results_file.read_text())["results"]
    for dataset in ("summeval", "noveleval", "caters"):
        # the dummy model answers "lol": 12 ordered pairs x 2 variants x 2 samples, all unparseable
        assert results[f"logic_consistency_{dataset}_cot_sc"]["unparseable,none"] == 48


@pytest.mark.slow
def test_one_sample_is_one_line_at_the_lm_eval_command(tmp_path: Path) -> None:
    """A refused option ends ``lm_eval`` with one line naming task, key and bound (no traceback)."""
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    env = {**os.environ, "LOGIC_CONSISTENCY_DATA": str(fixtures / "data"), "HF_HUB_OFFLINE": "1"}
    command = [lm_eval, "--model", "dummy", "--tasks", "logic_consistency_caters_cot_sc", "--limit", "1"]
    run = children.run(
        [*command, "--metadata", json.dumps({"samples": 1})],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        "lm_eval: error: task 'logic_consistency_caters_cot_sc': metadata.samples must be at least 2, got 1"
    )
