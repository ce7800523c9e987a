"""The one options module: errors name source and key, unknown keys suggest the closest one; the
run options are declared once, in the families' ``_options_yaml``, and checked against them."""

from __future__ import annotations

from pathlib import Path

import pytest

from logic_consistency.options import (
    OPTIONS_FILE,
    SUITE_OPTIONS,
    Choices,
    Declared,
    Interval,
    OfType,
    OptionError,
    OptionTypeError,
    check_option,
    check_value,
    closest,
    collect_options,
    declared_options,
    load_option_file,
    read_option,
    reject_unknown,
)
from logic_consistency.tasks.data.seed import DEFAULT_SEED, check_seed


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
        Interval(int).check(bad, label="n", where="where")
    assert isinstance(error.value, ValueError) and isinstance(error.value, TypeError)


def test_int_bounds_and_none() -> None:
    assert check_value(None, Declared("n", int, None, "a count", minimum=5, nullable=True)) is None
    assert Interval(int, 5).check(5, label="n", where=None) == 5
    with pytest.raises(OptionError, match="n must be at least 2, got 1"):
        Interval(int, 2).check(1, label="n", where=None)


def test_seed_bool_choice() -> None:
    assert check_seed(DEFAULT_SEED) == 1234
    with pytest.raises(OptionError, match="seed must be at least 0"):
        check_seed(-1)
    assert OfType(bool).check(False, label="b", where=None) is False
    with pytest.raises(OptionTypeError, match="b must be true or false, got 'false'"):
        OfType(bool).check("false", label="b", where=None)
    assert Choices(("all", "before")).check("all", label="count", where=None) == "all"
    with pytest.raises(OptionError, match="did you mean 'before'"):
        Choices(("all", "before")).check("befor", label="count", where=None)


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
    assert Interval(int, None, 10).check(10, label="n", where=None) == 10
    with pytest.raises(OptionError, match="n must be at most 10,000, got 1,000,000,000"):
        Interval(int, None, 10_000).check(10**9, label="n", where=None)


# ----------------------------------------------------------------------------- declarations
def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_options_module_names_no_declared_option() -> None:
    """``options.py`` reads the declarations and spells out none of their names (``seed`` lives with its
    declaration, ``tasks/data/seed.py``)."""
    import ast

    import logic_consistency.options as options

    tree = ast.parse(Path(options.__file__).read_text(encoding="utf-8"))
    named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert named & set(declared_options()) == set()
    assert declared_options()["seed"].default == DEFAULT_SEED


def test_suite_options_are_the_declared_options_each_declared_once() -> None:
    assert frozenset(declared_options()) == SUITE_OPTIONS
    # the 22 of before the declarations moved to the families, instance_split and generator_shots, and the
    # invariance family's 7 (transform, max_variants, referring_options, invariance_mode, mcf_format,
    # ask_incorrect, self_validate)
    assert len(SUITE_OPTIONS) == 31


def test_a_malformed_declaration_names_the_file_and_the_option(tmp_path: Path) -> None:
    good = "options:\n  width:\n    type: integer\n    minimum: 1\n    default: 3\n    meaning: how wide\n"
    assert [arg.name for arg in load_option_file(_write(tmp_path / "a" / OPTIONS_FILE, good))] == ["width"]
    for text, message in [
        ("widths: {}\n", "expected one key 'options'"),
        ("options:\n  width: {type: integer, default: 3}\n", r"option 'width': 'meaning' is a required property"),
        ("options:\n  width: {type: int, default: 3, meaning: m}\n", "option 'width', key 'type'"),
        ("options:\n  width: {type: integer, default: 3, meaning: m, colour: red}\n", "colour"),
        ("options:\n  width: {type: integer, minimum: 5, default: 3, meaning: m}\n", "its default does not pass"),
        ("options:\n  k: {type: string, choices: [a, b], maximum: 2, default: a, meaning: m}\n", "option 'k'"),
    ]:
        with pytest.raises(OptionError, match=message):
            load_option_file(_write(tmp_path / "b" / OPTIONS_FILE, text))
    twice = _write(tmp_path / "c" / OPTIONS_FILE, good)
    with pytest.raises(OptionError, match=r"option 'width' is already declared in .*a"):
        collect_options([tmp_path / "a" / OPTIONS_FILE, twice])


def test_declared_values_are_checked_with_the_suite_messages() -> None:
    assert check_option("ks", [3, 4]) == (3, 4)
    with pytest.raises(OptionError, match=r"task 't': metadata.ks must be a non-empty list of integers >= 3"):
        check_option("ks", [2], label="metadata.ks", where="task 't'")
    with pytest.raises(OptionTypeError, match="ks must be a list of integers"):
        check_option("ks", "35")
    assert check_option("pairs_prob_gap", 0) == 0.0
    with pytest.raises(OptionTypeError, match=r"pairs_prob_gap must be a number in \[0, 0.5\]"):
        check_option("pairs_prob_gap", "0.1")
    with pytest.raises(OptionError, match=r"pairs_prob_gap must be in \[0, 0.5\], got nan"):
        check_option("pairs_prob_gap", float("nan"))
    with pytest.raises(OptionError, match="n_docs must be at most 100,000"):
        check_option("n_docs", 10**6)
    assert check_option("n_docs", None) is None
    with pytest.raises(OptionTypeError, match="n_docs must be an integer, got None"):
        check_option("n_docs", None, nullable=False)
    with pytest.raises(OptionError, match="max_items must be at least 5, got 4"):
        check_option("max_items", 4, minimum=5)
    with pytest.raises(OptionError, match="aspect must be one of .* did you mean 'coherence'"):
        check_option("aspect", "coherance")
    assert read_option({}, "pairs_runs") == 100 and read_option({"seed": 7}, "seed") == 7
