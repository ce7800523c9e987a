"""Reading answer-choice log-probabilities from a chat completion's top log-probabilities."""

from __future__ import annotations

import math
import pickle

import pytest

from logic_consistency.harness_ext.chat.choice_reading import (
    ChoiceAnswer,
    ReadingError,
    count_missing,
    is_tied,
    read_choices,
)


def _position(*tokens: tuple[str, float]) -> dict:
    return {
        "token": tokens[0][0],
        "logprob": tokens[0][1],
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tokens],
    }


def test_first_position_listing_a_choice_is_read_and_variants_are_summed() -> None:
    content = [
        _position(("The", -0.1), ("Summary", -2.5)),  # no choice here: walk on, as the authors do
        _position((" answer", -0.9), (" A", -1.5), ("A", -2.0), (" B", -3.0)),
        _position(("B", -0.01)),
    ]
    a, b = read_choices(content, [" A", " B"])
    assert a.position == b.position == 1
    assert a[0] == pytest.approx(math.log(math.exp(-1.5) + math.exp(-2.0)))
    assert b[0] == pytest.approx(-3.0)
    assert not a.missing and not b.missing
    assert not a[1] and not b[1]  # " answer" is the top token, not a choice


def test_greedy_is_the_top_token_and_case_is_kept() -> None:
    content = [_position(("True", -0.1), ("true", -3.0), (" False", -4.0))]
    true, false = read_choices(content, ["True", "False"])
    assert true[1] and not false[1]
    assert true[0] == pytest.approx(-0.1)  # "true" is another word
    assert false[0] == pytest.approx(-4.0)


def test_missing_choice_has_probability_zero_and_ranks_below_every_listed_choice() -> None:
    # the listed choice is the least listed token: it still wins (formerly both got -6.5, a tie)
    content = [_position(("The", -0.2), ("Option", -2.0), ("A", -6.5))]
    a, b = read_choices(content, ["A", "B"])
    assert b.missing and b[0] == -math.inf and not b[1]
    assert not a.missing and a[0] == pytest.approx(-6.5)
    assert not a.tied and not b.tied and not is_tied([a, b])
    assert count_missing([a, b]) == 1


def test_no_position_lists_a_choice_reads_position_zero_as_a_counted_tie() -> None:
    content = [_position(("I", -0.3), ("The", -1.5)), _position((" think", -0.2), (" do", -4.0))]
    a, b = read_choices(content, ["A", "B"])
    assert a.position == 0 and a.missing and b.missing
    assert a[0] == b[0] == pytest.approx(-1.5)
    assert a.tied and b.tied and is_tied([a, b])
    assert count_missing([a, b]) == 2


def test_equal_listed_choices_are_a_tie_and_any_backend_can_tell() -> None:
    a, b = read_choices([_position(("A", -0.7), ("B", -0.7))], ["A", "B"])
    assert a.tied and b.tied and is_tied([a, b])
    assert is_tied([(-1.0, False), (-1.0, False)]) and not is_tied([(-1.0, False), (-2.0, False)])
    # a tie below the best choice names a winner all the same
    assert not is_tied([(-0.5, True), (-3.0, False), (-3.0, False)])


@pytest.mark.parametrize("second", [-0.1, -2.0])  # the same value, and another one
def test_a_token_listed_twice_is_a_reading_error_naming_it(second: float) -> None:
    content = [_position(("The", -0.5)), _position(("A", -0.1), ("B", -3.0), ("A", second))]
    with pytest.raises(
        ReadingError, match=r"generated position 1: the token 'A' is listed twice in top_logprobs .entries 0 and 2"
    ):
        read_choices(content, ["A", "B"])
    # " A" and "A" are two tokens (summed for the choice A), not one listed twice
    a, _ = read_choices([_position((" A", -1.0), ("A", -2.0), ("B", -3.0))], ["A", "B"])
    assert a[0] == pytest.approx(math.log(math.exp(-1.0) + math.exp(-2.0)))


def test_every_position_is_searched_and_an_empty_first_list_is_skipped() -> None:
    empty = {"token": "x", "logprob": -0.1, "top_logprobs": []}
    a, b = read_choices([empty, _position(("B", -0.3), ("A", -1.4))], ["A", "B"])
    assert a.position == b.position == 1 and a[0] == pytest.approx(-1.4) and b[1]
    # no choice anywhere: the tie is read at the first position that lists anything (not the empty one)
    a, b = read_choices([empty, _position(("I", -0.2), ("So", -2.5))], ["A", "B"])
    assert a.position == 1 and a.tied and a[0] == pytest.approx(-2.5)
    with pytest.raises(ReadingError, match="no top log-probabilities at any of its 2 generated position"):
        read_choices([empty, empty], ["A", "B"])


@pytest.mark.parametrize("floor", [float("-inf"), -9999.0, -12000.0])
def test_probability_zero_is_minus_infinity_not_nan_and_does_not_stop_the_walk(floor: float) -> None:
    content = [_position(("The", -0.01), ("A", floor)), _position(("B", -0.2), ("A", -2.0))]
    a, b = read_choices(content, ["A", "B"])
    assert a.position == 1 and a[0] == pytest.approx(-2.0) and b[0] == pytest.approx(-0.2)
    (only,) = read_choices([_position(("B", -0.2), ("A", floor))], ["A"])
    assert only.missing and only[0] == pytest.approx(-0.2)  # all missing: the bound, never NaN


@pytest.mark.parametrize(
    ("logprob", "match"),
    [
        (float("nan"), "position 1, top_logprobs entry 1 .'A'. has logprob nan"),
        (float("inf"), "has logprob inf"),
        (3.0, "has logprob 3.0"),
        ("x", "has logprob 'x', not a number"),
        (None, "not a number"),
    ],
)
def test_impossible_log_probabilities_are_errors_naming_the_position(logprob: object, match: str) -> None:
    content = [_position(("The", -0.1)), _position(("B", -0.2), ("A", logprob))]  # type: ignore[arg-type]
    with pytest.raises(ReadingError, match=match):
        read_choices(content, ["A", "B"])


def test_listed_probabilities_above_one_are_an_error() -> None:
    with pytest.raises(ReadingError, match="position 0: the listed probabilities sum to 1.6"):
        read_choices([_position((" A", -0.2), ("A", -0.2))], ["A", "B"])


def test_rounding_just_above_zero_is_accepted() -> None:
    (a,) = read_choices([_position(("A", 1e-9))], ["A"])
    assert a[0] == 0.0


@pytest.mark.parametrize(
    ("content", "choices", "match"),
    [
        ([], ["A", "B"], "no top log-probabilities"),
        ([{"token": "A", "logprob": -1.0}], ["A"], "position 0 has no top_logprobs list"),
        ([{"token": "A", "logprob": -1.0, "top_logprobs": []}], ["A"], "no top log-probabilities"),
        ([_position(("A", -1.0)) | {"top_logprobs": [["A", -1.0]]}], ["A"], "not a .token, logprob. object"),
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
    assert back == answer and back.position == 3 and back.missing is False and back.tied is False
    assert count_missing([(-1.0, False)]) is None  # true log-likelihoods: the count does not apply
