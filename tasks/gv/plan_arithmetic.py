"""GV task "plan arithmetic": change one number of ``A*B+C*D = RHS`` to reach ``RHS'`` (paper §2.3, Table 1).

Generator and validator prompts are Tables 1 and 13 verbatim; consistent when the validator answers
True for ``r = +1`` and False for ``r = -1``. Option ``negation``: ``not_equals`` (Table 1's
"(not equals)" put in place of "equals"; main task) or ``constraint`` (Appendix G's "Constraint: NOT
RHS or RHS'"; chain-of-thought task, whose prompts are Appendix G's with "Consider the identity"
kept first). Instances are synthetic (after Bubeck et al. 2023): A..D uniform in 1..20 and ``RHS'``
reachable by changing one of them, so a solution always exists. ``generator_accuracy`` (r = +1
only): exactly one number changed and the left-hand side equals ``RHS'``; ``validator_accuracy``:
the verdict equals whether the shown left-hand side really gives ``RHS'``.
"""

from __future__ import annotations

import re
from typing import Any

import datasets

from logic_consistency.common import instance_rng
from logic_consistency.options import check_option

from .base import GVTask
from .common import PROMPT, TRUE_FALSE, TRUE_FALSE_AFTER_CHAIN, stage_parser
from .parsing import Unparseable

TASK = "plan_arithmetic"
LOW, HIGH = 1, 20

# Provenance: Tables 1 and 13 (plan arithmetic generator), verbatim; r = -1's "not equals" is
# Table 1's parenthetical "(not equals)" put in place of "equals".
GENERATOR_TEMPLATE = (
    "Consider the identity: {identity}\n"
    "Can you modify exactly one integer (and not more than that!) on the left hand side of the equation "
    "so the right hand side {relation} {target}?\nAnswer:"
)
# Provenance: Table 1 ("equals", and its parenthetical "(not equals)" for the incorrect answer).
RELATIONS = {1: "equals", -1: "not equals"}
# Provenance: Tables 1 and 13 / Appendix G (the question shared by every plan-arithmetic prompt), verbatim.
_QUESTION = "Can you modify exactly one integer (and not more than that!) on the left hand side of the equation "
# Provenance: Appendix G ("Generator Prompt (for incorrect answer)"), verbatim wording but not its
# order: Appendix G prints the "Can you modify ..." line before "Consider the identity"; the identity
# line is put first here (see the module docstring).
CONSTRAINT_TEMPLATE = (
    "Consider the identity: {identity}\n" + _QUESTION + "so the right hand side satisfy the constraint:\n"
    "Constraint: NOT {rhs} or {target}\nAnswer:"
)
# Provenance: Table 13 (plan arithmetic validator), verbatim.
VALIDATOR_TEMPLATE = (
    "Check whether the following computation is correct.\n{expression} = {target}\nThe computation is (True/False):"
)
# Provenance: Appendix G ("Generator Prompt (for correct answer)"), verbatim up to layout: the PDF's
# LaTeX "$9 * 11 + 9 * 9 = 180 \\parallel \\text{change } 19 \\text{ to } 11$" is written with "||".
# (Braces doubled: the text is part of a str.format template.)
COT_EXAMPLE_CORRECT = (
    "Consider the identity: 9 * 19 + 9 * 9 = 252\n" + _QUESTION + "so the right hand side equals 180?\n"
    "Thoughts: To change from 252 to 180 requires increasing the answer by -72. Among the 4 numbers "
    "{{9, 19, 9, 9}}, 9 can divide -72, and -72/9 = -8. So we need to change 19 to 19-8 = 11.\n"
    "Answer: 9 * 11 + 9 * 9 = 180 || change 19 to 11\n\n"
)
# Provenance: Appendix G ("Generator Prompt (for incorrect answer)"), its wording up to layout (LaTeX
# as in COT_EXAMPLE_CORRECT) but not its order: Appendix G prints "Can you modify ... satisfy the
# constraint:" before "Consider the identity: ..."; the identity comes first here, as in every other
# plan prompt of the paper (see the module docstring).
COT_EXAMPLE_INCORRECT = (
    "Consider the identity: 9 * 19 + 9 * 9 = 252\n" + _QUESTION + "so the right hand side satisfy the constraint:\n"
    "Constraint: NOT 252 or 180\nAnswer: 9 * 10 + 9 * 9 = 90 + 81 = 171 || change 19 to 10\n\n"
)
# Provenance: the suite's own closing line for the r = +1 chain-of-thought prompt: the task's own
# question followed by "Thoughts:" so the model continues with Appendix G's reasoning format.
COT_GENERATOR_CORRECT = (
    COT_EXAMPLE_CORRECT
    + "Consider the identity: {identity}\n"
    + _QUESTION
    + "so the right hand side equals {target}?\nThoughts:"
)
# Provenance: Appendix G's incorrect-answer example followed by the instance in the same (Appendix G) form.
COT_GENERATOR_INCORRECT = COT_EXAMPLE_INCORRECT + CONSTRAINT_TEMPLATE
# Provenance: Appendix G (plan arithmetic validator with computation steps), verbatim up to layout
# (\\neq written "≠", \\parallel "||"); the appendix's second example ("Compute: 2 * 8 + 4 * 17 =
# 33" answered "... 16 + 68 = 84 ≠ RHS || False") is kept as printed.
COT_VALIDATOR_TEMPLATE = (
    "Compute: 6 * 10 + 4 * 6 = 84\nAnswer (True/False): 6 * 10 = 60; 4 * 6 = 24; 60 + 24 = 84 = RHS || True\n\n"
    "Compute: 2 * 8 + 4 * 17 = 33\nAnswer (True/False): 2 * 8 = 16; 4 * 17 = 68; 16 + 68 = 84 ≠ RHS || False\n\n"
    "Compute: {expression} = {target}\nAnswer (True/False):"
)
NEGATIONS = ("not_equals", "constraint")

