"""``invariance_mode: mcf``: a cloze task re-posed with lettered options (multiple-choice formulation).

A cloze task (``arc_easy``, ``hellaswag``) scores each option as the continuation of its prompt, so the
order of its options means nothing. Under ``mcf`` each question is posed in the format of lm-eval's
MMLU prompt (as OLMES's MCF does): the base's prompt text less a final "Answer:" line, then one
``A. <option>`` line per option and ``Answer:``, scored by each letter's log-likelihood after the base's
``target_delimiter``; few-shot examples are posed the same way, answered by their letter. The options
(the base's ``doc_to_choice``) and the gold (``doc_to_target``, an index) are copied into two fields
of each document (``fields.MCF_OPTIONS``, ``fields.MCF_GOLD``), which the transforms permute as MMLU's.
The original-order accuracy is then the lettered accuracy, not the base's cloze ``acc``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .fields import MCF_GOLD, MCF_OPTIONS, FieldsError

__all__ = ["LETTERS", "mcf_columns", "mcf_text"]

LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: The base's own answer cue on the prompt's last line ("Answer:", "A:"), moved after the options.
_ANSWER_CUE = re.compile(r"\n\s*(answer|a)\s*:\s*$", re.IGNORECASE)


def mcf_text(text: str, options: Sequence[str]) -> str:
    """The base's prompt ``text`` followed by the lettered ``options`` and ``Answer:``."""
    if len(options) > len(LETTERS):
        raise FieldsError(f"invariance_mode mcf: {len(options)} options, more than {len(LETTERS)} letters")
    lines = [f"{LETTERS[i]}. {str(option).strip()}" for i, option in enumerate(options)]
    return "\n".join([_ANSWER_CUE.sub("", text.rstrip()), *lines, "Answer:"])


def mcf_columns(options: Sequence[Any], target: Any, *, task: str) -> dict[str, Any]:
    """The two fields of one document: its options (strings) and the gold's index.

    Raises:
        FieldsError: The base's target is not an index into its options (names the task).
    """
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < len(options):
        raise FieldsError(
            f"task {task!r}: invariance_mode mcf needs the base's target as an option index, got {target!r}"
        )
    return {MCF_OPTIONS: [str(option) for option in options], MCF_GOLD: target}
