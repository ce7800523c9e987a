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
from logic_consistency.harness_ext.plan import prompts_per_document
from logic_consistency.options import check_choice

from .common import (
    A_OR_B,
    GENERATOR,
    PROMPT,
    check_n_docs,
    check_seed,
    make_docs,
    parse_or_error,
    score_document,
)
from .parsing import Unparseable, clean_free_text, normalize_answer
from .style_inputs import SENTENCES, STYLE_SPLITS

TASK = "style_transfer"
# Provenance: Table 13 (style transfer generator), verbatim.
GENERATOR_TEMPLATE = "Here is some text: {sentence} Here is a rewrite of the text, which is more {style}:\nAnswer:"
# Provenance: Table 13 (style transfer validator), verbatim.
VALIDATOR_TEMPLATE = "Which of the following text is more {style}:\nA: {option_a}\nB: {option_b}\nAnswer (A or B):"


def load(
    *, n_docs: int | None = 100, seed: int = 1234, style_split: str = "train", **kwargs: Any
) -> datasets.DatasetDict:
    """``custom_dataset`` entry point (``n_docs``: pairs to draw, ``None`` = every pair; ``**kwargs`` ignored)."""
    del kwargs
    n_docs, seed = check_n_docs(n_docs, allow_none=True), check_seed(seed)
    check_choice(style_split, STYLE_SPLITS, name="style_split")
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
    return make_docs(TASK, rows, seed)


def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``generator`` prompt (Table 13)."""
    return {PROMPT: GENERATOR_TEMPLATE.format(sentence=doc["sentence"], style=doc["style"])}


def parse_generator(doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """Stage parser: ``{rewrite, options}`` (first paragraph, preamble removed), or an error."""

    def parse() -> dict[str, Any]:
        rewrite = clean_free_text(outputs[PROMPT], first_paragraph=True)
        if normalize_answer(rewrite) == normalize_answer(doc["sentence"]):
            raise Unparseable("the rewrite repeats the input sentence")
        options = [rewrite, doc["sentence"]] if doc["r"] == 1 else [doc["sentence"], rewrite]
        return {"rewrite": rewrite, "options": options}

    return parse_or_error(parse)


@prompts_per_document(1)
def validator_prompts(doc: dict[str, Any]) -> dict[str, str]:
    """Stage ``validator`` prompt: rewrite and input in the order ``r`` chose."""
    option_a, option_b = doc["stages"][GENERATOR]["parsed"]["options"]
    return {PROMPT: VALIDATOR_TEMPLATE.format(style=doc["style"], option_a=option_a, option_b=option_b)}


parse_validator_loglikelihood = A_OR_B.parse_loglikelihood
parse_validator_generated = A_OR_B.parse_generated


def score(doc: dict[str, Any]) -> dict[str, float]:
    """Per-document metrics: consistency and the unparseable counts."""
    return score_document(doc)
