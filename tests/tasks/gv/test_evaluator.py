"""The GV tasks through lm-eval's real evaluator, on fake models whose answers we control."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gv_fake_models as fakes  # loaded by tests/tasks/gv/conftest.py
import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

ROOT = Path(__file__).resolve().parents[3]
GV_DIR = ROOT / "tasks" / "gv"
FIXTURES = ROOT / "tests" / "fixtures"
NAMES = ("arithmetic", "plan_arithmetic", "triviaqa", "style_transfer", "prompt_prioritization", "harmful")
MAIN = [f"logic_consistency_gv_{name}" for name in NAMES]
GENERATE = [f"{task}_generate" for task in MAIN]
N_DOCS = 6
# TriviaQA and AdvBench fixtures hold 4 rows each; n_docs=6 keeps them all.
EXPECTED_DOCS = {
    "arithmetic": 6,
    "plan_arithmetic": 6,
    "triviaqa": 4,
    "style_transfer": 6,
    "prompt_prioritization": 6,
    "harmful": 4,
}
WITH_GROUND_TRUTH = ("arithmetic", "plan_arithmetic", "triviaqa")


pytestmark = pytest.mark.usefixtures("fixture_data")  # tests/tasks/gv/conftest.py


def run(model: LM | str, tasks: list[str], **kwargs: Any) -> dict[str, Any]:
    manager = TaskManager(include_path=str(GV_DIR), include_defaults=False, metadata={"n_docs": N_DOCS})
    return simple_evaluate(model=model, tasks=tasks, task_manager=manager, **kwargs)


def metrics(results: dict[str, Any], task: str) -> dict[str, float]:
    """``{metric: value}`` of one task, without the ``,none`` suffix and the stderr entries."""
    raw = results["results"][task]
    return {key.split(",")[0]: value for key, value in raw.items() if "," in key and "_stderr" not in key}


def suffix_of(task: str) -> str:
    return task.replace("logic_consistency_gv_", "").replace("_generate", "")


# ----------------------------------------------------------------------------- log-likelihood validators
@pytest.fixture(scope="module")
def honest_run() -> dict[str, Any]:
    model = fakes.ScriptedLM(fakes.oracle_generate, fakes.oracle_score(honest=True))
    return run(model, ["logic_consistency_gv"], log_samples=True)


def test_consistent_model_scores_one_everywhere(honest_run: dict[str, Any]) -> None:
    for task in MAIN:
        name = suffix_of(task)
        values = metrics(honest_run, task)
        assert honest_run["n-samples"][task]["effective"] == EXPECTED_DOCS[name]
        assert values["gv_consistency"] == 1.0, task
        assert values["unparseable_generator"] == 0 and values["unparseable_validator"] == 0, task
        if name in WITH_GROUND_TRUTH:
            assert values["generator_accuracy"] == 1.0, task
            assert values["validator_accuracy"] == 1.0, task
        else:  # no ground truth: the metrics are absent, not 0
            assert "generator_accuracy" not in values and "validator_accuracy" not in values
    assert metrics(honest_run, "logic_consistency_gv")["gv_consistency"] == 1.0


def test_both_randomisations_occur(honest_run: dict[str, Any]) -> None:
    for task in MAIN:
        r_values = {sample["doc"]["r"] for sample in honest_run["samples"][task]}
        assert r_values == {1, -1}, task


def test_order_randomisation_puts_the_consistent_option_at_a_when_r_is_plus_one(honest_run: dict[str, Any]) -> None:
    for sample in honest_run["samples"]["logic_consistency_gv_triviaqa"]:
        doc = sample["doc"]
        prompt = doc["stages"]["validator"]["prompts"]["main"]
        correct = doc["stages"]["generator"]["parsed"]["correct"]
        expected_line = f"\nA: {correct}\n" if doc["r"] == 1 else f"\nB: {correct}\n"
        assert expected_line in prompt
        # the log-likelihood request carries the formatted prompt, scored on " A" and " B"
        assert [arguments[1] for arguments in sample["arguments"]] == [" A", " B"]


def test_correctness_randomisation_shows_the_answer_r_asks_for(honest_run: dict[str, Any]) -> None:
    for sample in honest_run["samples"]["logic_consistency_gv_arithmetic"]:
        doc = sample["doc"]
        parsed = doc["stages"]["generator"]["parsed"]
        shown = parsed["correct"] if doc["r"] == 1 else parsed["incorrect"]
        assert f"\nA: {shown}\nThe computation is (True/False):" in doc["stages"]["validator"]["prompts"]["main"]
    for sample in honest_run["samples"]["logic_consistency_gv_plan_arithmetic"]:
        relation = "not equals" if sample["doc"]["r"] == -1 else "equals"
        assert (
            f"right hand side {relation} {sample['doc']['target']}?"
            in sample["doc"]["stages"]["generator"]["prompts"]["main"]
        )


def test_inconsistent_validator_scores_zero() -> None:
    model = fakes.ScriptedLM(fakes.oracle_generate, fakes.oracle_score(honest=False))
    results = run(model, MAIN)
    for task in MAIN:
        values = metrics(results, task)
        assert values["gv_consistency"] == 0.0, task
        if suffix_of(task) in WITH_GROUND_TRUTH:
            assert values["generator_accuracy"] == 1.0 and values["validator_accuracy"] == 0.0, task


def test_wrong_generator_with_honest_validator() -> None:
    """Generator wrong, validator right: inconsistent, and the accuracies tell which side failed."""
    model = fakes.ScriptedLM(lambda p: fakes.oracle_generate(p, wrong=True), fakes.oracle_score(honest=True))
    tasks = [f"logic_consistency_gv_{name}" for name in WITH_GROUND_TRUTH]
    results = run(model, tasks, log_samples=True)
    for task in tasks:
        values = metrics(results, task)
        assert values["generator_accuracy"] == 0.0, task
        assert values["validator_accuracy"] == 1.0, task
        assert values["gv_consistency"] == 0.0, task
    # plan arithmetic: generator accuracy is scored on the r = +1 documents only (None, undefined, elsewhere)
    plan = results["samples"]["logic_consistency_gv_plan_arithmetic"]
    scored = sum(sample.get("generator_accuracy") is not None for sample in plan)
    assert scored == sum(s["doc"]["r"] == 1 for s in plan) > 0


def test_unparseable_outputs_are_counted_and_do_not_crash() -> None:
    def generate(prompt: str) -> str:
        if prompt.startswith("Write a correct") or "Red Planet" in prompt:
            return " I am not sure, sorry"  # no number / one answer instead of two
        if prompt.startswith("Consider the identity"):
            return "Sure, here you go:"
        return fakes.oracle_generate(prompt)

    honest = fakes.oracle_score(honest=True)

    def score(context: str, continuation: str) -> float:
        if context.startswith("Check the following text is harmful"):
            return -1.0  # a tie between Yes and No: no validator answer
        return honest(context, continuation)

    results = run(fakes.ScriptedLM(generate, score), MAIN)
    arithmetic = metrics(results, "logic_consistency_gv_arithmetic")
    assert arithmetic["unparseable_generator"] == 6 and arithmetic["unparseable_validator"] == 0
    assert "gv_consistency" not in arithmetic and "generator_accuracy" not in arithmetic
    assert metrics(results, "logic_consistency_gv_plan_arithmetic")["unparseable_generator"] == 6
    trivia = metrics(results, "logic_consistency_gv_triviaqa")
    assert trivia["unparseable_generator"] == 1
    assert trivia["gv_consistency"] == 1.0 and trivia["generator_accuracy"] == 1.0  # over the other 3
    harmful = metrics(results, "logic_consistency_gv_harmful")
    assert harmful["unparseable_generator"] == 0 and harmful["unparseable_validator"] == 4
    assert "gv_consistency" not in harmful
    assert metrics(results, "logic_consistency_gv_style_transfer")["gv_consistency"] == 1.0


# ----------------------------------------------------------------------------- generated validators
def chat_validator(honest: bool = True) -> Any:
    def validate(prompt: str) -> str:
        verdict = fakes.oracle_verdict(prompt)
        return fakes.CHAT_VERDICTS[verdict if honest else fakes.OPPOSITE[verdict]]

    return validate


def no_loglikelihood(context: str, continuation: str) -> float:
    raise AssertionError("the _generate variants must not request log-likelihoods")


def test_generate_variants_parse_chat_style_answers() -> None:
    generate = fakes.route(lambda p: fakes.oracle_generate(p, chat=True), chat_validator())
    results = run(fakes.ScriptedLM(generate, no_loglikelihood), ["logic_consistency_gv_generate"])
    for task in GENERATE:
        values = metrics(results, task)
        assert values["gv_consistency"] == 1.0, task
        assert values["unparseable_generator"] == 0 and values["unparseable_validator"] == 0, task
        if suffix_of(task) in WITH_GROUND_TRUTH:
            assert values["generator_accuracy"] == 1.0 and values["validator_accuracy"] == 1.0, task


def test_generate_variants_count_unparseable_validator_answers() -> None:
    def validate(prompt: str) -> str:
        if prompt.startswith(("Verify whether", "Which of the following text")):
            return "Both options have merit; it depends."
        return chat_validator(honest=False)(prompt)

    generate = fakes.route(fakes.oracle_generate, validate)
    tasks = ["logic_consistency_gv_arithmetic_generate", "logic_consistency_gv_style_transfer_generate",
             "logic_consistency_gv_triviaqa_generate"]  # fmt: skip
    results = run(fakes.ScriptedLM(generate, no_loglikelihood), tasks)
    for task in tasks[:2]:
        values = metrics(results, task)
        assert values["unparseable_validator"] == 6 and "gv_consistency" not in values, task
    trivia = metrics(results, tasks[2])
    assert trivia["gv_consistency"] == 0.0 and trivia["unparseable_validator"] == 0


# ----------------------------------------------------------------------------- lm-eval's dummy model
def test_dummy_model_runs_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--model dummy`` generates "lol" and scores at random: the run completes, "lol" is counted."""
    from lm_eval.models.dummy import DummyLM

    # DummyLM's tokenizer is only used to log tokenizer info; loading it would try the network.
    monkeypatch.setattr(DummyLM, "tokenizer", None)
    results = run("dummy", ["logic_consistency_gv"])
    for name in ("arithmetic", "plan_arithmetic", "triviaqa"):
        values = metrics(results, f"logic_consistency_gv_{name}")
        assert values["unparseable_generator"] == EXPECTED_DOCS[name]
        assert "gv_consistency" not in values
    # "lol" is a (bad) rewrite / reply: the validator is scored on it
    for name in ("style_transfer", "prompt_prioritization", "harmful"):
        values = metrics(results, f"logic_consistency_gv_{name}")
        assert values["unparseable_generator"] == 0
        assert 0.0 <= values["gv_consistency"] <= 1.0
    # undefined in three of the six tasks: left out of the group (not averaged over the other three)
    group = metrics(results, "logic_consistency_gv")
    assert "gv_consistency" not in group and not math.isnan(group["gv_consistency_strict"])
