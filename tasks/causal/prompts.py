"""Prompts of the causal epistemic consistency tasks (Cui et al., "Nuance Matters", Appendix B.2).

:data:`GENERATION_TEMPLATE` is Figure 7 verbatim except two template typos its own rendered example
does not have (a wrong closing quote after ``{effect}``, an unsubstituted "argument_types"): fixed,
the figure's inputs reproduce its example prompt character for character. :data:`RANKING_TEMPLATE`
is Figure 8's template verbatim (its example's two wording differences are not used), the
arguments starting on a new line as in the example. :func:`ctp_request` is section 5.1's
conditional-token-probability request, the conjunction placed as in Table 2. Fields are inserted
as δ-CAUSAL has them, the effect with its time interval, as in the figures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from logic_consistency.options import check_option

__all__ = [
    "ARGUMENT_TYPES",
    "CONJUNCTIONS",
    "GENERATION_PROMPTS",
    "GENERATION_TEMPLATE",
    "RANKING_TEMPLATE",
    "combine_events",
    "ctp_request",
    "effect_text",
    "generation_prompt",
    "ranking_prompt",
]

# Provenance: Cui et al. Figure 7 (generation prompt), verbatim up to the two template typos named in
# the module docstring.
GENERATION_TEMPLATE = (
    "Generate two {argument_type}s for the cause-effect relationship in which ‘{cause}’ leads to ‘{effect}’, "
    "without explanations, additional commentary, index or quotation marks. The two generated "
    "{argument_type}s vary in strength. More specifically, the first generated {argument_type} should be "
    "{strength} than the original {argument_type}, while the second generated {argument_type} should be "
    "{strength} than the first {argument_type}. Please ensure that the generated {argument_type}s are around "
    "{words} words in length. In addition, the generated {strength} {argument_type}s should have similar style "
    "to the original {argument_type}. The original {argument_type} is: ‘{original_argument}’. Make sure that "
    "there are no explanations or additional commentary for the output and that the generated arguments are "
    "separated by a new line character."
)

# Provenance: Cui et al. Figure 8 (ranking prompt), verbatim (see the module docstring).
RANKING_TEMPLATE = (
    "Given a defeasible cause-effect pair and ten arguments with varying strength, please give a ranking of the "
    "arguments based on whether they strengthen or weaken the argumentative strength of the cause-effect pair. "
    "Note that the ten arguments consist of five supporting arguments and five defeating arguments. The ranking "
    "should be in the order from the argument that weakens the argumentative strength of the pair the most to "
    "the argument that strengthens the argumentative strength the most. In addition, please ensure that the "
    "result only contains indices referring to each argument, separated by a single space and without any "
    "additional explanation or comments. The cause is ‘{cause}’ and the effect is ‘{effect}’. The ten "
    "arguments are:\n{arguments}"
)

ARGUMENT_TYPES: tuple[str, ...] = ("defeater", "supporter")

#: The four generation prompts of one document, by name: (argument type, strength), in the order
#: of the paper's Appendix B.2 list.
GENERATION_PROMPTS: Mapping[str, tuple[str, str]] = {
    "weaker_defeaters": ("defeater", "weaker"),
    "stronger_defeaters": ("defeater", "stronger"),
    "weaker_supporters": ("supporter", "weaker"),
    "stronger_supporters": ("supporter", "stronger"),
}

# Provenance: Table 2 (Appendix A), verbatim usages; "For" is left out (see below).
#: Conjunction -> (prefix, joint) of Table 2: context = prefix + cause-and-intermediate + joint.
#: Coordinating: "{cause}, so {effect}"; subordinating: "Because {cause}, {effect}"; conjunctive
#: adverbs: "{cause}; therefore, {effect}". ("For" puts the effect first, which an autoregressive
#: model cannot condition on, so the paper leaves it out.)
CONJUNCTIONS: Mapping[str, tuple[str, str]] = {
    "so": ("", ", so"),
    "because": ("Because ", ","),
    "since": ("Since ", ","),
    "as": ("As ", ","),
    "therefore": ("", "; therefore,"),
    "thus": ("", "; thus,"),
    "hence": ("", "; hence,"),
}

# Sentence-initial words that are lower-cased when a sentence is embedded after a conjunction.
# Other capitalised words (names such as "John", "China", acronyms) are left alone.
_LOWERCASE_STARTS = frozenset(
    """a an the this that these those there it its he she they we you his her their our my your
    one some many most all every each everyone everybody someone somebody people no none several
    both few more less another other such after before when while if once""".split()
)


def effect_text(doc: Mapping[str, Any]) -> str:
    """The effect as the figures show it: time interval, then the effect ("Months later, He ...")."""
    interval = str(doc.get("effect_interval") or "").strip()
    return f"{interval} {doc['effect']}" if interval else str(doc["effect"])


def generation_prompt(doc: Mapping[str, Any], argument_type: str, strength: str) -> str:
    """The Figure 7 prompt for one (argument type, strength) of one document.

    Args:
        doc: δ-CAUSAL document (``cause``, ``effect_interval``, ``effect``, ``defeater``,
            ``supporter``).
        argument_type: ``"defeater"`` or ``"supporter"``; the original argument is the document's
            field of that name, and ``{words}`` is its number of words.
        strength: ``"weaker"`` or ``"stronger"``.
    """
    if argument_type not in ARGUMENT_TYPES:
        raise ValueError(f"argument_type must be one of {ARGUMENT_TYPES}, got {argument_type!r}")
    if strength not in ("weaker", "stronger"):
        raise ValueError(f"strength must be 'weaker' or 'stronger', got {strength!r}")
    original = str(doc[argument_type])
    return GENERATION_TEMPLATE.format(
        argument_type=argument_type,
        cause=doc["cause"],
        effect=effect_text(doc),
        strength=strength,
        words=len(original.split()),
        original_argument=original,
    )


def ranking_prompt(doc: Mapping[str, Any], arguments: Sequence[str]) -> str:
    """The Figure 8 prompt with ``arguments`` shown as 1. ... 10. in the given order."""
    listed = "\n".join(f"{number}. {text}" for number, text in enumerate(arguments, start=1))
    return RANKING_TEMPLATE.format(cause=doc["cause"], effect=effect_text(doc), arguments=listed)


def _strip_end(text: str) -> str:
    return text.strip().rstrip(".!;:, ").strip()


def _decapitalize(text: str) -> str:
    """Lower-case the first word when it is a common sentence opener ("The" -> "the", not "John")."""
    match = re.match(r"[A-Za-z]+", text)
    if match is None:
        return text
    word = match.group(0)
    # "THE" (shouting, acronyms) stays; "The" and "A" become "the" and "a".
    if word.lower() in _LOWERCASE_STARTS and (len(word) == 1 or word[1:].islower()):
        return text[0].lower() + text[1:]
    return text


def combine_events(cause: str, intermediate: str) -> str:
    """C ⊕ I of section 5.1: the cause and the intermediate joined into one clause with "and"."""
    return f"{_strip_end(cause)} and {_decapitalize(_strip_end(intermediate))}"


def ctp_request(doc: Mapping[str, Any], intermediate: str, conjunction: str) -> dict[str, str]:
    """The log-likelihood request scoring the effect after cause ⊕ intermediate (paper eq. 9).

    The context is the Table 2 pattern up to the effect, e.g. ``"Because the family goes on a tour
    and the tour guide ditches them,"`` or ``"The family goes on a tour and ...; therefore,"``; the
    continuation is the effect sentence (without its time interval, which is the same for every
    intermediate), so its log-probability is log CS(E | C ⊕ I).

    Args:
        doc: δ-CAUSAL document.
        intermediate: One of the ten intermediates.
        conjunction: A key of :data:`CONJUNCTIONS`.

    Returns:
        ``{"context": ..., "continuation": ...}`` (lm-eval puts the target delimiter, a space,
        between them).
    """
    check_option("conjunction", conjunction)  # checked by its declaration (tasks/causal/_options_yaml)
    prefix, joint = CONJUNCTIONS[conjunction]
    clause = combine_events(str(doc["cause"]), intermediate)
    if prefix:
        clause = _decapitalize(clause)
    return {"context": f"{prefix}{clause}{joint}", "continuation": _decapitalize(str(doc["effect"]).strip())}
