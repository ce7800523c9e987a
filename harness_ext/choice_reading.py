"""Answer-choice log-probabilities read from the top log-probabilities of one chat completion.

A chat endpoint gives no log-likelihood of an arbitrary continuation, but it can return, for each
generated token, the N most likely tokens at that position with their log-probabilities
(OpenAI's ``logprobs: true, top_logprobs: N``). PairS's authors score an API judge that way
(``cambridgeltl/PairS``, ``pairs/openai_model.py``, ``OpenAIChatModel.extract_prob``): generate
greedily, walk the generated positions, and read P(A) and P(B) at the first position whose top
tokens hold an answer letter. :func:`read_choices` does the same for any set of one-word choices
(answer letters, True/False).

Every listed log-probability is checked first: NaN, +inf or a value above 0 (P > 1), or listed
probabilities summing above 1, raise :class:`ReadingError` naming the position (the backend adds
the endpoint). ``-inf`` and OpenAI's floor (-9999, :data:`OPENAI_FLOOR`, or below) are probability
0, as ``exp`` makes them in the authors' code. A token string listed twice at one position is
counted once (its first entry).

Matching rule (documented in the README, "Judges behind an API"):

* a returned token matches a choice when the two are equal after stripping surrounding whitespace
  (so ``"A"``, ``" A"`` and ``"A\\n"`` all match choice ``A`` or ``" A"``); case is kept, as in the
  authors' code (``"a"`` is not ``"A"``, ``"true"`` is not ``"True"``);
* the position read is the first generated position where at least one choice matches a top token
  with a probability above 0 (position 0 is a first-token reading; ``max_tokens=1`` allows no other);
* a choice's log-probability there is the log of the summed probabilities of all its matching top
  tokens (``" A"`` and ``"A"`` are different tokens for the same answer; the authors keep the first
  one found, which is the larger);
* a choice absent from the top N at that position (or listed with probability 0) gets probability 0
  (``-inf``), as the authors give it: it ranks below every listed choice. It is flagged ``missing``
  and counted (the model's log and the tasks' ``n_choices_missing`` metric);
* when no generated position lists any choice, every choice is missing; all get the same finite
  value, the N-th (least) listed log-probability at position 0 (an upper bound of each), so the
  reading is a tie; the authors return P = 0.5 for each in that case;
* ``tied`` (set on every answer of the reading): the highest log-probability is shared by two or
  more choices (including the case above), so the reading names no winner. A tie is counted and
  never scored as a preference for either choice; :func:`is_tied` tells the same of any backend's
  answers (equal highest log-likelihoods);
* ``is_greedy``: the choice matches the most likely token at the position read.

Differences from the authors' code, stated: they also stop at a position listing ``"C"`` (their
prompts' third option, which then takes the probability mass; the suite's prompts have none, so
only the task's own choices stop the walk), and they read the first of several matching tokens
where this sums them.

Answers are :class:`ChoiceAnswer` objects: lm-eval's ``(logprob, is_greedy)`` pair that also
carries ``missing``, ``tied`` and ``position``, so a task can count missing choices and ties from
the responses it receives (:func:`count_missing`, :func:`is_tied`) without knowing which backend
produced them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Name of the per-document count of choices absent from the top N (a sum over documents).
MISSING_METRIC = "n_choices_missing"
#: lc-chat's default ``max_tokens``: generated positions searched for a choice (the cost plan's bound too).
DEFAULT_MAX_TOKENS = 8
#: OpenAI reports a token whose probability underflows as -9999: at or below this, probability 0.
OPENAI_FLOOR = -9999.0
#: Rounding allowed above log-probability 0, and above a summed probability of 1 (servers round
#: the log-probabilities they return; a larger excess is a broken reply, not rounding).
LOGPROB_TOLERANCE = 1e-4
MASS_TOLERANCE = 1e-2


class ReadingError(ValueError):
    """A chat completion's top log-probabilities cannot be read (the message names the position)."""


def is_single_choice(continuation: str) -> bool:
    """Whether a log-likelihood continuation is one answer choice lc-chat can read: one word once stripped."""
    return len(str(continuation).split()) == 1


