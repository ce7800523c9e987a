"""``invariance_mode: mcf``: a cloze task re-posed with lettered options (multiple-choice formulation).

A cloze task (``arc_easy``, ``hellaswag``) scores each option as the continuation of its prompt, so the
order of its options means nothing. Under ``mcf`` each question is posed with lettered options in one
of two formats (``mcf_format``), scored by each letter's log-likelihood after ``target_delimiter``;
few-shot examples are posed the same way, answered by their letter. ``olmes`` (:func:`mcf_text`, as
OLMES's MCF and lm-eval's MMLU prompt): the base's prompt less a final "Answer:" line, one
``A. <option>`` line per option and ``Answer:``. ``pride`` (:func:`pride_text`, Zheng et al., ICLR 2024,
the authors' ``code/eval_clm_utils.py``): their instruction as the description (:data:`PRIDE_CONFIG`),
then ``Question: <question>``, ``Options:``, the ``A. <option>`` lines and ``Answer:``. The options (the
base's ``doc_to_choice``) and the gold (``doc_to_target``, an index) are copied into two fields of each
document (``fields.MCF_OPTIONS``, ``fields.MCF_GOLD``), which the transforms permute as MMLU's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .fields import MCF_GOLD, MCF_OPTIONS, Fields, FieldsError, detect_fields

__all__ = [
    "LETTERS",
    "PRIDE_CONFIG",
    "lettered_fields",
    "mcf_columns",
    "mcf_prompt",
    "mcf_text",
    "pride_question",
    "pride_text",
]

LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: The base's own answer cue on the prompt's last line ("Answer:", "A:"), moved after the options.
_ANSWER_CUE = re.compile(r"\n\s*(answer|a)\s*:\s*$", re.IGNORECASE)
#: A leading "Question:" label of the base's prompt (dropped: PriDe's format writes its own).
_QUESTION_LABEL = re.compile(r"^\s*question\s*:\s*", re.IGNORECASE)
#: PriDe's config keys under ``mcf_format: pride``. Provenance: chujiezheng/LLM-MCQ-Bias
#: ``code/eval_clm_utils.py`` (commit 2ae2f40), ``prepare_eval``: ``sys_msg`` is "The following are
#: multiple choice questions about {subject}." for MMLU (the subject's file name, "_" read as a space)
#: and "The following are multiple choice questions." otherwise, then " You should directly answer the
#: question by choosing the correct option."; the prompt is ``sys_msg + '\n\n'``, each few-shot example
#: and ``'\n\n'``, the question; a few-shot example ends in ``' ' + letter``. The subject here is the
#: document's ``subject`` field (MMLU's rows have it).
PRIDE_CONFIG: dict[str, str] = {
    "description": (
        "The following are multiple choice questions{% if subject is defined and subject is string and subject %}"
        " about {{ subject.replace('_', ' ') }}{% endif %}. You should directly answer the question by choosing"
        " the correct option.\n\n"
    ),
    "fewshot_delimiter": "\n\n",
    "target_delimiter": " ",
}


def _check_count(options: Sequence[Any]) -> None:
    if len(options) > len(LETTERS):
        raise FieldsError(f"invariance_mode mcf: {len(options)} options, more than {len(LETTERS)} letters")


def mcf_text(text: str, options: Sequence[str]) -> str:
    """The base's prompt ``text`` followed by the lettered ``options`` and ``Answer:`` (``mcf_format: olmes``)."""
    _check_count(options)
    lines = [f"{LETTERS[i]}. {str(option).strip()}" for i, option in enumerate(options)]
    return "\n".join([_ANSWER_CUE.sub("", text.rstrip()), *lines, "Answer:"])


def pride_text(question: str, options: Sequence[str]) -> str:
    """PriDe's prompt of one question (``mcf_format: pride``), as the authors' ``create_user_prompt``:
    ``Question: <question.strip()>\\nOptions:\\n`` + the lines ``f"{letter}. {option}".strip()`` + ``\\nAnswer:``."""
    _check_count(options)
    lines = [f"{LETTERS[i]}. {option}".strip() for i, option in enumerate(options)]
    return f"Question: {question.strip()}\nOptions:\n" + "\n".join(lines) + "\nAnswer:"


def pride_question(doc: Mapping[str, Any], text: str, field: str = "question") -> str:
    """The question of ``doc`` for PriDe's prompt: its ``field`` (``question``: MMLU, ARC), else the
    base's prompt ``text`` less its final answer cue and a leading "Question:" label."""
    question = doc.get(field)
    if isinstance(question, str) and question.strip():
        return question
    return _QUESTION_LABEL.sub("", _ANSWER_CUE.sub("", text.rstrip()))


def mcf_prompt(
    mcf_format: str, doc: Mapping[str, Any], text: str, options: Sequence[str], *, question: str = "question"
) -> str:
    """The lettered prompt of ``doc`` in ``mcf_format`` (``olmes`` or ``pride``) from the base's ``text``
    (``question``: the field holding the question's text, for ``pride``)."""
    if mcf_format == "pride":
        return pride_text(pride_question(doc, text, question), options)
    return mcf_text(text, options)


class _BaseView:
    """The base's own ``doc_to_text`` / ``doc_to_choice`` / ``doc_to_target`` of a wrapped task (lm-eval's
    ``ConfigurableTask`` methods, not the wrapper's lettered ones), for :func:`.fields.detect_fields`."""

    def __init__(self, task: Any, base: Any) -> None:
        self.config, self._task, self._base = task.config, task, base

    def doc_to_text(self, doc: Any) -> Any:
        return self._base.doc_to_text(self._task, doc)

    def doc_to_choice(self, doc: Any) -> Any:
        return self._base.doc_to_choice(self._task, doc)

    def doc_to_target(self, doc: Any) -> Any:
        return self._base.doc_to_target(self._task, doc)


def lettered_fields(task: Any, base: Any, docs: Any) -> Fields:
    """The options, answer and question fields of a base that already letters its options (lm-eval's
    ``mmlu_*``), re-posed in PriDe's format (``mcf_format: pride``); ``base`` is the class whose prompt
    methods are the base's (lm-eval's ``ConfigurableTask``).

    Raises:
        FieldsError: No options, answer or question field found (names the task).
    """
    fields = detect_fields(_BaseView(task, base), docs, mode="fields")
    if fields.question is None:
        raise FieldsError(
            f"task {task.config.task!r}: mcf_format pride needs the question's text in a field of the document; "
            "none holds text the base's prompt shows"
        )
    return fields


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
