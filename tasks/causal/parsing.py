"""Lenient, never-guessing parsers for the causal tasks' generated text.

Chat models wrap their answers ("Sure, here are two weaker defeaters:"), number them ("1.",
"(2)", "Defeater 1:", bullets, bold), and rank with separators ("3 > 1 > 2"), one index per line,
numbered lists ("1. 3") or by repeating the sentences. These parsers accept every such form whose
meaning is unambiguous and raise :class:`ParseError` otherwise (one argument where two were asked
for, a repeated or missing index, two different rankings in one answer): an answer is never
completed or guessed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["ParseError", "normalize_text", "parse_arguments", "parse_ranking"]


class ParseError(ValueError):
    """A generated answer cannot be read unambiguously; the message says why."""


# ----------------------------------------------------------------------------- shared helpers
_QUOTE_PAIRS = {'"': '"', "'": "'", "‘": "’", "“": "”", "«": "»", "`": "`"}
_BULLET = r"(?:[-*•‣◦–—+>]\s+)"
# "1." but not "3.5 million" or "10:30": a list number is not followed by another digit
_NUMBER_MARK = r"(?:[(\[]?\d{1,2}[.):\]](?!\d)\s*)"
_LETTER_MARK = r"(?:[(\[]?[a-j][.)\]]\s+)"
_NAME_MARK = (
    r"(?:(?:(?:the\s+)?(?:first|second|1st|2nd|weaker|stronger|weakest|strongest|generated|new)\s+)*"
    r"(?:defeaters?|supporters?|arguments?|intermediates?|options?|statements?)"
    r"\s*(?:#?\s*\d{1,2})?\s*(?:is\s*)?(?:[:.)\-–—]\s*|$))"
)
_ITEM_PREFIX = re.compile(rf"^\s*(?:{_BULLET}|{_NUMBER_MARK}|{_LETTER_MARK}|{_NAME_MARK})", re.IGNORECASE)


def _unmarkdown(text: str) -> str:
    return text.replace("**", "").replace("__", "").replace("`", "")


def _strip_item_prefixes(line: str) -> str:
    """Remove list markers: "- ", "1. ", "(2) ", "b) ", "Defeater 1: ", "**Supporter 2:**", nested."""
    previous = None
    while previous != line:
        previous = line
        line = _ITEM_PREFIX.sub("", line, count=1).strip()
    return line


def _strip_quotes(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and _QUOTE_PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    # a quoted sentence followed by its full stop: "‘It rains.’." or '"It rains".'
    if len(text) >= 3 and text[-1] == "." and _QUOTE_PAIRS.get(text[0]) == text[-2]:
        text = text[1:-2].strip()
    return text


def normalize_text(text: str) -> str:
    """Comparison key of a sentence: NFKC, case-folded, quotes/markdown and end punctuation dropped."""
    text = unicodedata.normalize("NFKC", _unmarkdown(text))
    text = _strip_quotes(text)
    text = re.sub(r"\s+", " ", text).strip().casefold()
    return text.rstrip(" .!;:,").strip()


# ----------------------------------------------------------------------------- generation
_CHATTY_START = re.compile(
    r"^(?:sure|certainly|of course|okay|ok|absolutely|great|here\s+(?:are|is)|here's|below\s+(?:are|is)|"
    r"i\s+(?:hope|have|can|will)|hope\s+this|let\s+me|feel\s+free|these\s+(?:two\s+)?(?:generated\s+)?"
    r"(?:arguments|defeaters|supporters|statements)\s+(?:are|vary|have)|"
    r"(?:note|explanation|reasoning|rationale)s?\s*:|"
    # a restatement of the original argument is not a generated one
    r"the\s+original\s+(?:defeater|supporter|argument)s?\s+(?:is|was|reads)\b)",
    re.IGNORECASE,
)
_INLINE_SECOND = re.compile(r"\s+(?=(?:\(2\)|2[.)])\s+\S)")


def _is_commentary(line: str) -> bool:
    """A preamble, header or sign-off line rather than an argument."""
    if _CHATTY_START.match(line):
        return True
    # "Weaker defeaters:" / "Here they are:" -- a header ends with a colon and says nothing after it.
    return line.endswith(":")


def parse_arguments(text: str, expected: int = 2) -> list[str]:
    """The ``expected`` arguments of a generation answer, one per line.

    Accepted: plain lines; numbered, lettered, bulleted or named lines ("1.", "(2)", "b)",
    "- ", "Defeater 1:", "**Stronger supporter 2:**"); quotation marks around an argument; a chatty
    first line ("Sure, here are two weaker defeaters:"), header lines ending in ":" and sign-offs
    ("Note: ...", "I hope this helps"); both arguments on one line as "1. ... 2. ...".

    Args:
        text: The generated answer.
        expected: How many arguments the prompt asked for.

    Returns:
        The arguments, in the order given, without markers or quotes.

    Raises:
        ParseError: Not exactly ``expected`` arguments remain after dropping the decoration.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("empty answer")
    items = [item for line in _answer_lines(text) if (item := _argument_item(line)) is not None]
    if len(items) != expected:
        found = {0: "none", 1: "1"}.get(len(items), str(len(items)))
        raise ParseError(f"expected {expected} arguments (one per line), found {found}")
    return items