class ChoiceAnswer(tuple):  # type: ignore[type-arg]
    """lm-eval's ``(logprob, is_greedy)`` answer, with how it was read from the top log-probabilities.

    Attributes:
        missing: The choice was not among the top N tokens with a probability above 0.
        position: The generated position read (0 = first token).
        tied: The reading's highest log-probability is shared by two or more choices (a tie).
    """

    missing: bool
    position: int
    tied: bool

    def __new__(
        cls, logprob: float, is_greedy: bool, *, missing: bool, position: int, tied: bool = False
    ) -> ChoiceAnswer:
        answer = super().__new__(cls, (float(logprob), bool(is_greedy)))
        answer.missing = bool(missing)
        answer.position = int(position)
        answer.tied = bool(tied)
        return answer

    def __getnewargs_ex__(self) -> tuple[tuple[float, bool], dict[str, Any]]:
        # pickling (lm-eval's --use_cache stores answers with pickle) keeps the reading's details
        return (self[0], self[1]), {"missing": self.missing, "position": self.position, "tied": self.tied}


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def _logprob(candidate: Any, position: int, rank: int) -> tuple[str, float]:
    """One checked ``(token, logprob)`` of a top list; probability 0 is ``-inf``."""
    where = f"generated position {position}, top_logprobs entry {rank}"
    if not isinstance(candidate, Mapping) or not isinstance(candidate.get("token"), str):
        raise ReadingError(f"{where} is not a {{token, logprob}} object: {candidate!r:.80}")
    value = candidate.get("logprob")
    try:
        logprob = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ReadingError(f"{where} ({candidate['token']!r}) has logprob {value!r}, not a number") from None
    if math.isnan(logprob) or logprob > LOGPROB_TOLERANCE:
        raise ReadingError(
            f"{where} ({candidate['token']!r}) has logprob {logprob}: a log-probability is at most 0 and never NaN"
        )
    return candidate["token"], (-math.inf if logprob <= OPENAI_FLOOR else min(logprob, 0.0))


def _top(entry: Any, position: int) -> list[tuple[str, float]]:
    """The checked top list of one position, each token string once (its first entry)."""
    listed = entry.get("top_logprobs") if isinstance(entry, Mapping) else None
    if not isinstance(listed, list):
        raise ReadingError(f"generated position {position} has no top_logprobs list: {entry!r:.80}")
    top: dict[str, float] = {}
    for rank, candidate in enumerate(listed):
        token, logprob = _logprob(candidate, position, rank)
        top.setdefault(token, logprob)
    mass = sum(math.exp(logprob) for logprob in top.values())
    if mass > 1 + MASS_TOLERANCE:
        raise ReadingError(f"generated position {position}: the listed probabilities sum to {mass:.6g} > 1")
    return list(top.items())


def read_choices(content: Sequence[Mapping[str, Any]], choices: Sequence[str]) -> list[ChoiceAnswer]:
    """Read each choice's log-probability from a chat completion's per-token top log-probabilities.

    Args:
        content: ``choices[0].logprobs.content`` of an OpenAI-style chat completion: one entry per
            generated token, each with ``top_logprobs``, a list of ``{token, logprob}``.
        choices: The answer choices (e.g. ``[" A", " B"]``); matched after stripping whitespace.

    Returns:
        One :class:`ChoiceAnswer` per choice, in order (see the module docstring for the rule).

    Raises:
        ValueError: ``choices`` is empty or has a blank or repeated choice.
        ReadingError: ``content`` holds no position with top log-probabilities (the endpoint
            ignored ``logprobs``), or a listed log-probability is NaN, above 0 or not a number.
    """
    keys = [choice.strip() for choice in choices]
    if not keys or any(not key for key in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"choices must be distinct non-blank strings, got {list(choices)!r}")
    positions = [_top(entry, index) for index, entry in enumerate(content)] if content else []
    if not positions or not positions[0]:
        raise ReadingError(
            "the chat completion carries no top log-probabilities (does the endpoint support "
            "`logprobs` and `top_logprobs`?)"
        )
    position = next(
        (n for n, top in enumerate(positions) if any(t.strip() in keys and lp > -math.inf for t, lp in top)), None
    )
    if position is None:  # no choice listed anywhere: a tie at the least listed value (module doc)
        listed = [logprob for _, logprob in positions[0] if logprob > -math.inf]
        if not listed:
            raise ReadingError("generated position 0 lists only tokens of probability 0")
        bound = min(listed)
        return [ChoiceAnswer(bound, False, missing=True, position=0, tied=len(keys) > 1) for _ in keys]
    top = positions[position]
    best_token = max(top, key=lambda pair: pair[1])[0].strip()
    values = [_logsumexp([lp for token, lp in top if token.strip() == key] or [-math.inf]) for key in keys]
    tied = values.count(max(values)) > 1
    return [
        ChoiceAnswer(
            value,
            value > -math.inf and best_token == key,
            missing=value == -math.inf,
            position=position,
            tied=tied,
        )
        for key, value in zip(keys, values, strict=True)
    ]


def is_tied(responses: Sequence[Any]) -> bool:
    """Whether the answers of one judgement (its choices' ``(logprob, is_greedy)``) name no winner.

    True when the highest log-probability is shared by two or more responses (any backend), or
    when a :class:`ChoiceAnswer` is flagged ``tied``. A tie is counted, never scored as a preference.
    """
    if any(isinstance(r, ChoiceAnswer) and r.tied for r in responses):
        return True
    values = [float(r[0]) for r in responses]
    return bool(values) and values.count(max(values)) > 1


def count_missing(responses: Sequence[Any]) -> int | None:
    """How many of ``responses`` are choices read as missing from the top N.

    ``None`` when no response is a :class:`ChoiceAnswer` (a backend with true log-likelihoods):
    the count does not apply there, and is not reported as 0.
    """
    answers = [r for r in responses if isinstance(r, ChoiceAnswer)]
    if not answers:
        return None
    return sum(1 for r in answers if r.missing)
