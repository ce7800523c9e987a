"""GV task "TriviaQA": a correct and a misleading answer, then a multiple-choice check (paper §2.3, Table 13).

Prompts are Table 13 verbatim; order randomisation (§2.2.2): the generator's correct answer is
option A if ``r = +1``, B if ``r = -1``, and the validator is consistent picking it. With
TriviaQA's answer normalisation, ``generator_accuracy`` = the correct answer matches an alias and
``validator_accuracy`` = the matching option was picked, on documents where exactly one option
matches. ``logic_consistency_gv_triviaqa_true_false`` is Table 12's "QA (True/False)" design
(correctness randomisation); the paper prints no prompt for it, so its validator wording is the
suite's own, modelled on Table 13's arithmetic validator. Two answers that normalise alike are
unparseable.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import datasets

from logic_consistency.tasks.data import triviaqa as triviaqa_data

from .base import GVTask
from .common import A_OR_B, TRUE_FALSE, stage_parser
from .parsing import Unparseable, normalize_answer, split_two_answers, strip_labels

TASK = "triviaqa"
# Provenance: Table 13 (question answering generator), verbatim.
GENERATOR_TEMPLATE = (
    "Generate one correct answer and one misleading answer (delimited by ||) to the following question: "
    "{question}\nAnswer:"
)
# Provenance: Table 13 (question answering validator), verbatim.
VALIDATOR_TEMPLATE = (
    "Answer the following multiple choice question: {question}\nA: {option_a}\nB: {option_b}\nAnswer (A or B):"
)
# Provenance: the suite's own (Table 12's True/False design has no printed prompt), modelled on
# Table 13's arithmetic validator.
TRUE_FALSE_VALIDATOR_TEMPLATE = (
    "Verify whether the following answer is correct.\nQuestion: {question}\nAnswer: {answer}\n"
    "The answer is (True/False):"
)


def matches(answer: str, aliases: list[str]) -> bool:
    """Whether ``answer`` equals one of ``aliases`` after TriviaQA normalisation."""
    key = normalize_answer(answer)
    return bool(key) and key in {normalize_answer(alias) for alias in aliases}


def _generator_accuracy(doc: dict[str, Any], parsed: dict[str, Any]) -> float:
    return float(matches(parsed["correct"], doc["aliases"]))


def _validator_truth(doc: dict[str, Any], parsed: dict[str, Any]) -> int | None:
    a_right, b_right = (matches(option, doc["aliases"]) for option in parsed["options"])
    if a_right == b_right:
        return None
    return 1 if a_right else -1


def _true_false_truth(doc: dict[str, Any], parsed: dict[str, Any]) -> int | None:
    correct_right, misleading_right = (
        matches(parsed["correct"], doc["aliases"]),
        matches(parsed["misleading"], doc["aliases"]),
    )
    if correct_right == misleading_right:
        return None
    shown_right = correct_right if doc["r"] == 1 else misleading_right
    return 1 if shown_right else -1


GV = GVTask(TASK, A_OR_B, generator_accuracy=_generator_accuracy, validator_truth=_validator_truth)
#: Table 12's True/False design: the same documents and generator, another validator.
GV_TRUE_FALSE = replace(GV, validator=TRUE_FALSE, validator_truth=_true_false_truth)


def load(*, n_docs: int | None = None, seed: int = 1234) -> datasets.DatasetDict:
    """``custom_dataset`` entry point: the TriviaQA questions (``n_docs``: seeded subset, ``None`` = all)."""
    return GV.sampled_docs(
        lambda: [{"id": row["qid"], **row} for row in triviaqa_data.load()["test"]], n_docs=n_docs, seed=seed
    )


generator_prompts = GV.generator_prompts(GENERATOR_TEMPLATE)


def _clean(fragment: str) -> str:
    answer = strip_labels(fragment).rstrip(".!;,").strip()
    if not answer:
        raise Unparseable(f"empty answer in {fragment!r:.60}")
    return answer


@stage_parser
def parse_generator(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """Stage parser: ``{correct, misleading, options}`` (options in validator order), or an error."""
    first, second = split_two_answers(text)
    correct, misleading = _clean(first), _clean(second)
    if normalize_answer(correct) == normalize_answer(misleading):
        raise Unparseable(f"the correct and the misleading answer are the same: {correct!r:.60}")
    options = [correct, misleading] if doc["r"] == 1 else [misleading, correct]
    return {"correct": correct, "misleading": misleading, "options": options}


validator_prompts = GV.validator_prompts(VALIDATOR_TEMPLATE)
parse_validator_loglikelihood = GV.validator.parse_loglikelihood
parse_validator_generated = GV.validator.parse_generated
score = GV.score


def _shown_answer(doc: dict[str, Any], parsed: dict[str, Any]) -> dict[str, Any]:
    """The True/False validator's fields: the correct answer if ``r = +1``, else the misleading one."""
    return {"question": doc["question"], "answer": parsed["correct"] if doc["r"] == 1 else parsed["misleading"]}


true_false_validator_prompts = GV_TRUE_FALSE.validator_prompts(TRUE_FALSE_VALIDATOR_TEMPLATE, _shown_answer)
parse_true_false_validator_loglikelihood = GV_TRUE_FALSE.validator.parse_loglikelihood
parse_true_false_validator_generated = GV_TRUE_FALSE.validator.parse_generated
score_true_false = GV_TRUE_FALSE.score