def _answer_lines(text: str) -> list[str]:
    """The non-empty lines of an answer, without markdown; "1. first 2. second" on one line is two lines."""
    lines: list[str] = []
    for raw in _unmarkdown(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        if not line:
            continue
        # "1. first argument 2. second argument" on one line
        if re.match(r"^(?:\(1\)|1[.)])\s", line) and _INLINE_SECOND.search(line):
            lines.extend(part.strip() for part in _INLINE_SECOND.split(line, maxsplit=1))
        else:
            lines.append(line)
    return lines


def _argument_item(line: str) -> str | None:
    """The argument one line states, without markers or quotes; ``None`` for commentary or a bare marker."""
    if _is_commentary(line):
        return None
    item = _strip_quotes(_strip_item_prefixes(line))
    if item and re.search(r"[^\W\d_]", item):  # a bare marker or number is no argument
        return item
    return None


# ----------------------------------------------------------------------------- ranking
_REFERENCE = re.compile(r"(?i)\b(?:argument|arg\.?|item|no\.?|number|index|#)\s*#?\s*(\d{1,2})\b|[(\[#](\d{1,2})[)\]]?")
# one- or two-digit numbers (not parts of "2024" or "3.5") joined by list separators
_INDEX = r"(?<![\d.])\d{1,2}(?![\d]|\.\d)"
_RUN = re.compile(rf"{_INDEX}(?:\s*(?:,|;|>|<|→|⇒|->|=>|—|–|\s)\s*{_INDEX})+")
_LEAD = re.compile(r"^\s*(?:rank(?:ed)?\s*#?\s*)?(\d{1,2})\s*[.):\]]\s*(.*)$", re.IGNORECASE)
_BARE = re.compile(r"^\s*(?:(?:argument|arg\.?|item|#)\s*#?\s*)?[(\[]?(\d{1,2})[)\]]?\s*[.,;:]?\s*$", re.IGNORECASE)
_REF_THEN_TEXT = re.compile(
    r"^\s*(?:(?:argument|arg\.?|item)\s*#?\s*(\d{1,2})|[(\[](\d{1,2})[)\]])\s*[:.)\-–—]?\s*(.*)$", re.IGNORECASE
)


def _describe(sequence: Sequence[int], n_items: int) -> str:
    """What is wrong with a candidate ranking (for the error message)."""
    problems = []
    outside = sorted({value for value in sequence if not 1 <= value <= n_items})
    if outside:
        problems.append(f"indices outside 1-{n_items}: {outside}")
    repeated = sorted({value for value in sequence if sequence.count(value) > 1 and 1 <= value <= n_items})
    if repeated:
        problems.append(f"repeated indices {repeated}")
    missing = sorted(set(range(1, n_items + 1)) - set(sequence))
    if missing:
        problems.append(f"missing indices {missing}")
    return "; ".join(problems) or "not a ranking"


def _match_sentence(text: str, keys: Sequence[str]) -> list[int]:
    """1-based indices of the arguments that ``text`` repeats (exactly, or followed by a comment)."""
    key = normalize_text(text)
    if not key:
        return []
    exact = [number for number, candidate in enumerate(keys, start=1) if candidate and key == candidate]
    if exact:
        return exact
    # "<argument> - weakens the pair most": the whole argument, then a separator and a comment
    return [
        number
        for number, candidate in enumerate(keys, start=1)
        if len(candidate) >= 12 and re.match(re.escape(candidate) + r"\s*(?:[-–—:(,;.]|$)", key)
    ]


def _line_reference(line: str, keys: Sequence[str]) -> tuple[int | None | str, bool]:
    """The argument one line of a list names, and whether the line only weakly says so.

    The first value is an index, ``None`` (not a ranking line) or an error message. A line is weak
    when it names an index and goes on with text that is not the argument ("1. Argument 3 is the
    strongest defeater because ..."): an explanation may read like that, so weak lines are used
    only when nothing else gives a complete ranking.
    """
    line = re.sub(rf"^\s*{_BULLET}", "", line)
    index, rest = _index_line(line)
    if index is not None:
        return index, False
    reference = _REF_THEN_TEXT.match(rest)
    number = None
    if reference:
        number = int(reference.group(1) or reference.group(2))
        rest = reference.group(3).strip()
    return _sentence_reference(line, rest, number, keys)


def _index_line(line: str) -> tuple[int | None, str]:
    """The index a line gives by number alone ("3", "3.", "1. 3", "1. Argument 3"), else ``None``; and the
    line's text after a leading rank number."""
    bare = _BARE.match(line)
    if bare:
        return int(bare.group(1)), line
    lead = _LEAD.match(line)
    rest = lead.group(2).strip() if lead else line.strip()
    rest = re.sub(rf"^{_BULLET}", "", rest).strip()
    if lead and not rest:
        return int(lead.group(1)), rest  # "3." alone on its line
    inner = _BARE.match(rest)
    if lead and inner:
        return int(inner.group(1)), rest  # "1. 3" / "1. Argument 3": rank number, then the index
    return None, rest


def _sentence_reference(line: str, rest: str, number: int | None, keys: Sequence[str]) -> tuple[int | None | str, bool]:
    """What a line's text names by repeating an argument's sentence, checked against the ``number`` it
    names (``Argument 8: <sentence>``); see :func:`_line_reference`."""
    matches = _match_sentence(rest, keys) if rest else []
    if len(matches) == 1:
        if number is not None and number != matches[0]:
            return f"line {line.strip()!r:.80} names argument {number} but repeats argument {matches[0]}", False
        return matches[0], False
    if len(matches) > 1:
        if number in matches:
            return number, False
        return f"line {line.strip()!r:.80} repeats a sentence shared by arguments {matches}", False
    # No sentence recognised. "8. <text>": the number alone cannot tell a rank from an index, so
    # the line is not read; "Argument 8 <text>": weak.
    return number, bool(rest)


def parse_ranking(text: str, arguments: Sequence[str]) -> list[int]:
    """The ranking of ``arguments`` that a generated answer gives, as 1-based argument numbers.

    Accepted (a ranking must name every argument exactly once):

    * indices on one line, separated by spaces, commas, ">" / "<" / arrows, with or without a
      lead-in ("Ranking: 3 1 2 ..."), brackets or "Argument" prefixes ("Argument 3 > Argument 1");
    * one argument per line: a bare index ("3", "(3)", "Argument 3"), a numbered list of indices
      ("1. 3"), the argument's sentence (with or without its number, "8. John changes ..."), or
      "Argument 8: <sentence>";
    * chatty lines before or after the ranking.

    Separators are read as list order: the answer is taken from first (most weakening) to last.

    Args:
        text: The generated answer.
        arguments: The arguments as shown in the prompt (argument 1 first).

    Returns:
        A permutation of ``1 .. len(arguments)``.

    Raises:
        ParseError: No complete ranking (indices missing, repeated or out of range; sentences not
            recognised), or two different complete rankings in one answer.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("empty answer")
    n_items = len(arguments)
    keys = [normalize_text(argument) for argument in arguments]
    lines = _ranking_lines(text)
    candidates = _runs_on_one_line(lines)  # 1. every run of >= 3 indices written on one line
    listed, with_weak, problems = _one_per_line(lines, keys)  # 2. one argument per line
    if len(listed) >= 3:
        candidates.append(listed)
    wanted = list(range(1, n_items + 1))
    for pool in (candidates, [with_weak]):
        ranking = _the_complete_ranking(pool, wanted)
        if ranking is not None:
            return ranking
    if len(with_weak) >= 3 and with_weak != listed:
        candidates.append(with_weak)
    raise _no_ranking_error(candidates, problems, n_items)


def _no_ranking_error(candidates: Sequence[list[int]], problems: Sequence[str], n_items: int) -> ParseError:
    """Why no complete ranking was read: the first wrongly named line, else no list, else the most complete one."""
    if problems:
        return ParseError(problems[0])
    if not candidates:
        return ParseError("no ranking found (no list of argument indices or sentences)")
    wanted = set(range(1, n_items + 1))
    best = max(candidates, key=lambda candidate: len(set(candidate) & wanted))
    return ParseError(f"incomplete ranking {best}: {_describe(best, n_items)}")


def _ranking_lines(text: str) -> list[str]:
    """The non-empty lines of a ranking answer, without markdown."""
    return [line for line in _unmarkdown(text).replace("\r", "\n").split("\n") if line.strip()]


def _runs_on_one_line(lines: Sequence[str]) -> list[list[int]]:
    """Every run of three or more indices written on one line (``3 > 1 > 2``, ``Argument 3, Argument 1``)."""
    runs: list[list[int]] = []
    for line in lines:
        plain = _REFERENCE.sub(lambda m: f" {m.group(1) or m.group(2)} ", line)
        for run in _RUN.finditer(plain):
            numbers = [int(value) for value in re.findall(r"\d{1,2}", run.group(0))]
            if len(numbers) >= 3:
                runs.append(numbers)
    return runs


def _one_per_line(lines: Sequence[str], keys: Sequence[str]) -> tuple[list[int], list[int], list[str]]:
    """One argument per line: the arguments read for sure, those with the weak readings too, and the
    problems of the lines that name an argument wrongly."""
    listed: list[int] = []
    with_weak: list[int] = []
    problems: list[str] = []
    for line in lines:
        reference, weak = _line_reference(line, keys)
        if isinstance(reference, str):
            problems.append(reference)
        elif reference is not None:
            with_weak.append(reference)
            if not weak:
                listed.append(reference)
    return listed, with_weak, problems


def _the_complete_ranking(pool: Sequence[Sequence[int]], wanted: list[int]) -> list[int] | None:
    """The one complete ranking among ``pool`` (``None`` if none); two different ones are an error."""
    distinct = {tuple(candidate) for candidate in pool if sorted(candidate) == wanted}
    if len(distinct) > 1:
        raise ParseError(f"the answer gives {len(distinct)} different rankings")
    return list(next(iter(distinct))) if distinct else None
