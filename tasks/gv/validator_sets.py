"""The validator measured as Li et al. App. H measures it (Table 5, Figure 5): on a fixed set per task
built from the ground truth, not on the model's own generator answers.

App. H computes the right answer (arithmetic, plan arithmetic) or takes TriviaQA's, and "obtain[s] an
incorrect answer by prompting text-davinci-003 ... and verify that the answer is indeed incorrect".
Here each document of the GV task (the same documents and ``instance_split`` halves) gives the
validator, in its own prompt and answer format, one right and one verified wrong answer, drawn from
the seed and the document id (no model; stream ``app_h_incorrect``): arithmetic, the right result
moved by 1 to 10 either way; plan arithmetic, the solution's changed number replaced so that the
left-hand side misses the target (evaluated); TriviaQA, another question's gold answer that matches
none of the aliases, shown once as A and once as B. ``validator_accuracy_app_h`` is the share judged
right: always False (or always A) scores 50%. An unparseable verdict is counted, never guessed.
Harmful questions and prompt prioritisation (crowd-sourced labels) and style transfer (Li et al.
2018b's Yelp set) have no set here (:data:`NO_SET`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import datasets

from logic_consistency.common import instance_rng
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import arithmetic, plan_arithmetic, triviaqa
from .common import A_OR_B, PROMPT, TRUE_FALSE, TRUE_FALSE_AFTER_CHAIN, ValidatorSpec

__all__ = [
    "APP_H",
    "APP_H_METRIC",
    "APP_H_TASKS",
    "GPT4_JUDGED",
    "NO_SET",
    "WRONG_ANSWER",
    "score",
    "task_kind",
    "with_fixed_sets",
    "wrong_number",
]

#: The metric of the fixed set (Table 5's validator column where App. H has a set).
APP_H_METRIC = "validator_accuracy_app_h"
#: GV task -> its App. H task (the GV tasks App. H builds a set for, the suite's variants included).
APP_H_TASKS = {
    "logic_consistency_gv_arithmetic": "logic_consistency_gv_arithmetic_app_h",
    "logic_consistency_gv_arithmetic_cot": "logic_consistency_gv_arithmetic_cot_app_h",
    "logic_consistency_gv_plan_arithmetic": "logic_consistency_gv_plan_arithmetic_app_h",
    "logic_consistency_gv_plan_arithmetic_cot": "logic_consistency_gv_plan_arithmetic_cot_app_h",
    "logic_consistency_gv_triviaqa": "logic_consistency_gv_triviaqa_app_h",
}
#: App. H task -> the GV task it measures.
APP_H = {app_h: task for task, app_h in APP_H_TASKS.items()}
#: Why a GV task has no fixed set here (its Table 5 validator column is the suite's measure, said so).
NO_SET = {
    "harmful": "App. H's labels are crowd-sourced (three Mechanical Turk workers)",
    "prompt_prioritization": "App. H's labels are crowd-sourced (three Mechanical Turk workers)",
    "style_transfer": "App. H uses the Yelp set of Li et al. (2018b), not in the suite",
}
#: GV tasks whose generator Li et al. score with GPT-4 (§5.3): no judge here, so not measurable.
GPT4_JUDGED = ("harmful", "prompt_prioritization", "style_transfer")
#: The wrong answer of each App. H set: the suite's choice, beside the paper's (a validator column says it).
WRONG_ANSWER = {
    "arithmetic": "wrong answer: the right result moved by 1 to 10, the suite's choice (App. H: text-davinci-003's)",
    "plan_arithmetic": "wrong answer: the solution's number changed to miss the target, the suite's choice "
    "(App. H: text-davinci-003's)",
    "triviaqa": "wrong answer: another question's gold answer, the suite's choice (App. H: text-davinci-003's, "
    "more plausible, so this set likely reads higher)",
}


def task_kind(task: str) -> str:
    """The paper's task a GV task name stands for (``logic_consistency_gv_arithmetic_cot`` -> ``arithmetic``)."""
    name = task.removeprefix("logic_consistency_gv_")
    for suffix in ("_generate", "_app_h", "_cot", "_true_false"):
        name = name.removesuffix(suffix)
    return name


def with_fixed_sets(tasks: str) -> str:
    """``tasks`` (comma-separated) followed by the App. H task of each that has one."""
    names = tasks.split(",")
    return ",".join([*names, *(APP_H_TASKS[name] for name in names if name in APP_H_TASKS)])


#: Item name -> the verdict that is right (True/False items: the right and the wrong answer shown;
#: A/B items: the gold answer first or second).
_TRUTH = {"right": 1, "wrong": -1, "gold_a": 1, "gold_b": -1}


def _rng(doc: dict[str, Any]) -> Any:
    return instance_rng(int(doc["seed"]), str(doc["id"]), "app_h_incorrect")


def wrong_number(right: int, doc: dict[str, Any]) -> int:
    """The right result moved by 1 to 10, either sign (seeded by the document): never the right one."""
    rng = _rng(doc)
    return right + int(rng.integers(1, 11)) * (1 if int(rng.integers(2)) else -1)


def _wrong_plan(doc: dict[str, Any]) -> list[int]:
    """The paper's solution with its changed number replaced so that the left-hand side misses the target."""
    numbers = [int(n) for n in doc["solution"].replace("+", "*").split("*")]
    position = next(k for k, (a, b) in enumerate(zip(doc["numbers"], numbers, strict=True)) if a != b)
    values = [v for v in range(plan_arithmetic.LOW, plan_arithmetic.HIGH + 1) if v != numbers[position]]
    for index in _rng(doc).permutation(len(values)).tolist():
        wrong = [*numbers[:position], values[index], *numbers[position + 1 :]]
        if plan_arithmetic.evaluate(wrong) != doc["target"]:  # verified incorrect
            return wrong
    raise ValueError(f"{doc['id']}: no incorrect left-hand side")  # unreachable: a product changes with its factor


