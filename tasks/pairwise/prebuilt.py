"""The base of the pairwise tasks that ask the model while lm-eval builds their requests.

PairS (:mod:`~logic_consistency.tasks.pairwise.pairs_task`: merge rounds that depend on earlier
answers) and self-agreement (:mod:`~logic_consistency.tasks.pairwise.self_agreement_task`: k samples
per prompt) do their model calls in ``build_all_requests`` and store each document's outcome in
``self._docs``; lm-eval then sees that document and one placeholder request per document, never sent
to the model (:func:`~logic_consistency.harness_ext.task.placeholders.placeholder`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from lm_eval.api.instance import Instance

from logic_consistency.harness_ext.task.placeholders import placeholder
from logic_consistency.tasks.pairwise.task import PairwiseConsistencyTask


class PrebuiltTask(PairwiseConsistencyTask):
    """A pairwise task whose documents carry the answers asked while building requests (module docstring)."""

    #: The placeholder request's prompt: says where the document's model calls went.
    PLACEHOLDER_PROMPT: ClassVar[str]

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        self._docs: dict[int, dict[str, Any]] = {}

    def doc_iterator(self, **kwargs: Any) -> Iterator[tuple[int, dict[str, Any]]]:  # noqa: D102
        for doc_id, doc in super().doc_iterator(**kwargs):
            yield doc_id, self._docs.get(doc_id, doc)

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        """One placeholder request (never sent to the model): the model was asked while building requests."""
        prompt = self.format_prompt(self.PLACEHOLDER_PROMPT)
        return [placeholder(self.OUTPUT_TYPE, doc, prompt, self.request_metadata(kwargs))]
