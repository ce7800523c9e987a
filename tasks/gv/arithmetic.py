"""GV task "arithmetic": addition and subtraction of numbers of up to 5 digits (paper §2.3, Table 13).

Generator (Table 13, verbatim): "Write a correct and an incorrect answer (delimited by ||) to the
question:" then ``Q: <question>`` and ``A:``. Correctness randomisation (§2.2.1): the validator is
shown the correct answer when ``r = +1`` and the incorrect one when ``r = -1``, and asked
"Verify whether the following computation is correct. ... The computation is (True/False):"
(Table 13, verbatim). Consistent when it answers True for ``r = +1`` and False for ``r = -1``.

Questions are synthetic (as in the paper, after Lin et al. 2022's CalibratedMath), phrased as
``What is 89541 - 9374?`` or in words (``What is 6796 less than 3?`` = 3 - 6796, the Appendix G
example). Each operand has 1 to 5 digits (digit count uniform, then the value uniform).

Metrics: ``generator_accuracy`` = the generator's *correct* answer equals the true result;
``validator_accuracy`` = the validator's True/False equals whether the shown answer is right.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import datasets

from logic_consistency.common import instance_rng

from .common import (
    GENERATOR,
    PROMPT,
    TRUE_FALSE,
    check_n_docs,
    check_seed,
    make_docs,
    parse_or_error,
    score_document,
)
from .parsing import Unparseable, format_number, parse_number, split_two_answers, strip_labels

TASK = "arithmetic"
#: (phrasing, result) of each question form; ``a`` and ``b`` are drawn in this order.
FORMS: tuple[tuple[str, Callable[[int, int], int]], ...] = (
    ("What is {a} + {b}?", lambda a, b: a + b),
    ("What is {a} - {b}?", lambda a, b: a - b),
    ("What is {a} plus {b}?", lambda a, b: a + b),
    ("What is {a} minus {b}?", lambda a, b: a - b),
    ("What is {a} more than {b}?", lambda a, b: b + a),
    ("What is {a} less than {b}?", lambda a, b: b - a),
)
MAX_DIGITS = 5

GENERATOR_TEMPLATE = "Write a correct and an incorrect answer (delimited by ||) to the question:\nQ: {question}\nA:"
VALIDATOR_TEMPLATE = (
    "Verify whether the following computation is correct.\nQ: {question}\nA: {answer}\nThe computation is (True/False):"
)


def _operand(rng: Any) -> int:
    digits = int(rng.integers(1, MAX_DIGITS + 1))
    low = 1 if digits == 1 else 10 ** (digits - 1)
    return int(rng.integers(low, 10**digits))


def make_question(seed: int, doc_id: str) -> dict[str, Any]:
    """One question, drawn from the seed and the document id only."""
    rng = instance_rng(seed, doc_id, "arithmetic")
    form, result = FORMS[int(rng.integers(len(FORMS)))]
    a, b = _operand(rng), _operand(rng)
    return {"id": doc_id, "question": form.format(a=a, b=b), "a": a, "b": b, "answer": result(a, b)}


def load(*, n_docs: int = 200, seed: int = 1234, **kwargs: Any) -> datasets.DatasetDict:
    """``custom_dataset`` entry point: ``n_docs`` synthetic questions (``**kwargs``: other metadata, ignored)."""
    del kwargs
    n_docs, seed = check_n_docs(n_docs, allow_none=False), check_seed(seed)
    rows = [make_question(seed, f"{TASK}-{index:05d}") for index in range(n_docs)]
    return make_docs(TASK, rows, seed)


def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``generator`` prompt (Table 13)."""
    return {PROMPT: GENERATOR_TEMPLATE.format(question=doc["question"])}


def _answer(fragment: str, question: str) -> int | Any:
    # A restated question ("What is 5 + 3? 8") would add its operands to the numbers in sight.
    text = strip_labels(fragment.replace(question, " ").replace("Q:", " ").replace("A:", " "))
    value = parse_number(text)
    if value is None:
        raise Unparseable(f"no single number in {fragment.strip()!r:.60}")
    return value


def parse_generator(doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """Stage parser: ``{correct, incorrect, shown}`` as numbers (text), or ``{"error": ...}``."""

    def parse() -> dict[str, Any]:
        first, second = split_two_answers(outputs[PROMPT])
        correct, incorrect = _answer(first, doc["question"]), _answer(second, doc["question"])
        shown = correct if doc["r"] == 1 else incorrect
        return {"correct": format_number(correct), "incorrect": format_number(incorrect), "shown": format_number(shown)}

    return parse_or_error(parse)


def validator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``validator`` prompt (Table 13) with the answer chosen by ``r``."""
    shown = doc["stages"][GENERATOR]["parsed"]["shown"]
    return {PROMPT: VALIDATOR_TEMPLATE.format(question=doc["question"], answer=shown)}


parse_validator_loglikelihood = TRUE_FALSE.parse_loglikelihood
parse_validator_generated = TRUE_FALSE.parse_generated


def _is_right(text: str, doc: dict[str, Any]) -> bool:
    return text == str(doc["answer"])


def score(doc: dict[str, Any]) -> dict[str, float]:
    """Per-document metrics (see the module docstring)."""
    return score_document(
        doc,
        generator_accuracy=lambda d, parsed: float(_is_right(parsed["correct"], d)),
        validator_truth=lambda d, parsed: 1 if _is_right(parsed["shown"], d) else -1,
    )
