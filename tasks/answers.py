"""Read a judge's answer to a two-option question: a generated choice among lettered options ("A" or
"B") parsed out of free text, never guessed, or P(first option) from the two options' log-likelihoods.

Shared by every family that asks the model to pick a lettered option (the pairwise judge, the GV
validators' A/B questions), so no family imports another's parser.

Chat and API models answer in prose ("Sure! Summary B is more coherent. Answer: B"). The parser
accepts the unambiguous forms and returns ``None`` for everything else, so the caller counts the
answer as unparseable instead of inventing one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scipy.special import expit

_NOUNS = r"(?:summary|passage|document|event|option|choice|answer|candidate|item)"


def _letters(choices: Sequence[str]) -> str:
    return "|".join(re.escape(c) for c in choices)


def parse_choice(text: str, choices: Sequence[str] = ("A", "B")) -> str | None:
    """Return the option a free-text answer picks, or ``None`` when it is not unambiguous.

    Accepted, in order of precedence:

    1. an explicit final answer: the last ``Answer: B`` / ``answer is (B)`` / ``Final answer: **B**``
       (an answer marker followed by one option, optionally named: ``Answer: Summary B``);
    2. a reply that is only the option, possibly decorated: ``B``, ``(B)``, ``B.``, ``**B**``,
       ``Summary B``, ``Option B.``;
    3. a reply that starts with the option followed by punctuation or a line break:
       ``B) because ...``, ``B.\\nThe second ...``, ``B: ...``.

    Anything else (both options named without a marker, no option, a bare article "A ...") is
    ``None``.

    Args:
        text: The model's generated answer.
        choices: The option labels, case-sensitive (default ``("A", "B")``).

    Returns:
        One of ``choices`` or ``None``.
    """
    if not isinstance(text, str):
        return None
    letters = _letters(choices)
    option = rf"\(?\**\s*(?:(?i:{_NOUNS})\s+)?\(?({letters})\)?\**"
    marker = re.compile(
        rf"(?i:final\s+answer|answer|verdict|choice)\s*(?i:is|would\s+be|:|-|=)?\s*[:\-]?\s*{option}(?![\w])"
    )
    found = marker.findall(text)
    if found:
        return found[-1]

    stripped = text.strip().strip("*_`\"' ")
    only = re.fullmatch(rf"\(?(?i:{_NOUNS}\s+)?\(?({letters})\)?[.!]?", stripped)
    if only:
        return only.group(1)

    leading = re.match(rf"\(?({letters})(?:\)|\.|:|,|\n|\s*-\s)", stripped)
    if leading:
        return leading.group(1)
    return None


#: Two options whose log-likelihoods differ by less than this are a tie (P(A) = 0.5 exactly). Endpoints
#: report float32 log-probabilities, often rounded further, so a smaller gap is rounding, never a
#: preference (log(0.5) + 1e-12 against log(0.5) would otherwise be published as "always the first item").
TIE_TOLERANCE = 1e-6


def first_option_probability(logprob_a: float, logprob_b: float) -> float:
    """P(A) among the two options: the two-way softmax ``1 / (1 + exp(lb - la))`` of their log-likelihoods.

    Computed as ``expit(la - lb)``, which neither overflows for a gap past ~709 nor loses a tiny
    probability: log-likelihoods closer than :data:`TIE_TOLERANCE` give exactly 0.5 (a tie, which the
    metrics leave out and count as ``n_ties``), ``la = -inf`` gives 0, and two ``-inf`` give NaN (no
    judgement, left out like a missing one).
    """
    gap = float(logprob_a) - float(logprob_b)
    if abs(gap) < TIE_TOLERANCE:  # NaN (two -inf) compares False: stays NaN
        return 0.5
    return float(expit(gap))
