"""parse_choice: the generated pairwise answer, read only when it is unambiguous."""

from __future__ import annotations

import pytest

from logic_consistency.tasks.answers import parse_choice


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 1. an explicit final answer (the last one wins)
        ("Summary A is longer, but Summary B is more coherent. Answer: B", "B"),
        ("The answer is (A).", "A"),
        ("Final answer: **B**", "B"),
        ("Answer: Summary A", "A"),
        ("answer - B", "B"),
        ("Answer: A\nOn reflection... Final answer: B", "B"),
        ("Verdict: A", "A"),
        # 2. only the option, possibly decorated
        ("B", "B"),
        ("  (A)  ", "A"),
        ("B.", "B"),
        ("**A**", "A"),
        ("Summary B", "B"),
        ("Option A.", "A"),
        ("passage B", "B"),
        # 3. the option first, then punctuation or a line break
        ("B) because it flows better", "B"),
        ("A.\nThe first summary keeps the order of events.", "A"),
        ("B: it is more relevant", "B"),
        ("A, since it answers the query", "A"),
        ("A - it is earlier", "A"),
    ],
)
def test_unambiguous_answers_are_read(text: str, expected: str) -> None:
    assert parse_choice(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot decide.",
        "Both A and B are fine.",  # both options named, no marker
        "A summary should be coherent.",  # the article "A", not the option
        "Neither",
        "C",
        "Answer: C",
        "The better one is B because A rambles",  # no marker, does not start with the option
    ],
)
def test_ambiguous_or_missing_answers_are_none(text: str) -> None:
    assert parse_choice(text) is None


def test_non_text_is_none() -> None:
    assert parse_choice(None) is None  # type: ignore[arg-type]
    assert parse_choice(3) is None  # type: ignore[arg-type]


def test_custom_choices_are_case_sensitive() -> None:
    assert parse_choice("Answer: 2", ("1", "2")) == "2"
    assert parse_choice("1", ("1", "2")) == "1"
    assert parse_choice("b", ("A", "B")) is None  # lower-case is not the option "B"
    assert parse_choice("Answer: yes", ("yes", "no")) == "yes"


def test_first_option_probability_is_a_stable_two_way_softmax() -> None:
    import math

    from logic_consistency.tasks.answers import first_option_probability

    assert first_option_probability(-1.0, -1.0) == 0.5  # a tie, exactly
    assert math.isclose(first_option_probability(math.log(0.8), math.log(0.2)), 0.8)
    # a gap past exp's range (about 709) neither overflows nor rounds to a wrong side
    assert first_option_probability(-2000.0, 0.0) == 0.0 and first_option_probability(0.0, -2000.0) == 1.0
    assert first_option_probability(float("-inf"), -3.0) == 0.0
    assert math.isnan(first_option_probability(float("-inf"), float("-inf")))  # no judgement


@pytest.mark.parametrize("base", [-1.0, -0.6931471805599453, -20.0])
def test_log_probabilities_closer_than_the_declared_tolerance_are_a_tie(base: float) -> None:
    import math

    from logic_consistency.tasks.answers import TIE_TOLERANCE, first_option_probability

    assert TIE_TOLERANCE == 1e-6
    for inside in (1e-12, 0.999e-6):  # the audit's log(0.5) + 1e-12, and just inside
        assert first_option_probability(base + inside, base) == 0.5
        assert first_option_probability(base, base + inside) == 0.5
    outside = first_option_probability(base + 1.001e-6, base)  # just outside: a preference, however small
    assert 0.5 < outside < 0.5 + 1e-6 and first_option_probability(base, base + 1.001e-6) < 0.5
    assert math.isclose(outside, 0.5 + 1.001e-6 / 4, rel_tol=1e-3)  # expit'(0) = 1/4