_TIMES = r"\s*[*×x·]\s*"
# Not part of a longer or decimal number; a sentence's final period may follow.
_EXPRESSION = re.compile(rf"(?<![\d.])(\d+){_TIMES}(\d+)\s*\+\s*(\d+){_TIMES}(\d+)(?!\d|\.\d)")
_CHANGE = re.compile(r"change\s+(\d+)\s+to\s+(-?\d+)", re.IGNORECASE)


def expression(numbers: list[int]) -> str:
    """``A*B+C*D`` as the paper writes it (no spaces)."""
    a, b, c, d = numbers
    return f"{a}*{b}+{c}*{d}"


def evaluate(numbers: list[int]) -> int:
    a, b, c, d = numbers
    return a * b + c * d


def make_instance(seed: int, doc_id: str) -> dict[str, Any]:
    """One instance, drawn from the seed and the document id only."""
    rng = instance_rng(seed, doc_id, "plan_arithmetic")
    numbers = [int(n) for n in rng.integers(LOW, HIGH + 1, size=4)]
    position = int(rng.integers(4))
    replacement = int(rng.choice([n for n in range(LOW, HIGH + 1) if n != numbers[position]]))
    solution = list(numbers)
    solution[position] = replacement
    return {
        "id": doc_id,
        "numbers": numbers,
        "rhs": evaluate(numbers),
        "target": evaluate(solution),
        "solution": expression(solution),
    }


def _generator_accuracy(doc: dict[str, Any], parsed: dict[str, Any]) -> float | None:
    if doc["r"] != 1:
        return None
    return float(parsed["n_changed"] == 1 and parsed["value"] == doc["target"])


GV = GVTask(
    TASK,
    TRUE_FALSE,
    generator_accuracy=_generator_accuracy,
    validator_truth=lambda doc, parsed: 1 if parsed["value"] == doc["target"] else -1,
)


def load(*, n_docs: int = 200, seed: int = 1234, negation: str = "not_equals") -> datasets.DatasetDict:
    """``custom_dataset`` entry point: ``n_docs`` synthetic instances.

    Args:
        n_docs: Number of instances.
        seed: Seed of the instances and of ``r``.
        negation: Wording of the r = -1 generator prompt: ``"not_equals"`` (Table 1) or
            ``"constraint"`` (Appendix G); stored in each document.
    """
    check_option("negation", negation)
    return GV.numbered_docs(
        lambda instance_seed, doc_id: {**make_instance(instance_seed, doc_id), "negation": negation},
        n_docs=n_docs,
        seed=seed,
    )


def load_cot(*, n_docs: int = 200, seed: int = 1234, negation: str = "constraint") -> datasets.DatasetDict:
    """``custom_dataset`` of the chain-of-thought task: as :func:`load`, Appendix G's r = -1 form by default."""
    return load(n_docs=n_docs, seed=seed, negation=negation)


