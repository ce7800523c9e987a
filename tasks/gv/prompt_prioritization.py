"""GV task "prompt prioritisation": write as a persona, then say which persona wrote it (paper §2.3, App. E).

Generator (Table 13, verbatim): "Your goal is to be consistent with the specified persona, and write
a response that's aligned with the persona's beliefs and characteristics while relevant to the task
prompt." then "Persona: you are <persona>.", "Task: write about the benefits of <topic>." and
"Answer:". Order randomisation (§2.2.2): the validator, "Check which of the following personas is
more likely to write the following text" with "Text: <response>", "Persona A: ...", "Persona B:
..." and "Answer (A/B):" (verbatim), sees the persona at ``A`` when ``r = +1`` and at ``B`` when
``r = -1`` (the foil persona at the other); consistent when it picks the persona.

Inputs: the 40 written items of :mod:`.prioritization_inputs` (half conflicting). No generator or
validator accuracy (the paper uses GPT-4 and crowd labels).
"""

from __future__ import annotations

from typing import Any

import datasets

from logic_consistency.harness_ext.plan import prompts_per_document

from .common import (
    A_OR_B,
    GENERATOR,
    PROMPT,
    check_n_docs,
    check_seed,
    make_docs,
    parse_or_error,
    score_document,
    subsample,
)
from .parsing import clean_free_text
from .prioritization_inputs import ITEMS

TASK = "prompt_prioritization"
# Provenance: Table 13 (prompt prioritization generator), verbatim.
GENERATOR_TEMPLATE = (
    "Your goal is to be consistent with the specified persona, and write a response that's aligned with the "
    "persona's beliefs and characteristics while relevant to the task prompt.\n"
    "Persona: you are {persona}.\nTask: write about the benefits of {topic}.\nAnswer:"
)
# Provenance: Table 13 (prompt prioritization validator), verbatim.
VALIDATOR_TEMPLATE = (
    "Check which of the following personas is more likely to write the following text\n"
    "Text: {text}\nPersona A: you are {option_a}.\nPersona B: you are {option_b}.\nAnswer (A/B):"
)


def load(*, n_docs: int | None = None, seed: int = 1234, **kwargs: Any) -> datasets.DatasetDict:
    """``custom_dataset`` entry point: the 40 items (``n_docs``: seeded subset, ``None`` = all)."""
    del kwargs
    n_docs, seed = check_n_docs(n_docs, allow_none=True), check_seed(seed)
    rows = [{"id": f"{TASK}-{index:02d}", **item._asdict()} for index, item in enumerate(ITEMS)]
    return make_docs(TASK, subsample(rows, n_docs, seed, TASK), seed)


def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``generator`` prompt (Table 13)."""
    return {PROMPT: GENERATOR_TEMPLATE.format(persona=doc["persona"], topic=doc["topic"])}


def parse_generator(doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """Stage parser: ``{response, options}`` (preamble removed; options = personas in validator order)."""

    def parse() -> dict[str, Any]:
        response = clean_free_text(outputs[PROMPT], first_paragraph=False)
        options = [doc["persona"], doc["foil"]] if doc["r"] == 1 else [doc["foil"], doc["persona"]]
        return {"response": response, "options": options}

    return parse_or_error(parse)


@prompts_per_document(1)
def validator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``validator`` prompt: persona and foil in the order ``r`` chose."""
    parsed = doc["stages"][GENERATOR]["parsed"]
    option_a, option_b = parsed["options"]
    return {PROMPT: VALIDATOR_TEMPLATE.format(text=parsed["response"], option_a=option_a, option_b=option_b)}


parse_validator_loglikelihood = A_OR_B.parse_loglikelihood
parse_validator_generated = A_OR_B.parse_generated


def score(doc: dict[str, Any]) -> dict[str, float]:
    """Per-document metrics: consistency and the unparseable counts."""
    return score_document(doc)
