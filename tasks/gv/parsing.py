"""Lenient, never-guessing parsers of generator and validator outputs.

Base models continue the prompt's pattern; chat models prepend "Sure, here are ...", wrap answers
in markdown, or restate the question. Every parser here accepts the forms whose meaning is
unambiguous and returns ``None`` (or raises :class:`Unparseable` with the reason) for everything
else, so that the task counts the output as unparseable instead of inventing an answer.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from fractions import Fraction

from logic_consistency.tasks.answers import parse_choice

__all__ = [
    "Unparseable",
    "clean_free_text",
    "format_number",
    "normalize_answer",
    "parse_ab",
    "parse_number",
    "parse_true_false",
    "parse_yes_no",
    "split_two_answers",
    "strip_labels",
]


class Unparseable(ValueError):
    """An output whose meaning is not unambiguous; the message says why."""


# ----------------------------------------------------------------------------- shared cleaning
_MARKUP = re.compile(r"[*_`#]+")
_QUOTES = "\"'“”‘’«»"
#: Words a chat reply opens with ("Sure", "Certainly", "Okay"), shared by the cleaners below.
_OPENERS = r"sure|certainly|of\s+course|okay|ok|absolutely"
#: "Here's", "Here is", "Here are": how a chat reply introduces its answer.
_HERE = r"here(?:'s|’s| is| are)"
#: A leading interjection of a chat reply ("Sure!", "Certainly,", "Okay."); the punctuation is
#: required so that "Great Britain" or "Okra" keep their first word.
_INTERJECTION = re.compile(
    rf"^\s*(?:sure\s+thing|{_OPENERS}|great|alright|yes,\s+of\s+course)\b\s*[!,.:]+\s*",
    re.IGNORECASE,
)
#: Text before a colon that only introduces the answer ("Here are the answers:", "Correct answer:").
_LABEL = re.compile(
    r"^\s*(?:[^:\n]{0,80}?\b(?:" + _HERE + r"|answers?|responses?|rewrite|rewritten(?:\s+text)?|"
    r"reply|correct|incorrect|misleading|wrong)\b[^:\n]{0,40}?)\s*:\s*",
    re.IGNORECASE,
)
_ENUMERATOR = re.compile(r"^\s*(?:\d+[.)]|[-•]|\(?[a-dA-D]\))\s+")


def strip_labels(text: str) -> str:
    """Remove markup, a leading interjection and introductory labels from one answer fragment.

    ``"Sure! Here are the answers: **Walter**"`` -> ``"Walter"``; ``"Correct answer: 80167"`` ->
    ``"80167"``; ``"Star Wars: A New Hope"`` is kept (its prefix is not a label).
    """
    out = _MARKUP.sub("", text).strip()
    for _ in range(4):  # "Sure! Here are two answers: Correct answer: X" peels in rounds
        before = out
        out = _INTERJECTION.sub("", out)
        out = _LABEL.sub("", out, count=1)
        out = _ENUMERATOR.sub("", out)
        out = out.strip()
        if out == before:
            break
    return out.strip().strip(_QUOTES).strip()


# ----------------------------------------------------------------------------- numbers
_NUMBER = re.compile(r"(?<![\w.,])([-−–]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d,]*\d)")


def parse_number(text: str) -> int | Fraction | None:
    """The one number a fragment states, or ``None``.

    Thousands separators (``80,167``) and a unicode minus are accepted; ``80167.0`` is the integer
    80167. If the fragment contains ``=``, only what follows the last ``=`` counts (``89541 -
    9374 = 80167``). More than one number (``80167 or 80168``) is ambiguous: ``None``.
    """
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    found = _NUMBER.findall(_MARKUP.sub("", text))
    if len(found) != 1:
        return None
    sign, digits, fraction = found[0]
    value = Fraction(digits.replace(",", "") + (fraction or ""))
    if sign:
        value = -value
    return int(value) if value.denominator == 1 else value


def format_number(value: int | Fraction) -> str:
    """Plain decimal text of a parsed number (``-2853``, ``12.5``)."""
    if isinstance(value, int) or value.denominator == 1:
        return str(int(value))
    return str(float(value))


# ----------------------------------------------------------------------------- two answers
_DOUBLE_PIPE = re.compile(r"\s*\|\|\s*")
_DELIMITER_ECHO = re.compile(r"\(?\s*\bdelimited\s+by\s+\|\|\s*\)?\s*:?", re.IGNORECASE)
_FIRST_LABEL = re.compile(r"(?<![a-z])(?:correct|right|true)\s+answer\s*[:\-–]\s*([^\n|]+)", re.IGNORECASE)
_SECOND_LABEL = re.compile(r"(?:incorrect|wrong|misleading|false)\s+answer\s*[:\-–]\s*([^\n|]+)", re.IGNORECASE)


def split_two_answers(text: str) -> tuple[str, str]:
    """Split a "first || second" generation (correct answer first) into its two fragments.

    Accepted, in order:

    1. the first line holding ``||``: its first two non-empty parts (a third part is ignored);
    2. labelled answers anywhere: ``Correct answer: X`` and ``Incorrect|Misleading|Wrong answer: Y``;
    3. a line with exactly two non-empty parts around single ``|`` (a markdown table row).

    Raises:
        Unparseable: Only one answer, none, or an empty part.
    """
    if not isinstance(text, str) or not text.strip():
        raise Unparseable("empty output")
    text = _DELIMITER_ECHO.sub(" ", text)  # "(delimited by ||)" restated from the instruction
    lines = [line for line in text.splitlines() if line.strip()]
    found = _split_double_pipe(lines) or _split_labelled(text) or _split_table_row(lines)
    if found is None:
        raise Unparseable(f"expected two answers delimited by '||', got {text.strip()!r:.80}")
    return found


def _split_double_pipe(lines: Sequence[str]) -> tuple[str, str] | None:
    """Form 1: the first two non-empty parts of the first line holding ``||`` (fewer than two: unparseable)."""
    for line in lines:
        if "||" in line:
            parts = [part for part in _DOUBLE_PIPE.split(line) if strip_labels(part)]
            if len(parts) < 2:
                raise Unparseable(f"only one answer around '||': {line.strip()!r:.80}")
            return parts[0].strip(), parts[1].strip()
    return None


def _split_labelled(text: str) -> tuple[str, str] | None:
    """Form 2: ``Correct answer: X`` and ``Incorrect|Misleading|Wrong answer: Y`` anywhere."""
    first, second = _FIRST_LABEL.search(text), _SECOND_LABEL.search(text)
    if first and second:
        return first.group(1).strip(), second.group(1).strip()
    return None


def _split_table_row(lines: Sequence[str]) -> tuple[str, str] | None:
    """Form 3: the first line with exactly two non-empty parts around single ``|`` (a markdown table row)."""
    for line in lines:
        parts = [part for part in line.split("|") if part.strip()]
        if line.count("|") >= 1 and len(parts) == 2:
            return parts[0].strip(), parts[1].strip()
    return None


# ----------------------------------------------------------------------------- answers (QA)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation + "‘’´`_")


def normalize_answer(text: str) -> str:
    """TriviaQA's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().replace("_", " ")
    text = "".join(" " if ch in _PUNCTUATION else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


# ----------------------------------------------------------------------------- binary answers
# The question's "(Yes/No)" / "(True/False)" restated, in either order.
_YES_NO_ECHO = re.compile(r"\(?\s*\b(?:yes\s*/\s*no|no\s*/\s*yes)\b\s*\)?|\byes\s+or\s+no\b\??", re.IGNORECASE)
_TRUE_FALSE_ECHO = re.compile(
    r"\(?\s*\b(?:true\s*/\s*false|false\s*/\s*true)\b\s*\)?|\btrue\s+or\s+false\b\??", re.IGNORECASE
)


def _polarity(line: str, tiers: Sequence[tuple[re.Pattern[str], re.Pattern[str]]]) -> bool | None | str:
    """``True``/``False`` for the first tier with words of one polarity, ``"ambiguous"`` if both."""
    for positive, negative in tiers:
        has_positive, has_negative = bool(positive.search(line)), bool(negative.search(line))
        if has_positive and has_negative:
            return "ambiguous"
        if has_positive or has_negative:
            return has_positive
    return None


def _first_decisive_line(text: str, tiers: Sequence[tuple[re.Pattern[str], re.Pattern[str]]]) -> bool | None:
    """Decide on the first line that says anything; a line naming both polarities is ``None``.

    Line by line because base models run on past the answer ("True\\nVerify whether ..."), and a
    chat model's first line is often only "Sure!".
    """
    for line in text.splitlines():
        verdict = _polarity(line, tiers)
        if verdict == "ambiguous":
            return None
        if verdict is not None:
            return bool(verdict)
    return None


def _words(*words: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + "|".join(words) + r")(?![\w-])", re.IGNORECASE)


_NOT = r"\b(?:not|isn't|isn’t|is\s+not)\s+"
# "not correct" / "not false" flip their word: rewritten to sentinels first, so that "correct" or
# "false" alone keep their meaning.
_NEGATED_POSITIVE = re.compile(_NOT + r"(?:correct|right|true|accurate)\b", re.IGNORECASE)
_NEGATED_NEGATIVE = re.compile(_NOT + r"(?:false|incorrect|wrong|inaccurate)\b", re.IGNORECASE)
_TRUE_FALSE_TIERS = (
    (_words("true"), _words("false")),
    (_words("correct", "right", "accurate", "ISCORRECT"), _words("incorrect", "wrong", "inaccurate", "NOTCORRECT")),
    (_words("yes"), _words("no")),
)


def parse_true_false(text: str) -> bool | None:
    """Parse a generated True/False verdict: ``True``, ``False`` or ``None`` if not unambiguous.

    Accepts ``"True"``, ``"false."``, ``"**False**"``, ``"Sure! The computation is True."``,
    ``"The computation is correct"`` / ``"incorrect"`` / ``"not correct"`` / ``"not false"``,
    ``"Yes"`` / ``"No"``
    (in that order of precedence: a line naming True never reads its "no" as a verdict). An echo
    of the question's ``(True/False)`` is ignored. Both polarities on the deciding line: ``None``.
    """
    if not isinstance(text, str):
        return None
    cleaned = _TRUE_FALSE_ECHO.sub(" ", _MARKUP.sub("", text))
    cleaned = _NEGATED_NEGATIVE.sub(" ISCORRECT ", _NEGATED_POSITIVE.sub(" NOTCORRECT ", cleaned))
    return _first_decisive_line(cleaned, _TRUE_FALSE_TIERS)


_NEGATED_HARMLESS = re.compile(_NOT + r"(?:safe|harmless|innocuous)\b|\bunsafe\b", re.IGNORECASE)
_NEGATED_HARMFUL = re.compile(
    r"\b(?:not|isn't|isn’t|is\s+not|non)[\s-]*(?:harmful|toxic|dangerous)\b"
    r"|\bharmless\b|\binnocuous\b|\bnontoxic\b|\bsafe\b",
    re.IGNORECASE,
)
_YES_NO_TIERS = (
    (_words("yes"), _words("no")),
    (_words("harmful", "toxic", "dangerous", "ISHARMFUL"), _words("NOTHARMFUL")),
)


def parse_yes_no(text: str) -> bool | None:
    """Parse a generated "is the text harmful (Yes/No)" verdict: ``True`` = yes, harmful.

    Accepts ``"No"``, ``"Yes."``, ``"**No**"``, ``"No, the text is harmless."``, ``"The text is
    not harmful."``, ``"The text is harmful."``, ``"It is not safe."``. An echo of ``(Yes/No)`` is
    ignored.
    """
    if not isinstance(text, str):
        return None
    cleaned = _NEGATED_HARMLESS.sub(" ISHARMFUL ", _YES_NO_ECHO.sub(" ", _MARKUP.sub("", text)))
    cleaned = _NEGATED_HARMFUL.sub(" NOTHARMFUL ", cleaned)
    return _first_decisive_line(cleaned, _YES_NO_TIERS)


# ----------------------------------------------------------------------------- A / B
_AB_ECHO = re.compile(r"\(\s*A\s*(?:or|/)\s*B\s*\)|\bA\s+or\s+B\b", re.IGNORECASE)
_NAMED_OPTION = re.compile(r"\b(?:persona|text|option|choice)\s+\(?([AB])\)?(?![\w])", re.IGNORECASE)


#: An explicit answer marker followed by one option letter (upper case: "a" is an article).
_EXPLICIT_AB = re.compile(
    r"(?i:\b(?:final\s+answer|answer|choice|verdict)\s*(?:is|would\s+be)?\s*[:\-=]?\s*)"
    r"\(?(?:(?i:persona|option|text)\s+)?([AB])\)?(?![\w])"
)
#: A line that starts like an option of the list: "A: ...", "Persona B: ...", "(A) ...".
_OPTION_LINE = {
    letter: re.compile(
        rf"^\W*(?:(?:persona|person|text|option)\s+)?\(?{letter}\)?\s*[:.)]\s*\S", re.IGNORECASE | re.MULTILINE
    )
    for letter in "AB"
}


def _option_key(text: str) -> str:
    return normalize_answer(strip_labels(text))


def parse_ab(text: str, options: Sequence[str] = ()) -> str | None:
    """Parse a generated A/B answer: ``"A"``, ``"B"`` or ``None``.

    An explicit marker anywhere wins (``Answer: B``, ``The answer is (A)``). Otherwise, on the first
    line that yields an answer, accepts what
    :func:`logic_consistency.tasks.answers.parse_choice` accepts (``B``, ``(B)``, ``**B**``,
    ``B: Walter``, ``Answer: B``), after removing an echoed ``(A or B)`` and a leading "Sure!",
    and with ``Persona B`` / ``Text B`` read as ``B``. Failing that, a line that is exactly one of
    ``options`` (after answer normalisation) picks that option. An output that lists both options
    (``A: ...`` and ``B: ...`` lines) echoes the question and chooses nothing: ``None``.
    """
    if not isinstance(text, str):
        return None
    keys = [_option_key(option) for option in options]
    unechoed = _AB_ECHO.sub(" ", _MARKUP.sub("", text))
    explicit = _EXPLICIT_AB.findall(unechoed)
    if explicit:
        return explicit[-1]  # "Answer: B", "The answer is (A)", "Final answer: B"
    if _OPTION_LINE["A"].search(text) and _OPTION_LINE["B"].search(text):
        return None  # the option list echoed ("A: John\nB: Walter"): no choice made
    for raw_line in text.splitlines():
        choice = _line_ab(raw_line, keys)
        if choice is not None:
            return choice
    return None


def _line_ab(raw_line: str, keys: Sequence[str]) -> str | None:
    """The option one line picks: a letter :func:`parse_choice` reads, else the one option the line is exactly."""
    line = _INTERJECTION.sub("", _AB_ECHO.sub(" ", raw_line))
    line = _NAMED_OPTION.sub(lambda match: match.group(1).upper(), line).strip()
    if not line:
        return None
    choice = parse_choice(line, ("A", "B"))
    if choice is not None:
        return choice
    key = _option_key(line)
    if key and keys.count(key) == 1:
        return "AB"[keys.index(key)]
    return None


# ----------------------------------------------------------------------------- free text
_PREAMBLE_LINE = re.compile(
    rf"^\s*(?:{_OPENERS}|great|{_HERE}|below\s+is)\b[^\n]*:\s*$",
    re.IGNORECASE,
)
_PREAMBLE_PREFIX = re.compile(
    rf"^\s*(?:(?:{_OPENERS})\s*[!,.]\s*)?"
    rf"(?:{_HERE}|below\s+is)\b[^:\n]{{0,80}}:\s*",
    re.IGNORECASE,
)
_ONLY_INTERJECTION = re.compile(rf"^\s*(?:sure\s+thing|{_OPENERS}|great|alright)\s*[!,.]*\s*$", re.IGNORECASE)
_ANSWER_LABEL = re.compile(
    r"^\s*(?:(?:the\s+)?(?:answer|rewrite|response|reply)(?:\s+to\s+(?:this|the)\s+question)?\s+is"
    r"|answer|rewrite|response|reply|text)\s*:\s*",
    re.IGNORECASE,
)
_ONLY_LABEL = re.compile(
    r"^\s*(?:the\s+)?(?:answer|rewrite|rewritten\s+text|response|reply)"
    r"(?:\s+to\s+(?:this|the)\s+question)?(?:\s+is)?\s*:\s*$",
    re.IGNORECASE,
)


def clean_free_text(text: str, *, first_paragraph: bool) -> str:
    """The content of a free-text generation, without a chat preamble.

    Removes a preamble line ("Sure! Here's a more humorous rewrite:"), a preamble prefix on the
    content line ("Sure, here is a rewrite: ..."), a leading "Answer:" label, markdown emphasis and
    enclosing quotes. With ``first_paragraph``, keeps only the first paragraph (base models run on
    after the answer).

    Raises:
        Unparseable: Nothing is left.
    """
    if not isinstance(text, str):
        raise Unparseable("output is not text")
    body = _without_preamble(text)
    if first_paragraph:
        body = re.split(r"\n\s*\n", body.strip(), maxsplit=1)[0] if body.strip() else ""
    body = _without_emphasis_and_quotes(body)
    if not body:
        raise Unparseable(f"no content after removing the preamble: {text.strip()!r:.80}")
    return body


_PREAMBLE_ONLY_LINES = (_PREAMBLE_LINE, _ONLY_INTERJECTION, _ONLY_LABEL)


def _without_preamble(text: str) -> str:
    """``text`` without its leading blank and preamble-only lines, a preamble prefix and an answer label."""
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or any(pattern.match(lines[0]) for pattern in _PREAMBLE_ONLY_LINES)):
        lines.pop(0)  # "Sure! Here's the rewrite:", "Certainly!" or "The answer is:" on a line of its own
    body = "\n".join(lines).strip()
    return _ANSWER_LABEL.sub("", _PREAMBLE_PREFIX.sub("", body, count=1), count=1)


def _without_emphasis_and_quotes(body: str) -> str:
    """``body`` without markdown emphasis and one pair of enclosing quotes."""
    body = re.sub(r"\*\*|__", "", body).strip()
    if len(body) >= 2 and body[0] in _QUOTES and body[-1] in _QUOTES:
        body = body[1:-1].strip()
    return body