def _identity(doc: dict[str, Any]) -> str:
    return f"{expression(doc['numbers'])} = {doc['rhs']}"


def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``generator`` prompt: "equals" for ``r = +1``; for ``r = -1`` "not equals" or Appendix G's constraint."""
    if doc["r"] == -1 and doc.get("negation") == "constraint":
        return {PROMPT: CONSTRAINT_TEMPLATE.format(identity=_identity(doc), rhs=doc["rhs"], target=doc["target"])}
    return {
        PROMPT: GENERATOR_TEMPLATE.format(identity=_identity(doc), relation=RELATIONS[doc["r"]], target=doc["target"])
    }


def spaced(numbers: list[int]) -> str:
    """``A * B + C * D``, spaced as in Appendix G's chain-of-thought examples."""
    return expression(numbers).replace("*", " * ").replace("+", " + ")


def cot_generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``generator`` prompt of the chain-of-thought task (Appendix G's example first, then the instance)."""
    identity = f"{spaced(doc['numbers'])} = {doc['rhs']}"
    if doc["r"] == 1:
        return {PROMPT: COT_GENERATOR_CORRECT.format(identity=identity, target=doc["target"])}
    if doc.get("negation") == "constraint":
        return {PROMPT: COT_GENERATOR_INCORRECT.format(identity=identity, rhs=doc["rhs"], target=doc["target"])}
    return {
        PROMPT: COT_EXAMPLE_INCORRECT
        + GENERATOR_TEMPLATE.format(identity=identity, relation=RELATIONS[-1], target=doc["target"])
    }


def _from_change(text: str, numbers: list[int]) -> list[int] | None:
    """Apply Appendix G's "change 19 to 11" when 19 occurs exactly once on the left-hand side."""
    match = _CHANGE.search(text)
    if match is None:
        return None
    old, new = int(match.group(1)), int(match.group(2))
    if numbers.count(old) != 1:
        return None
    changed = list(numbers)
    changed[numbers.index(old)] = new
    return changed


def parse_answer(text: str, numbers: list[int]) -> list[int]:
    """The four numbers of the proposed left-hand side.

    Takes the ``a*b+c*d`` expressions of the output (``×``, ``x`` and spaces accepted; a trailing
    ``= value`` ignored): the one expression that differs from the original identity (which chat
    models restate). Failing that, Appendix G's "change X to Y".

    Raises:
        Unparseable: No changed expression (the original alone reads as a restated problem), or
            several different ones.
    """
    found = {tuple(int(n) for n in match) for match in _EXPRESSION.findall(text)}
    original = tuple(numbers)
    changed = found - {original}
    if len(changed) == 1:
        return list(changed.pop())
    if len(changed) > 1:
        raise Unparseable(f"several different left-hand sides in {text.strip()!r:.80}")
    from_change = _from_change(text, numbers)
    if from_change is not None:
        return from_change
    if original in found:
        # Indistinguishable from restating the problem ("To solve 4*19+3*11 ..."), and never right.
        raise Unparseable(f"only the original left-hand side, unchanged, in {text.strip()!r:.80}")
    raise Unparseable(f"no left-hand side of the form A*B+C*D in {text.strip()!r:.80}")


@stage_parser
def parse_generator(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """Stage parser: ``{numbers, expression, value, n_changed}`` or ``{"error": ...}``."""
    proposed = parse_answer(text, doc["numbers"])
    return {
        "numbers": proposed,
        "expression": expression(proposed),
        "value": evaluate(proposed),
        "n_changed": sum(1 for old, new in zip(doc["numbers"], proposed) if old != new),
    }


validator_prompts = GV.validator_prompts(VALIDATOR_TEMPLATE)
parse_validator_loglikelihood = GV.validator.parse_loglikelihood
parse_validator_generated = GV.validator.parse_generated
score = GV.score


def _cot_validator_fields(doc: dict[str, Any], parsed: dict[str, Any]) -> dict[str, Any]:
    """Appendix G writes the proposed left-hand side spaced (``A * B + C * D``)."""
    return {"expression": spaced(parsed["numbers"]), "target": doc["target"]}


#: Appendix G's chain-of-thought validator: the proposed left-hand side, the verdict generated after ``||``.
cot_validator_prompts = GV.validator_prompts(COT_VALIDATOR_TEMPLATE, _cot_validator_fields)
parse_cot_validator = TRUE_FALSE_AFTER_CHAIN.parse_generated
