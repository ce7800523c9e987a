"""End to end through the real ``lm_eval`` command: task discovery, the off switch, full runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
PAIRWISE_TASKS = ("logic_consistency_summeval", "logic_consistency_noveleval", "logic_consistency_caters")


def _lm_eval(*args: str, env: dict[str, str] | None = None, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    full_env = {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        **(env or {}),
    }
    return children.run([LM_EVAL, *args], capture_output=True, text=True, env=full_env, timeout=timeout, cwd=ROOT)


def _results(output_path: Path) -> dict:
    files = sorted(output_path.glob("*/results_*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def test_ls_tasks_lists_the_suite_without_include_path() -> None:
    listing = _lm_eval("ls", "tasks")
    assert listing.returncode == 0, listing.stderr
    for name in (*PAIRWISE_TASKS, "logic_consistency", "logic_consistency_pairwise"):
        assert name in listing.stdout, name


def test_off_switch_and_include_path() -> None:
    off = {"LOGIC_CONSISTENCY_AUTOLOAD": "0"}
    hidden = _lm_eval("ls", "tasks", env=off)
    assert hidden.returncode == 0, hidden.stderr
    assert "logic_consistency_summeval" not in hidden.stdout
    tasks_dir = children.run(
        [sys.executable, "-m", "logic_consistency.cli", "tasks-dir"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    explicit = _lm_eval("ls", "tasks", "--include_path", tasks_dir, env=off)
    assert explicit.returncode == 0, explicit.stderr
    assert "logic_consistency_summeval" in explicit.stdout


def test_dummy_model_runs_the_whole_suite(dummy_run: Path) -> None:
    """``lm_eval --model dummy --tasks logic_consistency`` (the session's shared run, tests/conftest.py)."""
    results = json.loads(dummy_run.read_text())
    for task in PAIRWISE_TASKS:
        metrics = results["results"][task]
        for name in ("s_tran_3", "s_comm", "s_neg", "human_agreement"):
            value = metrics[f"{name},none"]
            assert 0.0 <= value <= 1.0, (task, name, value)
        assert metrics["unparseable,none"] == 0
        assert 0.0 <= metrics["position_bias,none"] <= 1.0
        assert 0.0 <= metrics["p_first_mean,none"] <= 1.0
    assert 0.0 <= results["results"]["logic_consistency_pairwise"]["s_comm,none"] <= 1.0
    # the suite's group aggregates no metric: its families share none (docs/adding-a-task.md)
    assert set(results["results"]["logic_consistency"]) == {"alias", "name"}
    # the two-stage families ran in the same command: every GV and causal task reports its
    # unparseable counts (dummy answers "lol": generations that need a number cannot be parsed)
    gv_tasks = [t for t in results["configs"] if t.startswith("logic_consistency_gv_")]
    causal_tasks = [t for t in results["configs"] if t.startswith("logic_consistency_causal_")]
    assert len(gv_tasks) == 6 and len(causal_tasks) == 8, (gv_tasks, causal_tasks)
    assert results["results"]["logic_consistency_gv_arithmetic"]["unparseable_generator,none"] == 2
    for task in causal_tasks:
        assert results["results"][task]["unparseable_generation,none"] == 2, task
    # GV consistency is undefined on every document of the three tasks whose generator answers need a number
    # (each says so in its own gv_left_out), so their group leaves it out rather than average the other three
    gv = results["results"]["logic_consistency_gv"]
    assert "gv_consistency,none" not in gv and 0.0 <= gv["gv_consistency_strict,none"] <= 1.0
    for name in ("arithmetic", "plan_arithmetic", "triviaqa"):
        task = results["results"][f"logic_consistency_gv_{name}"]
        assert "gv_consistency,none" not in task and task["gv_left_out,none"] == 1.0, name
    # the exact prompts are recorded with the results
    config = results["configs"]["logic_consistency_summeval"]
    assert "less coherent" in config["metadata"]["prompt_config"]["prompts"]["negated"]
    assert sorted(dummy_run.parent.glob("samples_logic_consistency_caters_*.jsonl"))


def test_the_whole_suite_runs_quietly(dummy_run: Path) -> None:
    """No warning from the suite's own definitions: a group aggregates only the metrics all its tasks report
    (a metric undefined on every document of a task, here GV consistency where no generator answer parsed,
    is left out of its group), and a metric undefined on some documents is None there (counted) rather than
    left out, so lm-eval does not warn that metrics were scored on different numbers of documents
    (harness_ext/task/undefined.py)."""
    log = (dummy_run.parents[1] / "lm_eval.log").read_text(encoding="utf-8")
    assert "Selected Tasks" in log  # the log is the run's
    assert not re.findall(r".*Group '[^']*': .*", log)
    assert not re.findall(r".*Metrics were not scored on the same number of documents.*", log)
    assert not re.findall(r".*No `generation_kwargs` specified in task config.*", log)  # a stage's, recorded


def test_dummy_model_runs_the_gv_variants(tmp_path: Path) -> None:
    """Appendix G's chain-of-thought tasks and Table 12's True/False QA validator, plain ``lm_eval``."""
    run = _lm_eval(
        "--model",
        "dummy",
        "--tasks",
        "logic_consistency_gv_variants,logic_consistency_gv_triviaqa_true_false_generate",
        "--limit",
        "2",
        "--output_path",
        str(tmp_path),
        "--log_samples",
    )
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    tasks = (
        "logic_consistency_gv_arithmetic_cot",
        "logic_consistency_gv_plan_arithmetic_cot",
        "logic_consistency_gv_triviaqa_true_false",
        "logic_consistency_gv_triviaqa_true_false_generate",
    )
    for task in tasks:
        metrics = results["results"][task]
        # "lol" is no pair of answers: every document is left out of gv_consistency, and the
        # strict rate counts it as inconsistent
        assert metrics["unparseable_generator,none"] == 2 and metrics["gv_left_out,none"] == 1.0, task
        assert "gv_consistency,none" not in metrics and metrics["gv_consistency_strict,none"] == 0.0, task
    assert results["results"]["logic_consistency_gv_variants"]["gv_consistency_strict,none"] == 0.0


@pytest.mark.slow
def test_embedded_model_run(tmp_path: Path) -> None:
    """The real embedded model (SmolLM2-135M-Instruct), one small instance per task."""
    run = _lm_eval(
        "--model",
        "lc-embedded",
        "--model_args",
        "model=smollm2-135m-instruct",
        "--batch_size",
        "4",
        "--tasks",
        "logic_consistency_caters,logic_consistency_caters_generate",
        "--limit",
        "1",
        "--metadata",
        json.dumps({"max_items": 4, "ks": [3, 4]}),
        "--output_path",
        str(tmp_path),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    scored = results["results"]["logic_consistency_caters"]
    assert 0.0 <= scored["s_comm,none"] <= 1.0
    generated = results["results"]["logic_consistency_caters_generate"]
    # 12 ordered pairs x 2 variants: every answer is either parsed or counted as unparseable
    assert 0 <= generated["unparseable,none"] <= 24


@pytest.mark.slow
def test_embedded_model_runs_the_gv_variants(tmp_path: Path) -> None:
    """The real embedded model on Appendix G's CoT tasks and Table 12's True/False validator."""
    run = _lm_eval(
        "--model",
        "lc-embedded",
        "--model_args",
        "model=smollm2-135m-instruct",
        "--batch_size",
        "4",
        "--tasks",
        "logic_consistency_gv_variants",
        "--limit",
        "2",
        "--output_path",
        str(tmp_path),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    for task in (
        "logic_consistency_gv_arithmetic_cot",
        "logic_consistency_gv_plan_arithmetic_cot",
        "logic_consistency_gv_triviaqa_true_false",
    ):
        metrics = results["results"][task]
        left_out = metrics["gv_left_out,none"]
        strict = metrics["gv_consistency_strict,none"]
        # every document is either left out (and inconsistent in the strict rate) or scored
        assert left_out * 2 == metrics["unparseable_generator,none"] + metrics["unparseable_validator,none"], task
        if "gv_consistency,none" in metrics:
            assert strict == pytest.approx(metrics["gv_consistency,none"] * (1 - left_out)), task
        else:
            assert left_out == 1.0 and strict == 0.0, task
