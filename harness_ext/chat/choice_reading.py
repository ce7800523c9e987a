"""Answer-choice log-probabilities read from the top log-probabilities of one chat completion.

A chat endpoint can return, for each generated token, the N most likely tokens with their
log-probabilities (OpenAI's ``logprobs: true, top_logprobs: N``). PairS's authors score an API
judge that way (``cambridgeltl/PairS``, ``pairs/openai_model.py``, ``extract_prob``): generate
greedily and read P(A) and P(B) at the first position (of all) whose top tokens hold an answer
letter. :func:`read_choices` does the same for any one-word choices: tokens match after stripping
whitespace (case kept); a choice's log-probability is the log of the summed probabilities of its
matching tokens; a choice absent from the top N gets probability 0 and is flagged ``missing``; a
reading whose highest log-probability is shared names no winner (``tied``, :func:`is_tied`). Bad
log-probabilities, or a token listed twice, raise :class:`ReadingError`; ``-inf`` and the floor are 0.

Answers are :class:`ChoiceAnswer` objects (lm-eval's ``(logprob, is_greedy)`` plus ``missing``,
``tied``, ``position``), so tasks count them whatever the backend. Full rule: docs/api-judges.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Name of the per-document count of choices absent from the top N (a sum over documents).
MISSING_METRIC = "n_choices_missing"
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
    """The checked top list of one position; a token string listed twice is a :class:`ReadingError`.

    A top list ranks distinct tokens, so a repeat is a broken reply: which of its values to keep
    would be a guess (even when they agree, the list is not what the endpoint documents).
    """
    listed = entry.get("top_logprobs") if isinstance(entry, Mapping) else None
    if not isinstance(listed, list):
        raise ReadingError(f"generated position {position} has no top_logprobs list: {entry!r:.80}")
    top: dict[str, float] = {}
    ranks: dict[str, int] = {}
    for rank, candidate in enumerate(listed):
        token, logprob = _logprob(candidate, position, rank)
        if token in top:
            raise ReadingError(
                f"generated position {position}: the token {token!r} is listed twice in top_logprobs "
                f"(entries {ranks[token]} and {rank}, log-probabilities {listed[ranks[token]].get('logprob')!r} "
                f"and {candidate.get('logprob')!r}); a top list names each token once"
            )
        top[token], ranks[token] = logprob, rank
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
        ReadingError: no position of ``content`` lists top log-probabilities (the endpoint
            ignored ``logprobs``), a listed log-probability is NaN, above 0 or not a number, or a
            position lists a token twice (named).
    """
    keys = _choice_keys(choices)
    positions = [_top(entry, index) for index, entry in enumerate(content)] if content else []
    listing = [n for n, top in enumerate(positions) if top]  # positions with a non-empty top list
    if not listing:
        raise ReadingError(
            "the chat completion carries no top log-probabilities at any of its "
            f"{len(positions)} generated position(s) (does the endpoint support `logprobs` and `top_logprobs`?)"
        )
    position = next((n for n, top in enumerate(positions) if _lists_a_choice(top, keys)), None)
    if position is None:  # no choice listed anywhere: a tie at the least value of the first listing position
        return _tie_at_least(positions[listing[0]], listing[0], keys)
    return _answers_at(positions[position], position, keys)


def _choice_keys(choices: Sequence[str]) -> list[str]:
    """The choices stripped of whitespace: distinct and non-blank, else ``ValueError``."""
    keys = [choice.strip() for choice in choices]
    if not keys or any(not key for key in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"choices must be distinct non-blank strings, got {list(choices)!r}")
    return keys


def _lists_a_choice(top: list[tuple[str, float]], keys: Sequence[str]) -> bool:
    """Whether a position's top list names a choice with a non-zero probability."""
    return any(token.strip() in keys and logprob > -math.inf for token, logprob in top)


def _tie_at_least(top: list[tuple[str, float]], position: int, keys: Sequence[str]) -> list[ChoiceAnswer]:
    """Every choice missing: each at the least listed value of ``position`` (a tie when several)."""
    listed = [logprob for _, logprob in top if logprob > -math.inf]
    if not listed:
        raise ReadingError(f"generated position {position} lists only tokens of probability 0")
    bound = min(listed)
    return [ChoiceAnswer(bound, False, missing=True, position=position, tied=len(keys) > 1) for _ in keys]


def _answers_at(top: list[tuple[str, float]], position: int, keys: Sequence[str]) -> list[ChoiceAnswer]:
    """Each choice's value at ``position`` (its listed tokens' log-sum-exp; missing: probability 0)."""
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
