"""GV task "style transfer": rewrite a sentence in a style, then pick the more stylish text (paper §2.3, Table 13).

Generator (Table 13, verbatim): "Here is some text: <sentence> Here is a rewrite of the text, which is
more <style>:" then "Answer:". Order randomisation (§2.2.2): the validator, "Which of the following
text is more <style>:" with options ``A:`` / ``B:`` and "Answer (A or B):" (verbatim), sees the
rewrite at ``A`` when ``r = +1`` and at ``B`` when ``r = -1`` (the input sentence at the other);
consistent when it picks the rewrite.

Documents: ``n_docs`` (sentence, style) pairs drawn without replacement from the written sentences
(:mod:`.style_inputs`) times the styles of ``style_split`` -- ``train`` (the paper's 40 training
styles, default), ``heldout`` (its 12 extrapolation styles) or ``all``.

No generator or validator accuracy: the paper scores them with GPT-4 and human labels on Yelp.
A rewrite identical to the input (after normalisation) is unparseable: the options would be equal.
"""

from __future__ import annotations

from typing import Any

import datasets

from logic_consistency.common import instance_rng
from logic_consistency.options import check_option

from .base import GVTask
from .common import A_OR_B, stage_parser
from .parsing import Unparseable, clean_free_text, normalize_answer
from .style_inputs import SENTENCES, STYLE_SPLITS

TASK = "style_transfer"
# Provenance: Table 13 (style transfer generator), verbatim.
GENERATOR_TEMPLATE = "Here is some text: {sentence} Here is a rewrite of the text, which is more {style}:\nAnswer:"
# Provenance: Table 13 (style transfer validator), verbatim.
VALIDATOR_TEMPLATE = "Which of the following text is more {style}:\nA: {option_a}\nB: {option_b}\nAnswer (A or B):"
#: Consistency and the unparseable counts only: no generator or validator accuracy.
GV = GVTask(TASK, A_OR_B)


def load(*, n_docs: int | None = 100, seed: int = 1234, style_split: str = "train") -> datasets.DatasetDict:
    """``custom_dataset`` entry point (``n_docs``: pairs to draw, ``None`` = every pair)."""
    return GV.documents(
        lambda count, checked_seed: pairs(count, checked_seed, style_split), n_docs=n_docs, seed=seed, allow_all=True
    )


def pairs(n_docs: int | None, seed: int, style_split: str) -> list[dict[str, Any]]:
    """``n_docs`` (sentence, style) rows drawn without replacement, in (sentence, style) order."""
    check_option("style_split", style_split)
    styles = STYLE_SPLITS[style_split]
    total = len(SENTENCES) * len(styles)
    size = total if n_docs is None else min(n_docs, total)
    picks = instance_rng(seed, f"{TASK}/{style_split}", "pairs").choice(total, size=size, replace=False)
    rows = []
    for pick in sorted(int(p) for p in picks):
        sentence_index, style_index = divmod(pick, len(styles))
        rows.append(
            {
                "id": f"{TASK}-s{sentence_index:02d}-{styles[style_index]}",
                "sentence": SENTENCES[sentence_index],
                "style": styles[style_index],
                "style_split": style_split,
            }
        )
    return rows


generator_prompts = GV.generator_prompts(GENERATOR_TEMPLATE)


@stage_parser
def parse_generator(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """Stage parser: ``{rewrite, options}`` (first paragraph, preamble removed), or an error."""
    rewrite = clean_free_text(text, first_paragraph=True)
    if normalize_answer(rewrite) == normalize_answer(doc["sentence"]):
        raise Unparseable("the rewrite repeats the input sentence")
    options = [rewrite, doc["sentence"]] if doc["r"] == 1 else [doc["sentence"], rewrite]
    return {"rewrite": rewrite, "options": options}


validator_prompts = GV.validator_prompts(VALIDATOR_TEMPLATE)
parse_validator_loglikelihood = GV.validator.parse_loglikelihood
parse_validator_generated = GV.validator.parse_generated
score = GV.score
