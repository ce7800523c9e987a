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

from .base import GVTask
from .common import A_OR_B, stage_parser
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
    "Text: {response}\nPersona A: you are {option_a}.\nPersona B: you are {option_b}.\nAnswer (A/B):"
)
#: Consistency and the unparseable counts only: no generator or validator accuracy.
GV = GVTask(TASK, A_OR_B)


def load(*, n_docs: int | None = None, seed: int = 1234) -> datasets.DatasetDict:
    """``custom_dataset`` entry point: the 40 items (``n_docs``: seeded subset, ``None`` = all)."""
    return GV.sampled_docs(
        lambda: [{"id": f"{TASK}-{index:02d}", **item._asdict()} for index, item in enumerate(ITEMS)],
        n_docs=n_docs,
        seed=seed,
    )


generator_prompts = GV.generator_prompts(GENERATOR_TEMPLATE)


@stage_parser
def parse_generator(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """Stage parser: ``{response, options}`` (preamble removed; options = personas in validator order)."""
    response = clean_free_text(text, first_paragraph=False)
    options = [doc["persona"], doc["foil"]] if doc["r"] == 1 else [doc["foil"], doc["persona"]]
    return {"response": response, "options": options}


validator_prompts = GV.validator_prompts(VALIDATOR_TEMPLATE)
parse_validator_loglikelihood = GV.validator.parse_loglikelihood
parse_validator_generated = GV.validator.parse_generated
score = GV.score
