"""One GV task declared once: its documents, validator hooks and scoring come from a :class:`GVTask`.

A task module states what is its own (prompt templates with their provenance, rows, generator
parser, validator options :class:`~.common.ValidatorSpec`, accuracies) and its YAML's hooks are one
line each, e.g. ``GV = GVTask("triviaqa", A_OR_B, ...)``, ``generator_prompts =
GV.generator_prompts(GENERATOR_TEMPLATE)``, ``score = GV.score``. Its ``load`` names its options
(lm-eval passes a loader only the keys it names) and hands them to :meth:`GVTask.numbered_docs`,
:meth:`GVTask.sampled_docs` or :meth:`GVTask.documents`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets

from logic_consistency.harness_ext.plan.counts import prompts_per_document
from logic_consistency.tasks.data.seed import check_seed

from .common import GENERATOR, PROMPT, ValidatorSpec, check_n_docs, make_docs, score_document, subsample

__all__ = ["GVTask", "StageHook", "validator_fields"]

#: A stage's ``prompts`` hook: document -> ``{PROMPT: text}``.
StageHook = Callable[[dict[str, Any]], dict[str, str]]
Row = dict[str, Any]


def validator_fields(doc: Mapping[str, Any], parsed: Mapping[str, Any]) -> dict[str, Any]:
    """What a validator template may name: the document's fields, the parsed generator output's
    (which win), and ``option_a`` / ``option_b`` from its ``options`` (order randomisation)."""
    fields = {**doc, **parsed}
    if "options" in parsed:
        fields["option_a"], fields["option_b"] = parsed["options"]
    return fields


@dataclass(frozen=True)
class GVTask:
    """A GV task's name, validator options and accuracies (see :func:`.common.score_document`).

    Attributes:
        name: The task (``gv_task`` and the id prefix of its documents, the subsample's stream).
        validator: The validator's answer options and parsers.
        generator_accuracy: ``(doc, parsed generator) -> 0/1 or None``, where ground truth exists.
        validator_truth: ``(doc, parsed generator) -> +1/-1 or None``, where ground truth exists.
    """

    name: str
    validator: ValidatorSpec
    generator_accuracy: Callable[[dict[str, Any], dict[str, Any]], float | None] | None = None
    validator_truth: Callable[[dict[str, Any], dict[str, Any]], int | None] | None = None

    # ------------------------------------------------------------------------- documents
    def documents(
        self, make_rows: Callable[[int | None, int], Sequence[Row]], *, n_docs: Any, seed: Any, allow_all: bool
    ) -> datasets.DatasetDict:
        """Check ``n_docs`` (``None`` = all, when ``allow_all``) and ``seed``, then wrap
        ``make_rows(n_docs, seed)`` as the task's documents (:func:`.common.make_docs`)."""
        checked_n_docs, checked_seed = check_n_docs(n_docs, allow_none=allow_all), check_seed(seed)
        return make_docs(self.name, make_rows(checked_n_docs, checked_seed), checked_seed)

    def numbered_docs(self, make_row: Callable[[int, str], Row], *, n_docs: Any, seed: Any) -> datasets.DatasetDict:
        """``n_docs`` synthetic rows ``make_row(seed, doc_id)``, ids ``<task>-00000``, ``<task>-00001``, ..."""

        def rows(count: int | None, checked_seed: int) -> list[Row]:
            assert count is not None  # allow_all=False
            return [make_row(checked_seed, f"{self.name}-{index:05d}") for index in range(count)]

        return self.documents(rows, n_docs=n_docs, seed=seed, allow_all=False)

    def sampled_docs(self, read_rows: Callable[[], Sequence[Row]], *, n_docs: Any, seed: Any) -> datasets.DatasetDict:
        """A seeded subset of ``n_docs`` of the rows ``read_rows()`` returns (``None`` = all of them).

        The rows are read after the options are checked, so a bad option fails before any data loads.
        """

        def rows(count: int | None, checked_seed: int) -> list[Row]:
            return subsample(read_rows(), count, checked_seed, self.name)

        return self.documents(rows, n_docs=n_docs, seed=seed, allow_all=True)

    # ------------------------------------------------------------------------- stage hooks
    @staticmethod
    def generator_prompts(template: str) -> StageHook:
        """The ``generator`` stage's hook: ``template`` filled with the document's fields."""

        def generator_prompts(doc: dict[str, Any]) -> dict[str, str]:
            return {PROMPT: template.format_map(doc)}

        return generator_prompts

    @staticmethod
    def validator_prompts(
        template: str, fields: Callable[[dict[str, Any], dict[str, Any]], Mapping[str, Any]] = validator_fields
    ) -> StageHook:
        """The ``validator`` stage's hook (one prompt per document): ``template`` filled with
        ``fields(doc, parsed generator output)``, by default :func:`validator_fields`."""

        @prompts_per_document(1)
        def validator_prompts(doc: dict[str, Any]) -> dict[str, str]:
            return {PROMPT: template.format_map(fields(doc, doc["stages"][GENERATOR]["parsed"]))}

        return validator_prompts

    # ------------------------------------------------------------------------- scoring
    def score(self, doc: dict[str, Any]) -> dict[str, float]:
        """Per-document metrics (:func:`.common.score_document` with the task's accuracies)."""
        return score_document(doc, generator_accuracy=self.generator_accuracy, validator_truth=self.validator_truth)
