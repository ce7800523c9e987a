"""The one options module: errors name source and key, unknown keys suggest the closest one."""

from __future__ import annotations

import pytest

from logic_consistency.options import (
    DEFAULT_SEED,
    OptionError,
    OptionTypeError,
    check_bool,
    check_choice,
    check_int,
    check_seed,
    closest,
    reject_unknown,
)


def test_unknown_key_suggests_the_closest_known_key() -> None:
    with pytest.raises(
        OptionError, match=r"task 't': unknown key\(s\) \['max_itmes'\]; did you mean 'max_itmes' -> 'max_items'\?"
    ):
        reject_unknown({"max_itmes": 3, "seed": 1}, {"max_items", "seed", "ks"}, where="task 't'")
    with pytest.raises(OptionError, match=r"unknown key\(s\) \['zzz'\]; allowed: \['a', 'b'\]"):
        reject_unknown(["zzz"], {"a", "b"})
    reject_unknown(["a"], {"a", "b"})  # known keys pass
    assert closest("sed", ["seed", "ks"]) == "seed" and closest("qqqq", ["seed"]) is None


@pytest.mark.parametrize("bad", [1.0, True, "3", None])
def test_int_types_are_checked_and_errors_are_both_value_and_type_errors(bad: object) -> None:
    with pytest.raises(OptionTypeError, match="where: n must be an integer") as error:
        check_int(bad, name="n", where="where")
    assert isinstance(error.value, ValueError) and isinstance(error.value, TypeError)


def test_int_bounds_and_none() -> None:
    assert check_int(None, name="n", allow_none=True) is None
    assert check_int(5, name="n", minimum=5) == 5
    with pytest.raises(OptionError, match="n must be at least 2, got 1"):
        check_int(1, name="n", minimum=2)


def test_seed_bool_choice() -> None:
    assert check_seed(DEFAULT_SEED) == 1234
    with pytest.raises(OptionError, match="seed must be at least 0"):
        check_seed(-1)
    assert check_bool(False, name="b") is False
    with pytest.raises(OptionTypeError, match="b must be true or false, got 'false'"):
        check_bool("false", name="b")
    assert check_choice("all", ("all", "before"), name="count") == "all"
    with pytest.raises(OptionError, match="did you mean 'before'"):
        check_choice("befor", ("all", "before"), name="count")


def test_near_misses_of_any_suite_option_are_errors_other_keys_pass() -> None:
    from logic_consistency.options import SUITE_OPTIONS, TYPO_CUTOFF, reject_near_misses

    reject_near_misses(
        {"pretrained": "x", "dtype": "float32", "n_docs": 5, "max_images": 2}, ["max_items"], where="task 't'"
    )
    with pytest.raises(OptionError, match=r"task 't': unknown option 'n_doc'; did you mean 'n_docs'\?"):
        reject_near_misses({"n_doc": 5}, ["max_items"], where="task 't'")  # another family's option
    with pytest.raises(OptionError, match="did you mean 'max_digits'"):
        reject_near_misses(["max_digit"], ["max_digits", "n_docs"])
    assert "seed" in SUITE_OPTIONS and 0.8 < TYPO_CUTOFF < 0.9


def test_int_upper_bound_names_the_bound() -> None:
    assert check_int(10, name="n", maximum=10) == 10
    with pytest.raises(OptionError, match="n must be at most 10,000, got 1,000,000,000"):
        check_int(10**9, name="n", maximum=10_000)
