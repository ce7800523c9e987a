"""Answer-choice log-probabilities read from the top log-probabilities of one chat completion.

A chat endpoint gives no log-likelihood of an arbitrary continuation, but it can return, for each
generated token, the N most likely tokens at that position with their log-probabilities
(OpenAI's ``logprobs: true, top_logprobs: N``). PairS's authors score an API judge that way
(``cambridgeltl/PairS``, ``pairs/openai_model.py``, ``OpenAIChatModel.extract_prob``): generate
greedily, walk the generated positions, and read P(A) and P(B) at the first position whose top
tokens hold an answer letter. :func:`read_choices` does the same for any set of one-word choices
(answer letters, True/False).

Matching rule (documented in the README, "Judges behind an API"):

* a returned token matches a choice when the two are equal after stripping surrounding whitespace
  (so ``"A"``, ``" A"`` and ``"A\\n"`` all match choice ``A`` or ``" A"``); case is kept, as in the
  authors' code (``"a"`` is not ``"A"``, ``"true"`` is not ``"True"``);
* the position read is the first generated position where at least one choice matches a top token
  (position 0 is a first-token reading; ``max_tokens=1`` allows no other);
* a choice's log-probability there is the log of the summed probabilities of all its matching top
  tokens (``" A"`` and ``"A"`` are different tokens for the same answer; the authors keep the first
  one found, which is the larger);
* a choice absent from the top N at that position gets the log-probability of the N-th (least
  likely listed) token there: an upper bound on its true value, since an unlisted token is at most
  as likely as every listed one. It is flagged ``missing`` and counted (the model's log and the
  tasks' ``n_choices_missing`` metric); the authors give it probability 0;
* when no generated position lists any choice, every choice is missing and read at position 0 with
  that bound (a tie); the authors return P = 0.5 in that case;
* ``is_greedy``: the choice matches the most likely token at the position read.

Answers are :class:`ChoiceAnswer` objects: lm-eval's ``(logprob, is_greedy)`` pair that also
carries ``missing`` and ``position``, so a task can count missing choices from the responses it
receives (:func:`count_missing`) without knowing which backend produced them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Name of the per-document count of choices absent from the top N (a sum over documents).
MISSING_METRIC = "n_choices_missing"
#: lc-chat's default ``max_tokens``: generated positions searched for a choice (the cost plan's bound too).
DEFAULT_MAX_TOKENS = 8


def is_single_choice(continuation: str) -> bool:
    """Whether a log-likelihood continuation is one answer choice lc-chat can read: one word once stripped."""
    return len(str(continuation).split()) == 1


class ChoiceAnswer(tuple):  # type: ignore[type-arg]
    """lm-eval's ``(logprob, is_greedy)`` answer, with how it was read from the top log-probabilities.

    Attributes:
        missing: The choice was not among the top N tokens; ``logprob`` is the documented bound.
        position: The generated position read (0 = first token).
    """

    missing: bool
    position: int

    def __new__(cls, logprob: float, is_greedy: bool, *, missing: bool, position: int) -> ChoiceAnswer:
        answer = super().__new__(cls, (float(logprob), bool(is_greedy)))
        answer.missing = bool(missing)
        answer.position = int(position)
        return answer

    def __getnewargs_ex__(self) -> tuple[tuple[float, bool], dict[str, Any]]:
        # pickling (lm-eval's --use_cache stores answers with pickle) keeps the reading's details
        return (self[0], self[1]), {"missing": self.missing, "position": self.position}


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def read_choices(content: Sequence[Mapping[str, Any]], choices: Sequence[str]) -> list[ChoiceAnswer]:
    """Read each choice's log-probability from a chat completion's per-token top log-probabilities.

    Args:
        content: ``choices[0].logprobs.content`` of an OpenAI-style chat completion: one entry per
            generated token, each with ``top_logprobs``, a list of ``{token, logprob}``.
        choices: The answer choices (e.g. ``[" A", " B"]``); matched after stripping whitespace.

    Returns:
        One :class:`ChoiceAnswer` per choice, in order (see the module docstring for the rule).

    Raises:
        ValueError: ``choices`` is empty or has a blank or repeated choice, or ``content`` holds no
            position with top log-probabilities (the endpoint ignored ``logprobs``).
    """
    keys = [choice.strip() for choice in choices]
    if not keys or any(not key for key in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"choices must be distinct non-blank strings, got {list(choices)!r}")
    positions = [list(entry.get("top_logprobs") or []) for entry in content]
    if not positions or not positions[0]:
        raise ValueError(
            "the chat completion carries no top log-probabilities (does the endpoint support "
            "`logprobs` and `top_logprobs`?)"
        )
    position = 0
    for index, top in enumerate(positions):
        if any(str(candidate.get("token", "")).strip() in keys for candidate in top):
            position = index
            break
    top = [(str(c.get("token", "")), float(c["logprob"])) for c in positions[position]]
    bound = min(logprob for _, logprob in top)
    best_token = max(top, key=lambda pair: pair[1])[0].strip()
    answers = []
    for key in keys:
        matched = [logprob for token, logprob in top if token.strip() == key]
        answers.append(
            ChoiceAnswer(
                _logsumexp(matched) if matched else bound,
                bool(matched) and best_token == key,
                missing=not matched,
                position=position,
            )
        )
    return answers


def count_missing(responses: Sequence[Any]) -> int | None:
    """How many of ``responses`` are choices read as missing from the top N.

    ``None`` when no response is a :class:`ChoiceAnswer` (a backend with true log-likelihoods):
    the count does not apply there, and is not reported as 0.
    """
    answers = [r for r in responses if isinstance(r, ChoiceAnswer)]
    if not answers:
        return None
    return sum(1 for r in answers if r.missing)
