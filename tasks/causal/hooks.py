"""Stage hooks of the causal epistemic consistency tasks (``!function`` targets of the YAML).

Stage 1 (``generation``, shared): Figure 7's four prompts, each parsed into two intermediates; with
the original defeater (-3) and supporter (+3) they are labelled on the intensity scale (Figure 2,
eq. 1): -5 / -4 the second / first stronger defeater, -2 / -1 the first / second weaker defeater,
+1 / +2 the second / first weaker supporter, +4 / +5 the first / second stronger supporter.
Stage 2 (``ranking``): Figure 8's prompt over the ten in the document's seeded ``display_order``
(``logic_consistency_causal_ranking``), or one log-likelihood request per intermediate scoring the
effect after cause ⊕ conjunction ⊕ intermediate, lowest first (``logic_consistency_causal_ctp_*``,
section 5). The sample log shows ``doc["stages"]``: the intermediates by label, the labels as shown,
the model's ranking as argument numbers and as labels, and ``parsed.error`` when unparseable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import datasets

from logic_consistency.harness_ext.plan.counts import prompts_per_document
from logic_consistency.metrics.causal import CAUSAL_LABELS, causal_consistency
from logic_consistency.options import check_option
from logic_consistency.tasks.data import delta_causal
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from .parsing import ParseError, parse_arguments, parse_ranking
from .prompts import GENERATION_PROMPTS, ctp_request, generation_prompt, ranking_prompt

__all__ = [
    "GENERATED_LABELS",
    "GENERATION_STAGE",
    "ORIGINAL_LABELS",
    "RANKING_STAGE",
    "ctp_prompts",
    "generation_prompts",
    "label_key",
    "load_ctp",
    "parse_ctp",
    "parse_generation",
    "parse_ranking_output",
    "ranking_prompts",
    "score",
]

GENERATION_STAGE = "generation"
RANKING_STAGE = "ranking"
#: Generation prompt name -> labels of its first and second argument.
GENERATED_LABELS: Mapping[str, tuple[int, int]] = {
    "weaker_defeaters": (-2, -1),
    "stronger_defeaters": (-4, -5),
    "weaker_supporters": (2, 1),
    "stronger_supporters": (4, 5),
}
#: Document field -> label of the original intermediate it holds.
ORIGINAL_LABELS: Mapping[str, int] = {"defeater": -3, "supporter": 3}


def label_key(label: int) -> str:
    """JSON key of a label: ``"-5"`` ... ``"-1"``, ``"+1"`` ... ``"+5"``."""
    return f"{label:+d}"


# ----------------------------------------------------------------------------- stage 1
def generation_prompts(doc: Mapping[str, Any]) -> dict[str, str]:
    """Stage 1 prompts: the four Figure 7 prompts of one document."""
    return {name: generation_prompt(doc, kind, strength) for name, (kind, strength) in GENERATION_PROMPTS.items()}


def parse_generation(doc: Mapping[str, Any], outputs: Mapping[str, str]) -> dict[str, Any]:
    """Stage 1 parser: the ten labelled intermediates and the order the ranking prompt shows them in.

    Returns:
        ``{"intermediates": {"-5": text, ..., "+5": text}, "shown_labels": [label of argument 1,
        ...]}``, or ``{"error": ..., "unparseable_prompts": [...]}`` when an answer does not hold
        exactly two arguments (the document then skips stage 2).
    """
    texts: dict[int, str] = {label: str(doc[field]).strip() for field, label in ORIGINAL_LABELS.items()}
    errors: dict[str, str] = {}
    for name, labels in GENERATED_LABELS.items():
        try:
            arguments = parse_arguments(outputs[name], expected=len(labels))
        except ParseError as error:
            errors[name] = str(error)
            continue
        texts.update(zip(labels, arguments))
    if errors:
        return {
            "error": "; ".join(f"{name}: {message}" for name, message in errors.items()),
            "unparseable_prompts": list(errors),
        }
    order = [int(index) for index in doc["display_order"]]
    if sorted(order) != list(range(len(CAUSAL_LABELS))):
        raise ValueError(f"document {doc.get('id')!r}: display_order {order} is not a permutation of 0..9")
    return {
        "intermediates": {label_key(label): texts[label] for label in CAUSAL_LABELS},
        "shown_labels": [CAUSAL_LABELS[index] for index in order],
    }


def _shown_arguments(doc: Mapping[str, Any]) -> tuple[list[int], list[str]]:
    parsed = doc["stages"][GENERATION_STAGE]["parsed"]
    labels = [int(label) for label in parsed["shown_labels"]]
    return labels, [parsed["intermediates"][label_key(label)] for label in labels]


# ----------------------------------------------------------------------------- stage 2: prompting
@prompts_per_document(1)
def ranking_prompts(doc: Mapping[str, Any]) -> dict[str, str]:
    """Stage 2 prompt: Figure 8 over the ten intermediates in the document's display order."""
    _, arguments = _shown_arguments(doc)
    return {"ranking": ranking_prompt(doc, arguments)}