def with_seed(load: Callable[..., datasets.DatasetDict]) -> Callable[..., datasets.DatasetDict]:
    """A GV loader whose documents also carry their ``seed`` (the incorrect answers' stream)."""

    @functools.wraps(load)  # lm-eval passes a loader the options its signature names: the wrapped one's
    def loader(**options: Any) -> datasets.DatasetDict:
        docs = load(**options)
        seed = options.get("seed", DEFAULT_SEED)
        return datasets.DatasetDict({k: part.add_column("seed", [seed] * len(part)) for k, part in docs.items()})

    return loader


# ----------------------------------------------------------------------------- items per task
def arithmetic_items(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The right result and a verified wrong one, as the arithmetic validator is shown an answer."""
    right = int(doc["answer"])
    return {"right": {"question": doc["question"], "shown": str(right)},
            "wrong": {"question": doc["question"], "shown": str(wrong_number(right, doc))}}  # fmt: skip


def plan_items(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The paper's solution and a verified wrong left-hand side, each against the target."""
    right = [int(n) for n in doc["solution"].replace("+", "*").split("*")]
    return {"right": {"expression": plan_arithmetic.expression(right), "target": doc["target"]},
            "wrong": {"expression": plan_arithmetic.expression(_wrong_plan(doc)), "target": doc["target"]}}  # fmt: skip


def plan_cot_items(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """As :func:`plan_items`, written spaced as Appendix G's chain-of-thought validator shows a left-hand side."""
    return {name: {**fields, "expression": fields["expression"].replace("*", " * ").replace("+", " + ")}
            for name, fields in plan_items(doc).items()}  # fmt: skip


def wrong_answers(rows: Sequence[dict[str, Any]], seed: int) -> list[str]:
    """Per question, another question's gold answer that none of its aliases matches (seeded by its id)."""
    golds = [str(row["gold_answer"]) for row in rows]
    chosen = []
    for row in rows:
        order = instance_rng(seed, str(row["id"]), "app_h_incorrect").permutation(len(golds)).tolist()
        found = next((golds[i] for i in order if not triviaqa.matches(golds[i], list(row["aliases"]))), None)
        if found is None:
            raise ValueError(f"TriviaQA question {row['id']}: no other question's answer is incorrect for it")
        chosen.append(found)
    return chosen


def triviaqa_items(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The gold answer and a verified wrong one, once with the gold answer as A and once as B."""
    gold, wrong = doc["gold_answer"], doc["app_h_incorrect"]
    return {"gold_a": {"question": doc["question"], "option_a": gold, "option_b": wrong},
            "gold_b": {"question": doc["question"], "option_a": wrong, "option_b": gold}}  # fmt: skip


def load_triviaqa(*, n_docs: int | None = None, seed: int = DEFAULT_SEED) -> datasets.DatasetDict:
    """The GV TriviaQA documents, each with its verified wrong answer (``app_h_incorrect``)."""
    docs = triviaqa.load(n_docs=n_docs, seed=seed)
    return datasets.DatasetDict(
        {k: part.add_column("app_h_incorrect", wrong_answers(list(part), seed)) for k, part in docs.items()}
    )


# ----------------------------------------------------------------------------- stage hooks
def prompts(
    template: str, items: Callable[[dict[str, Any]], dict[str, dict[str, Any]]]
) -> Callable[[dict[str, Any]], dict[str, str]]:
    """The validator stage's hook: one prompt per item, the task's own validator template."""

    def hook(doc: dict[str, Any]) -> dict[str, str]:
        return {name: template.format_map(fields) for name, fields in items(doc).items()}

    return hook


def parser(spec: ValidatorSpec, *, generated: bool) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """The stage's parser: each item's verdict parsed as the task parses its validator's (never one
    error for the document: an item that does not parse says so on its own)."""
    parse_one = spec.parse_generated if generated else spec.parse_loglikelihood

    def parse(doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
        return {"items": {name: parse_one(doc, {PROMPT: output}) for name, output in outputs.items()}}

    return parse


def score(doc: dict[str, Any]) -> dict[str, float]:
    """``validator_accuracy_app_h``: the share of the parsed items judged right; ``unparseable_validator``."""
    items = doc["stages"]["validator"]["parsed"].get("items") or {}
    verdicts = [item["v"] == _TRUTH[name] for name, item in items.items() if "v" in item]
    out = {"unparseable_validator": float(len(items) - len(verdicts))}
    if verdicts:
        out[APP_H_METRIC] = sum(verdicts) / len(verdicts)
    return out


arithmetic_prompts = prompts(arithmetic.VALIDATOR_TEMPLATE, arithmetic_items)
arithmetic_cot_prompts = prompts(arithmetic.COT_VALIDATOR_TEMPLATE, arithmetic_items)
plan_prompts = prompts(plan_arithmetic.VALIDATOR_TEMPLATE, plan_items)
plan_cot_prompts = prompts(plan_arithmetic.COT_VALIDATOR_TEMPLATE, plan_cot_items)
triviaqa_prompts = prompts(triviaqa.VALIDATOR_TEMPLATE, triviaqa_items)
parse_true_false = parser(TRUE_FALSE, generated=False)
parse_true_false_after_chain = parser(TRUE_FALSE_AFTER_CHAIN, generated=True)
parse_a_or_b = parser(A_OR_B, generated=False)
load_arithmetic = with_seed(arithmetic.load)
load_arithmetic_cot = with_seed(arithmetic.load_cot)
load_plan_arithmetic = with_seed(plan_arithmetic.load)
load_plan_arithmetic_cot = with_seed(plan_arithmetic.load_cot)
