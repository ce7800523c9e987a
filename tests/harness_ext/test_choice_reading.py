"""Reading answer-choice log-probabilities from a chat completion's top log-probabilities."""

from __future__ import annotations

import math
import pickle

import pytest

from logic_consistency.harness_ext.choice_reading import ChoiceAnswer, count_missing, read_choices


def _position(*tokens: tuple[str, float]) -> dict:
    return {
        "token": tokens[0][0],
        "logprob": tokens[0][1],
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tokens],
    }


def test_first_position_listing_a_choice_is_read_and_variants_are_summed() -> None:
    content = [
        _position(("The", -0.1), ("Summary", -2.5)),  # no choice here: walk on, as the authors do
        _position((" answer", -0.2), (" A", -1.0), ("A", -2.0), (" B", -3.0)),
        _position(("B", -0.01)),
    ]
    a, b = read_choices(content, [" A", " B"])
    assert a.position == b.position == 1
    assert a[0] == pytest.approx(math.log(math.exp(-1.0) + math.exp(-2.0)))
    assert b[0] == pytest.approx(-3.0)
    assert not a.missing and not b.missing
    assert not a[1] and not b[1]  # " answer" is the top token, not a choice


def test_greedy_is_the_top_token_and_case_is_kept() -> None:
    content = [_position(("True", -0.05), ("true", -3.0), (" False", -4.0))]
    true, false = read_choices(content, ["True", "False"])
    assert true[1] and not false[1]
    assert true[0] == pytest.approx(-0.05)  # "true" is another word
    assert false[0] == pytest.approx(-4.0)


def test_missing_choice_gets_the_least_listed_logprob_and_is_counted() -> None:
    content = [_position(("A", -0.1), ("The", -2.0), ("Option", -6.5))]
    a, b = read_choices(content, ["A", "B"])
    assert b.missing and b[0] == pytest.approx(-6.5) and not b[1]
    assert not a.missing and a[1]
    assert count_missing([a, b]) == 1


def test_no_position_lists_a_choice_reads_position_zero_as_a_counted_tie() -> None:
    content = [_position(("I", -0.3), ("The", -1.5)), _position((" think", -0.2), (" do", -4.0))]
    a, b = read_choices(content, ["A", "B"])
    assert a.position == 0 and a.missing and b.missing
    assert a[0] == b[0] == pytest.approx(-1.5)
    assert count_missing([a, b]) == 2


@pytest.mark.parametrize(
    ("content", "choices", "match"),
    [
        ([], ["A", "B"], "no top log-probabilities"),
        ([{"token": "A", "logprob": -1.0}], ["A"], "no top"),
        ([_position(("A", -1.0))], ["A", " A"], "distinct"),
        ([_position(("A", -1.0))], [" "], "non-blank"),
    ],
)
def test_bad_input_is_an_error(content: list, choices: list, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        read_choices(content, choices)


def test_answers_pickle_with_their_reading_and_stay_lm_eval_pairs() -> None:
    answer = ChoiceAnswer(-1.25, True, missing=False, position=3)
    logprob, greedy = answer
    assert (logprob, greedy) == (-1.25, True) and len(answer) == 2
    back = pickle.loads(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == answer and back.position == 3 and back.missing is False
    assert count_missing([(-1.0, False)]) is None  # true log-likelihoods: the count does not apply
