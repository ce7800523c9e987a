"""Where a base task keeps its options and its answer, and its prompt re-rendered for a variant.

A lettered multiple-choice task (lm-eval's ``mmlu_*``: ``doc_to_choice: [A, B, C, D]``, the options in
the prompt text) keeps its options in one document field (MMLU's ``choices``) and the gold's index in
another (``answer``). :func:`detect_fields` finds them on the base's documents: the options field is
the list of strings, as long as the base's choices, whose every string the prompt shows; the answer
field is the integer field equal to the base's target (``answer``, ``label`` or ``gold`` first). A
variant's prompt is the base's prompt with the question's rendered text replaced by the text the base
renders for the permuted document (:func:`variant_context`), so the description and the few-shot
examples stay the base's, byte for byte (and the prefix the variants share stays shared).

A cloze task (``arc_easy``, ``hellaswag``: each option is itself the scored continuation) is
order-free: its options are not in the prompt, so there is nothing to permute, and it is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NEGATION",
    "Fields",
    "asks_for_exception",
    "detect_fields",
    "permuted_doc",
    "relabel_text",
    "replace_question",
    "variant_context",
]

#: The negation appended to a question's text: the model picks the incorrect option. Provenance: the suite's
#: own wording (issue 55's "Which option is incorrect?").
NEGATION = "Which option is incorrect?"
#: A question that already asks for an exception (skipped under negation, counted).
_EXCEPTION = re.compile(r"\b(not|except|incorrect|false|untrue|least|neither|never)\b|n't\b", re.IGNORECASE)
#: The fields a cloze question gets under ``invariance_mode: mcf`` (its options and the gold's index).
MCF_OPTIONS, MCF_GOLD = "invariance_options", "invariance_gold"
#: Answer-field names tried first, in this order.
_ANSWER_NAMES = ("answer", "label", "gold", "target", "answerKey")


@dataclass(frozen=True)
class Fields:
    """The base task's options field, answer field, number of options and displayed labels."""

    options: str
    answer: str
    n_options: int
    labels: tuple[str, ...]
    #: The field holding the question's text (``None``: not found; negation then refuses).
    question: str | None = None


class FieldsError(ValueError):
    """The base task's documents cannot be posed under option variants (names the task and the reason)."""


def _options_fields(doc: Mapping[str, Any], k: int, text: str) -> list[str]:
    return [
        key
        for key, value in doc.items()
        if isinstance(value, list) and len(value) == k and all(isinstance(item, str) for item in value)
        and all(item.strip() in text for item in value)
    ]  # fmt: skip


