"""GV task "arithmetic": addition and subtraction of numbers of up to 5 digits (paper §2.3, Table 13).

Generator and validator prompts are Table 13 verbatim; correctness randomisation (§2.2.1): the
validator sees the correct answer if ``r = +1``, the incorrect one if ``r = -1``, and is consistent
answering True / False accordingly. Questions are synthetic (after CalibratedMath, Lin et al. 2022),
each operand of 1 to ``max_digits`` digits. The paper disagrees with itself on the operations:
Table 13's example subtracts 5-digit numbers, Appendix G says "+, -, x of fewer than 4 digits"; the
main task keeps Table 13 (``operations: "+-"``, ``max_digits: 5``), the chain-of-thought task
(Appendix G's two-shot validator, † results) Appendix G (``"+-*"``, 3). Multiplication wording is
the suite's own. ``generator_accuracy``: the correct answer equals the result;
``validator_accuracy``: the verdict equals whether the shown answer is right. Option
``generator_shots`` (default 0: Table 13's zero-shot prompt) puts that many of the suite's fixed
demonstrations before the generator prompt, for models that do not follow the ``||`` format unshown.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import datasets

from logic_consistency.common import instance_rng
from logic_consistency.options import OptionError, check_option

from .base import GVTask
from .common import TRUE_FALSE, TRUE_FALSE_AFTER_CHAIN, stage_parser
from .parsing import Unparseable, format_number, parse_number, split_two_answers, strip_labels

TASK = "arithmetic"
#: (phrasing, result) of each question form by operation; ``a`` and ``b`` are drawn in this order.
#: Provenance: "+", "-" and "less than" phrasings follow Table 13 / Appendix G's examples; "plus",
#: "minus", "more than", "*" and "times" are the suite's own.
FORMS_BY_OPERATION: dict[str, tuple[tuple[str, Callable[[int, int], int]], ...]] = {
    "+": (
        ("What is {a} + {b}?", lambda a, b: a + b),
        ("What is {a} plus {b}?", lambda a, b: a + b),
        ("What is {a} more than {b}?", lambda a, b: b + a),
    ),
    "-": (
        ("What is {a} - {b}?", lambda a, b: a - b),
        ("What is {a} minus {b}?", lambda a, b: a - b),
        ("What is {a} less than {b}?", lambda a, b: b - a),
    ),
    "*": (("What is {a} * {b}?", lambda a, b: a * b), ("What is {a} times {b}?", lambda a, b: a * b)),
}
#: The + / - forms in the order of the suite's first release (their draws, hence the documents of
#: ``operations: "+-"``, are unchanged); multiplication forms follow.
FORMS: tuple[tuple[str, Callable[[int, int], int]], ...] = (
    FORMS_BY_OPERATION["+"][0],
    FORMS_BY_OPERATION["-"][0],
    FORMS_BY_OPERATION["+"][1],
    FORMS_BY_OPERATION["-"][1],
    FORMS_BY_OPERATION["+"][2],
    FORMS_BY_OPERATION["-"][2],
    *FORMS_BY_OPERATION["*"],
)
MAX_DIGITS = 5
#: Table 13's setting (the main task) and Appendix G's (the chain-of-thought task).
TABLE_13_OPERATIONS, APPENDIX_G_OPERATIONS, APPENDIX_G_MAX_DIGITS = "+-", "+-*", 3

# Provenance: Table 13 (arithmetic), verbatim.
GENERATOR_TEMPLATE = "Write a correct and an incorrect answer (delimited by ||) to the question:\nQ: {question}\nA:"
# Provenance: the suite's own, not the paper's (Table 13's generator prompt is zero-shot). Small models
# do not follow that format unshown (SmolLM2-135M-Instruct wrote "||" in 0 of 193 zero-shot generations),
# so ``generator_shots: k`` puts the first k of these before the prompt, each the verbatim Table 13 prompt
# with a correct and an incorrect answer. Fixed constants in the task's question forms (+, minus, less
# than), never drawn from the documents, so they cannot leak a test question.
GENERATOR_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("What is 12 + 7?", "19", "21"),
    ("What is 45 minus 3?", "42", "38"),
    ("What is 130 less than 2045?", "1915", "2175"),
)
# Provenance: Table 13 (arithmetic), verbatim.
VALIDATOR_TEMPLATE = (
    "Verify whether the following computation is correct.\nQ: {question}\nA: {shown}\nThe computation is (True/False):"
)
# Provenance: Appendix G (arithmetic validator with chain of thought), verbatim up to layout: the
# PDF's LaTeX "$50 - 2903 = -2853 = A \\parallel \\text{True}$" is written "... = A || True" and
# \\neq as "≠"; the two examples are separated by a blank line as in the appendix.
COT_VALIDATOR_TEMPLATE = (
    "Check whether the following math questions are computed correctly:\n"
    "If the answer is incorrect, then the compute is False. If the answer is correct, then the compute is True.\n"
    "Q: What is 50 - 2903?\nA: -2853\nChain of thoughts: 50 - 2903 = -2853 = A || True\n\n"
    "Q: What is 6796 less than 3?\nA: 6793\nChain of thoughts: 3 - 6796 = -6793 ≠ A || False\n\n"
    "Q: {question}\nA: {shown}\nChain of thoughts:"
)


def check_operations(operations: Any) -> str:
    """Validate the ``operations`` option: a non-empty string of distinct characters from ``+-*``."""
    if (
        not isinstance(operations, str)
        or not operations
        or len(set(operations)) != len(operations)
        or not set(operations) <= set(FORMS_BY_OPERATION)
    ):
        raise OptionError(
            f"operations must be a non-empty string of distinct characters from '+-*', got {operations!r}"
        )
    return operations


def check_max_digits(max_digits: Any) -> int:
    """Validate the ``max_digits`` option (declared in ``_options_yaml``: an int in 1..9)."""
    digits: int = check_option("max_digits", max_digits)
    return digits


def check_generator_shots(generator_shots: Any) -> int:
    """Validate ``generator_shots`` (declared in ``_options_yaml``: an int in 0..len(GENERATOR_EXAMPLES))."""
    shots: int = check_option("generator_shots", generator_shots)
    return shots


def demonstrations(shots: int) -> str:
    """The first ``shots`` of :data:`GENERATOR_EXAMPLES` as answered generator prompts, each ending in a blank line."""
    return "".join(
        f"{GENERATOR_TEMPLATE.format(question=question)} {correct} || {incorrect}\n\n"
        for question, correct, incorrect in GENERATOR_EXAMPLES[:shots]
    )


def _operand(rng: Any, max_digits: int) -> int:
    digits = int(rng.integers(1, max_digits + 1))
    low = 1 if digits == 1 else 10 ** (digits - 1)
    return int(rng.integers(low, 10**digits))


def make_question(
    seed: int, doc_id: str, *, operations: str = TABLE_13_OPERATIONS, max_digits: int = MAX_DIGITS
) -> dict[str, Any]:
    """One question, drawn from the seed and the document id only (and the two options)."""
    rng = instance_rng(seed, doc_id, "arithmetic")
    forms = [form for form in FORMS if any(form in FORMS_BY_OPERATION[op] for op in operations)]
    form, result = forms[int(rng.integers(len(forms)))]
    a, b = _operand(rng, max_digits), _operand(rng, max_digits)
    return {"id": doc_id, "question": form.format(a=a, b=b), "a": a, "b": b, "answer": result(a, b)}


def _is_right(text: str, doc: dict[str, Any]) -> bool:
    return text == str(doc["answer"])


GV = GVTask(
    TASK,
    TRUE_FALSE,
    generator_accuracy=lambda doc, parsed: float(_is_right(parsed["correct"], doc)),
    validator_truth=lambda doc, parsed: 1 if _is_right(parsed["shown"], doc) else -1,
)


def load(
    *,
    n_docs: int = 200,
    seed: int = 1234,
    operations: str = TABLE_13_OPERATIONS,
    max_digits: int = MAX_DIGITS,
    generator_shots: int = 0,
) -> datasets.DatasetDict:
    """``custom_dataset`` entry point: ``n_docs`` synthetic questions.

    Args:
        n_docs: Number of questions.
        seed: Seed of the questions and of ``r``.
        operations: Operations to draw from, a string over ``+-*`` (see the module docstring).
        max_digits: Largest number of digits of an operand.
        generator_shots: Demonstrations before the generator prompt (0 = Table 13's zero-shot
            prompt); stored in each document when not 0, so the documents of 0 are unchanged.
    """
    operations, max_digits = check_operations(operations), check_max_digits(max_digits)
    shots = check_generator_shots(generator_shots)
    draw = partial(make_question, operations=operations, max_digits=max_digits)

    def make_row(row_seed: int, doc_id: str) -> dict[str, Any]:
        return {**draw(row_seed, doc_id), "generator_shots": shots} if shots else draw(row_seed, doc_id)

    return GV.numbered_docs(make_row, n_docs=n_docs, seed=seed)


def load_cot(
    *,
    n_docs: int = 200,
    seed: int = 1234,
    operations: str = APPENDIX_G_OPERATIONS,
    max_digits: int = APPENDIX_G_MAX_DIGITS,
    generator_shots: int = 0,
) -> datasets.DatasetDict:
    """``custom_dataset`` of the chain-of-thought task: as :func:`load`, Appendix G's defaults."""
    return load(n_docs=n_docs, seed=seed, operations=operations, max_digits=max_digits, generator_shots=generator_shots)