def parse_ranking_output(doc: Mapping[str, Any], outputs: Mapping[str, str]) -> dict[str, Any]:
    """Stage 2 parser: ``{"ranking": [argument numbers], "ranked_labels": [...]}`` or ``{"error"}``."""
    labels, arguments = _shown_arguments(doc)
    try:
        numbers = parse_ranking(outputs["ranking"], arguments)
    except ParseError as error:
        return {"error": str(error)}
    return {"ranking": numbers, "ranked_labels": [labels[number - 1] for number in numbers]}


# ----------------------------------------------------------------------------- stage 2: CTP
def load_ctp(
    *,
    conjunction: str | None = None,
    split: str = "test",
    one_per_pair: bool = False,
    seed: int = DEFAULT_SEED,
) -> datasets.DatasetDict:
    """δ-CAUSAL documents with a ``conjunction`` field for the CTP ranking (``custom_dataset``).

    Args:
        conjunction: One of so, because, since, as, therefore, thus, hence (YAML
            ``dataset_kwargs``).
        split, one_per_pair, seed: As :func:`logic_consistency.tasks.data.delta_causal.load`
            (named here so that the task knows its options).
    """
    check_option("conjunction", conjunction)
    loaded = delta_causal.load(split=split, one_per_pair=one_per_pair, seed=seed)
    test = loaded["test"]
    return datasets.DatasetDict({"test": test.add_column("conjunction", [conjunction] * test.num_rows)})


@prompts_per_document(10)
def ctp_prompts(doc: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Stage 2 requests: the effect's log-likelihood after cause ⊕ intermediate + conjunction, per label."""
    intermediates = doc["stages"][GENERATION_STAGE]["parsed"]["intermediates"]
    return {key: ctp_request(doc, text, doc["conjunction"]) for key, text in intermediates.items()}


def parse_ctp(doc: Mapping[str, Any], outputs: Mapping[str, float]) -> dict[str, Any]:
    """Stage 2 parser: rank the labels by log CS(E | C ⊕ I), lowest (most weakening) first.

    Equal log-likelihoods are ordered as the ranking prompt would have shown them (the seeded
    display order), so that ties never favour the generation order.
    """
    labels, _ = _shown_arguments(doc)
    shown_position = {label: position for position, label in enumerate(labels)}
    logprobs = {label: float(outputs[label_key(label)]) for label in CAUSAL_LABELS}
    bad = [label_key(label) for label, value in logprobs.items() if math.isnan(value)]
    if bad:
        return {"error": f"log-likelihood is NaN for {bad}"}
    ranked = sorted(CAUSAL_LABELS, key=lambda label: (logprobs[label], shown_position[label]))
    return {"ranked_labels": ranked}


# ----------------------------------------------------------------------------- scoring
#: The consistency metrics of one ranking, in :func:`~logic_consistency.metrics.causal_consistency`'s order.
CONSISTENCY_METRICS: tuple[str, ...] = tuple(causal_consistency(list(CAUSAL_LABELS)))


def score(doc: Mapping[str, Any]) -> dict[str, float | None]:
    """Per-document metrics: :func:`~logic_consistency.metrics.causal_consistency` of the ranking.

    The counts ``unparseable_generation`` / ``unparseable_ranking`` are always reported (0 or 1,
    summed over documents); the consistency metrics are ``None`` (undefined) on a document without a
    parsed ranking, which those counts count, and each is aggregated over the others
    (:mod:`logic_consistency.harness_ext.task.undefined`).
    """
    stages = doc["stages"]
    undefined = dict.fromkeys(CONSISTENCY_METRICS)
    if "error" in stages[GENERATION_STAGE]["parsed"]:
        return {**undefined, "unparseable_generation": 1.0, "unparseable_ranking": 0.0}
    ranking = stages[RANKING_STAGE]["parsed"]
    if "error" in ranking:
        return {**undefined, "unparseable_generation": 0.0, "unparseable_ranking": 1.0}
    return {**causal_consistency(ranking["ranked_labels"]), "unparseable_generation": 0.0, "unparseable_ranking": 0.0}