def _is_index(value: Any) -> bool:
    """Whether ``value`` can be an option's index: an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def _answer_field(doc: Mapping[str, Any], target: Any) -> str | None:
    """The integer field equal to ``target`` (a name of :data:`_ANSWER_NAMES` first, in its order), if any."""
    matching = [key for key, value in doc.items() if _is_index(value) and value == target]
    candidates = [key for key in _ANSWER_NAMES if key in matching] or matching
    return candidates[0] if candidates else None


def detect_fields(task: Any, docs: Sequence[Mapping[str, Any]], *, mode: str) -> Fields:
    """The options and answer fields of the base task ``task`` (detected on its first document).

    Raises:
        FieldsError: A cloze task (options scored as continuations: refused, naming ``mode: mcf``), or
            no options field or answer field found.
    """
    name = task.config.task
    if len(docs) == 0:
        raise FieldsError(f"task {name!r}: the base task has no documents")
    doc = docs[0]
    choices, text, target = _first_prompt(task, doc, name)
    if mode == "mcf":
        return Fields(MCF_OPTIONS, MCF_GOLD, len(choices), tuple(map(str, choices)), None)
    options = _lettered_options(doc, choices, text, name)
    answer = _answer_field(doc, target)
    if answer is None:
        raise FieldsError(f"task {name!r}: no integer field equals the base's target {target!r} (the answer's index)")
    question = _question_field(doc, text, exclude=options)
    return Fields(options, answer, len(choices), tuple(map(str, choices)), question)


def _first_prompt(task: Any, doc: Mapping[str, Any], name: str) -> tuple[list[Any], str, Any]:
    """The base's choices, prompt text and target for ``doc``.

    Raises:
        FieldsError: The prompt is not one string or the choices not one list (multiple inputs; names ``name``).
    """
    choices, text, target = task.doc_to_choice(doc), task.doc_to_text(doc), task.doc_to_target(doc)
    if not isinstance(text, str) or not isinstance(choices, list):
        raise FieldsError(f"task {name!r}: the base's doc_to_text is not one prompt per question (multiple inputs)")
    return choices, text, target


def _lettered_options(doc: Mapping[str, Any], choices: list[Any], text: str, name: str) -> str:
    """The field holding the options the prompt ``text`` shows (the first such field).

    Raises:
        FieldsError: A cloze task (a field equals the base's multi-character choices, or no field's options
            are in the prompt): order-free, refused naming ``invariance_mode: mcf``.
    """
    cloze = [key for key, value in doc.items() if value == choices and not all(len(c) <= 2 for c in choices)]
    options = _options_fields(doc, len(choices), text)
    if cloze or not options:
        where = (
            f"field {cloze[0]!r} is scored as the continuations" if cloze else "no field's options are in the prompt"
        )
        raise FieldsError(
            f"task {name!r}: a cloze task ({where}) is order-free: permuting its options changes nothing; "
            "re-pose it with lettered options (invariance_mode: mcf)"
        )
    return options[0]


def _question_field(doc: Mapping[str, Any], text: str, *, exclude: str) -> str | None:
    """The string field whose text the prompt shows (``question`` first), if any."""
    shown = [k for k, v in doc.items() if k != exclude and isinstance(v, str) and v.strip() and v.strip() in text]
    return "question" if "question" in shown else (shown[0] if shown else None)


def asks_for_exception(question: str) -> bool:
    """Whether a question already asks for an exception ("Which is NOT ...", "all EXCEPT"): not negated again."""
    return bool(_EXCEPTION.search(question))


def permuted_doc(
    doc: Mapping[str, Any], order: Sequence[int], fields: Fields, *, negated: bool = False
) -> dict[str, Any]:
    """``doc`` with its options shown in ``order`` (``order[p]`` = the original index at position p);
    ``negated``: its question followed by :data:`NEGATION` on a line of its own.

    Raises:
        FieldsError: ``negated`` and no question field was found.
    """
    options = doc[fields.options]
    shown = {
        **doc,
        fields.options: [options[i] for i in order],
        fields.answer: list(order).index(int(doc[fields.answer])),
    }
    if negated:
        if fields.question is None:
            raise FieldsError("negation: no field of the document holds the question's text shown in the prompt")
        shown[fields.question] = f"{str(doc[fields.question]).rstrip()}\n{NEGATION}"
    return shown


def replace_question(context: Any, text: str, new: str, *, where: str) -> Any:
    """``context`` (the base's prompt: a string, or a chat template's JSON string) with its last
    occurrence of ``text`` replaced by ``new``.

    Raises:
        FieldsError: ``text`` is not in the context (names ``where``).
    """
    if isinstance(context, str):
        for old, replacement in ((text, new), (json.dumps(text)[1:-1], json.dumps(new)[1:-1])):
            at = context.rfind(old)
            if at >= 0:
                return context[:at] + replacement + context[at + len(old) :]
    raise FieldsError(f"{where}: the question's text is not in the base's prompt; its variants cannot be rendered")


def variant_context(task: Any, context: Any, doc: Mapping[str, Any], shown: Mapping[str, Any]) -> Any:
    """The base's prompt ``context`` for ``doc``, with the question posed as in ``shown``."""
    return replace_question(context, task.doc_to_text(doc), task.doc_to_text(shown), where=f"task {task.config.task!r}")


def relabel_text(text: str, options: Sequence[str], old: Sequence[str], new: Sequence[str], *, where: str) -> str:
    """``text`` with the label ``old[p]`` shown just before option p replaced by ``new[p]`` ("A. x" -> "1. x").

    Raises:
        FieldsError: An option's label is not found right before it (names ``where`` and the option).
    """
    spans, start = [], 0
    for p, option in enumerate(options):
        at = text.find(option.strip(), start)
        found = re.search(rf"(?:^|[\s(\[]){re.escape(old[p])}([.):\]]\s*)$", text[:at]) if at >= 0 else None
        if found is None:
            raise FieldsError(f"{where}: label {old[p]!r} not found before option {p} in the prompt (transform ids)")
        spans.append((found.end() - len(found.group(1)) - len(old[p]), len(old[p]), new[p]))
        start = at + len(option.strip())
    for at, length, label in reversed(spans):
        text = text[:at] + label + text[at + length :]
    return text