_zero_shot_prompts = GV.generator_prompts(GENERATOR_TEMPLATE)


def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """The ``generator`` stage's hook: Table 13's prompt, after the document's ``generator_shots`` demonstrations."""
    prompts = _zero_shot_prompts(doc)
    shots = doc.get("generator_shots", 0)
    return {name: demonstrations(shots) + prompt for name, prompt in prompts.items()} if shots else prompts


def _answer(fragment: str, question: str) -> int | Any:
    # A restated question ("What is 5 + 3? 8") would add its operands to the numbers in sight.
    text = strip_labels(fragment.replace(question, " ").replace("Q:", " ").replace("A:", " "))
    value = parse_number(text)
    if value is None:
        raise Unparseable(f"no single number in {fragment.strip()!r:.60}")
    return value


@stage_parser
def parse_generator(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """Stage parser: ``{correct, incorrect, shown}`` as numbers (text), or ``{"error": ...}``."""
    first, second = split_two_answers(text)
    correct, incorrect = _answer(first, doc["question"]), _answer(second, doc["question"])
    shown = correct if doc["r"] == 1 else incorrect
    return {"correct": format_number(correct), "incorrect": format_number(incorrect), "shown": format_number(shown)}


validator_prompts = GV.validator_prompts(VALIDATOR_TEMPLATE)
parse_validator_loglikelihood = GV.validator.parse_loglikelihood
parse_validator_generated = GV.validator.parse_generated
score = GV.score
#: Appendix G's chain-of-thought validator: the same shown answer, the verdict generated after ``||``.
cot_validator_prompts = GV.validator_prompts(COT_VALIDATOR_TEMPLATE)
parse_cot_validator = TRUE_FALSE_AFTER_CHAIN.parse_generated
