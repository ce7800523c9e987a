"""The generator-validator paper's other designs: Appendix G's chain-of-thought tasks, Table 12's
True/False QA validator, × in arithmetic, the constraint form of plan arithmetic's r = -1 prompt,
and ``gv_consistency_strict`` / ``gv_left_out`` next to ``gv_consistency``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gv_fake_models as fakes  # loaded by tests/tasks/gv/conftest.py
import pytest
from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager

from logic_consistency.tasks.gv import arithmetic, common, plan_arithmetic, triviaqa

ROOT = Path(__file__).resolve().parents[3]
GV_DIR = ROOT / "tasks" / "gv"
FIXTURES = ROOT / "tests" / "fixtures"
N_DOCS = 6
VARIANTS = [
    "logic_consistency_gv_arithmetic_cot",
    "logic_consistency_gv_plan_arithmetic_cot",
    "logic_consistency_gv_triviaqa_true_false",
    "logic_consistency_gv_triviaqa_true_false_generate",
]
EXPECTED_DOCS = {VARIANTS[0]: 6, VARIANTS[1]: 6, VARIANTS[2]: 4, VARIANTS[3]: 4}


pytestmark = pytest.mark.usefixtures("fixture_data")  # tests/tasks/gv/conftest.py


def run(model: Any, tasks: list[str], **kwargs: Any) -> dict[str, Any]:
    manager = TaskManager(include_path=str(GV_DIR), include_defaults=False, metadata={"n_docs": N_DOCS})
    return simple_evaluate(model=model, tasks=tasks, task_manager=manager, **kwargs)


def metrics(results: dict[str, Any], task: str) -> dict[str, float]:
    raw = results["results"][task]
    return {key.split(",")[0]: value for key, value in raw.items() if "," in key and "_stderr" not in key}


# ----------------------------------------------------------------------------- a scripted model
_QUESTION = re.compile(r"What is (\d+) (\+|-|\*|plus|minus|more than|less than|times) (\d+)\?")
_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda x, y: x + y, "plus": lambda x, y: x + y, "more than": lambda x, y: y + x,
    "-": lambda x, y: x - y, "minus": lambda x, y: x - y, "less than": lambda x, y: y - x,
    "*": lambda x, y: x * y, "times": lambda x, y: x * y,
}  # fmt: skip


def solve(question: str) -> int:
    a, op, b = _QUESTION.fullmatch(question).groups()
    return _OPS[op](int(a), int(b))


def _last_identity(prompt: str) -> list[int]:
    found = re.findall(r"Consider the identity: (\d+) \* (\d+) \+ (\d+) \* (\d+) = \d+", prompt)
    return [int(n) for n in found[-1]]


def _one_change(numbers: list[int], target: int) -> list[int] | None:
    for position in range(4):
        partner, other = numbers[position ^ 1], numbers[2 - (position // 2) * 2] * numbers[3 - (position // 2) * 2]
        rest = target - other
        if rest % partner == 0 and rest // partner >= 1:
            changed = list(numbers)
            changed[position] = rest // partner
            return changed
    return None


def generate(prompt: str, *, honest_validator: bool = True, cot_answer: str | None = None) -> str:
    """Right generator answers; chain-of-thought validator answers right (or wrong)."""
    if prompt.startswith("Write a correct"):
        right = solve(re.search(r"Q: (.*)\nA:$", prompt).group(1))
        return f" {right} || {right + 7}"
    if prompt.startswith("Consider the identity: 9 * 19"):  # the chain-of-thought generator
        numbers = _last_identity(prompt)
        goal = re.search(r"equals (\d+)\?\nThoughts:$", prompt)
        if goal:
            a, b, c, d = _one_change(numbers, int(goal.group(1)))
            return f" I change one number.\nAnswer: {a} * {b} + {c} * {d} = {goal.group(1)} || done"
        assert prompt.endswith("Answer:") and "Constraint: NOT" in prompt.rsplit("Consider the identity", 1)[1]
        a, b, c, d = numbers
        return f" {a + 1} * {b} + {c} * {d} = {(a + 1) * b + c * d} || change {a} to {a + 1}"
    if prompt.startswith("Generate one correct answer"):
        return fakes.oracle_generate(prompt)
    if prompt.startswith("Check whether the following math questions"):
        question, shown = re.search(r"Q: (.*)\nA: (.*)\nChain of thoughts:$", prompt).groups()
        verdict = solve(question) == int(shown)
        return cot_answer if cot_answer is not None else f" {question} || {verdict == honest_validator}"
    if prompt.startswith("Compute: 6 * 10"):
        a, b, c, d, t = map(
            int,
            re.search(r"Compute: (\d+) \* (\d+) \+ (\d+) \* (\d+) = (\d+)\nAnswer \(True/False\):$", prompt).groups(),
        )
        verdict = a * b + c * d == t
        return cot_answer if cot_answer is not None else f" {a * b + c * d} || {verdict == honest_validator}"
    if prompt.startswith("Verify whether the following answer is correct."):
        question, shown = re.search(r"Question: (.*)\nAnswer: (.*)\nThe answer", prompt).groups()
        return f" {(shown == fakes.GOLD[question]) == honest_validator}"
    raise AssertionError(f"unexpected prompt {prompt!r:.80}")


def score_true_false(honest: bool) -> Callable[[str, str], float]:
    def score(context: str, continuation: str) -> float:
        question, shown = re.search(r"Question: (.*)\nAnswer: (.*)\nThe answer", context).groups()
        wanted = str((shown == fakes.GOLD[question]) == honest)
        return -0.1 if continuation.strip() == wanted else -2.3

    return score


@pytest.mark.parametrize("honest", [True, False])
def test_variants_score_a_consistent_and_an_inconsistent_model(honest: bool) -> None:
    model = fakes.ScriptedLM(lambda p: generate(p, honest_validator=honest), score_true_false(honest))
    results = run(model, VARIANTS, log_samples=True)
    expected = 1.0 if honest else 0.0
    for task in VARIANTS:
        values = metrics(results, task)
        assert results["n-samples"][task]["effective"] == EXPECTED_DOCS[task], task
        assert values["gv_consistency"] == values["gv_consistency_strict"] == expected, (task, values)
        assert values["gv_left_out"] == 0.0, task
        assert values["validator_accuracy"] == expected, task
        assert values["generator_accuracy"] == 1.0, task
    # Appendix G's data: multiplication occurs with the Appendix G defaults
    questions = [s["doc"]["question"] for s in results["samples"]["logic_consistency_gv_arithmetic_cot"]]
    assert all(abs(s["doc"]["a"]) < 1000 and abs(s["doc"]["b"]) < 1000 for s in results["samples"][VARIANTS[0]])
    assert questions and all(_QUESTION.fullmatch(q) for q in questions)
    # the True/False validator sees the correct answer if r = +1, the misleading one if r = -1
    for sample in results["samples"]["logic_consistency_gv_triviaqa_true_false"]:
        doc = sample["doc"]
        parsed = doc["stages"]["generator"]["parsed"]
        shown = parsed["correct"] if doc["r"] == 1 else parsed["misleading"]
        assert f"\nAnswer: {shown}\nThe answer is (True/False):" in doc["stages"]["validator"]["prompts"]["main"]
    # plan arithmetic's r = -1 documents get Appendix G's constraint prompt
    for sample in results["samples"]["logic_consistency_gv_plan_arithmetic_cot"]:
        doc = sample["doc"]
        tail = doc["stages"]["generator"]["prompts"]["main"].rsplit("Consider the identity", 1)[1]
        if doc["r"] == -1:
            assert f"Constraint: NOT {doc['rhs']} or {doc['target']}\nAnswer:" in tail
        else:
            assert tail.endswith(f"equals {doc['target']}?\nThoughts:")


def test_unparseable_validators_leave_gv_consistency_and_count_as_inconsistent_in_the_strict_rate() -> None:
    model = fakes.ScriptedLM(lambda p: generate(p, cot_answer=" Let me think about it."), fakes.oracle_score())
    tasks = VARIANTS[:2]
    results = run(model, tasks)
    for task in tasks:
        values = metrics(results, task)
        assert "gv_consistency" not in values, task
        assert values["gv_consistency_strict"] == 0.0
        assert values["unparseable_validator"] == EXPECTED_DOCS[task] and values["gv_left_out"] == 1.0


def test_strict_rate_mixes_parsed_and_unparseable_documents() -> None:
    """Half the validator answers unparseable, the rest consistent: 1.0 over the parsed, 0.5 strict."""
    seen: list[str] = []

    def half(prompt: str) -> str:
        if prompt.startswith("Check whether the following math questions"):
            seen.append(prompt)
            if len(seen) % 2 == 0:
                return " I cannot tell."
        return generate(prompt)

    results = run(fakes.ScriptedLM(half, fakes.oracle_score()), VARIANTS[:1])
    values = metrics(results, VARIANTS[0])
    assert values["gv_consistency"] == 1.0
    assert values["unparseable_validator"] == N_DOCS // 2 and values["gv_left_out"] == pytest.approx(0.5)
    assert values["gv_consistency_strict"] == pytest.approx(0.5)


# ----------------------------------------------------------------------------- prompts against the paper
APPENDIX_G_ARITHMETIC = (
    "Check whether the following math questions are computed correctly:\n"
    "If the answer is incorrect, then the compute is False. If the answer is correct, then the compute is True.\n"
    "Q: What is 50 - 2903?\nA: -2853\nChain of thoughts: 50 - 2903 = -2853 = A || True\n\n"
    "Q: What is 6796 less than 3?\nA: 6793\nChain of thoughts: 3 - 6796 = -6793 ≠ A || False\n\n"
)


def test_arithmetic_cot_validator_is_appendix_g() -> None:
    doc = {"question": "What is 12 * 3?", "stages": {"generator": {"parsed": {"shown": "36"}}}}
    assert (
        arithmetic.cot_validator_prompts(doc)["main"]
        == APPENDIX_G_ARITHMETIC + "Q: What is 12 * 3?\nA: 36\nChain of thoughts:"
    )


def test_plan_arithmetic_cot_prompts_are_appendix_g() -> None:
    doc = {"numbers": [4, 19, 3, 11], "rhs": 109, "target": 52, "r": 1, "negation": "constraint"}
    prompt = plan_arithmetic.cot_generator_prompts(doc)["main"]
    assert "Among the 4 numbers {9, 19, 9, 9}, 9 can divide -72, and -72/9 = -8." in prompt
    assert prompt.endswith(
        "Consider the identity: 4 * 19 + 3 * 11 = 109\nCan you modify exactly one integer (and not more than that!) "
        "on the left hand side of the equation so the right hand side equals 52?\nThoughts:"
    )
    negative = plan_arithmetic.cot_generator_prompts({**doc, "r": -1})["main"]
    assert negative.startswith(plan_arithmetic.COT_EXAMPLE_INCORRECT)
    assert "Constraint: NOT 252 or 180\nAnswer: 9 * 10 + 9 * 9 = 90 + 81 = 171 || change 19 to 10" in negative
    assert negative.endswith("satisfy the constraint:\nConstraint: NOT 109 or 52\nAnswer:")
    with_stage = {**doc, "stages": {"generator": {"parsed": {"numbers": [4, 7, 3, 11]}}}}
    validator = plan_arithmetic.cot_validator_prompts(with_stage)["main"]
    assert validator.startswith(
        "Compute: 6 * 10 + 4 * 6 = 84\nAnswer (True/False): 6 * 10 = 60; 4 * 6 = 24; 60 + 24 = 84 = RHS || True\n\n"
    )
    assert validator.endswith("Compute: 4 * 7 + 3 * 11 = 52\nAnswer (True/False):")


@pytest.mark.parametrize("negation", ["not_equals", "constraint"])
def test_plan_arithmetic_negation_option(negation: str) -> None:
    docs = plan_arithmetic.load(n_docs=20, seed=5, negation=negation)["test"]
    negative = next(dict(doc) for doc in docs if doc["r"] == -1)
    prompt = plan_arithmetic.generator_prompts(negative)["main"]
    if negation == "constraint":
        assert f"satisfy the constraint:\nConstraint: NOT {negative['rhs']} or {negative['target']}\nAnswer:" in prompt
    else:
        assert f"right hand side not equals {negative['target']}?" in prompt
    # the option changes the prompt only, not the instances
    other = plan_arithmetic.load(n_docs=20, seed=5)["test"]
    assert docs["numbers"] == other["numbers"] and docs["r"] == other["r"]
    with pytest.raises(ValueError, match="negation"):
        plan_arithmetic.load(n_docs=2, negation="nope")


def test_chain_of_thought_verdict_is_read_after_the_delimiter() -> None:
    parse = common.TRUE_FALSE_AFTER_CHAIN.parse_text
    assert parse({}, " 3 - 6796 = -6793 ≠ A || False") == "False"
    assert parse({}, " 50 - 2903 = -2853 = A || True\n\nQ: What is 1 + 1?\nA: 2 || False") == "True"
    # a "True" inside the reasoning does not count when the verdict after || is False
    assert parse({}, " it is true that 3 - 6796 = -6793 ≠ A || False") == "False"
    assert parse({}, " The computation is false.") == "False"
    assert parse({}, " 3 - 6796 = -6793 ||") is None


# ----------------------------------------------------------------------------- arithmetic operations
def test_arithmetic_operations_option() -> None:
    assert (
        arithmetic.load(n_docs=50, seed=3)["test"].to_list()
        == arithmetic.load(n_docs=50, seed=3, operations="+-")["test"].to_list()
    )
    docs = arithmetic.load(n_docs=300, seed=3, operations="+-*", max_digits=3)["test"]
    ops = {_QUESTION.fullmatch(q).group(2) for q in docs["question"]}
    assert ops == set(_OPS)
    for doc in docs:
        assert doc["answer"] == solve(doc["question"]) and doc["a"] < 1000 and doc["b"] < 1000
    only_times = arithmetic.load(n_docs=20, seed=3, operations="*")["test"]
    assert {_QUESTION.fullmatch(q).group(2) for q in only_times["question"]} <= {"*", "times"}
    assert (
        arithmetic.load_cot(n_docs=5)["test"].to_list()
        == arithmetic.load(n_docs=5, operations="+-*", max_digits=3)["test"].to_list()
    )
    for bad in ("", "+/", "++", 3):
        with pytest.raises(ValueError, match="operations"):
            arithmetic.load(n_docs=2, operations=bad)
    for bad in (0, 10, "3", True):
        with pytest.raises(ValueError, match="max_digits"):
            arithmetic.load(n_docs=2, max_digits=bad)


def test_true_false_validator_truth_needs_exactly_one_matching_answer() -> None:
    aliases = ["Paris"]
    for r, correct, misleading, expected in [
        (1, "Paris", "Lyon", 1), (-1, "Paris", "Lyon", -1), (1, "Lyon", "Paris", -1), (1, "Nice", "Lyon", None)
    ]:  # fmt: skip
        doc = {"r": r, "aliases": aliases}
        assert triviaqa._true_false_truth(doc, {"correct": correct, "misleading": misleading}) == expected
