"""Every declaration, checked from its declaration (as scikit-learn's common tests build invalid
parameters from ``Interval`` and ``StrOptions``): invalid values are generated from each constraint
and must be refused, through the real entry points, with a message naming the option and its source.

Entry points: a task option through ``check_option`` (what the tasks call), a backend argument
through ``check_declared`` (what each backend's constructor calls), a command-line flag through
``logic-consistency``'s own parser and ``main`` (text, typed once by argparse, then checked).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.cli import app
from logic_consistency.cli.options import declarations, markdown_table
from logic_consistency.harness_ext.backends.registry import backends
from logic_consistency.harness_ext.models.args import check_declared
from logic_consistency.leaderboard.run.placement import check_shards
from logic_consistency.options import (
    Choices,
    Declared,
    Interval,
    OfType,
    OptionError,
    OptionTypeError,
    check_flag,
    check_option,
    check_value,
    declared_flags,
    declared_options,
    parse_text,
)
from logic_consistency.tasks.improve_recipes import recipes

ROOT = Path(__file__).resolve().parents[1]


def invalid_values(arg: Declared) -> list[Any]:
    """Values ``arg``'s constraint refuses: wrong types (a bool for an integer, text for a number, an
    integral float for an integer), the nearest value out of each bound, an unknown choice, and
    ``None`` unless the declaration is nullable."""
    constraint = arg.constraint
    if isinstance(constraint, Choices):
        out: list[Any] = [f"{constraint.values[0]}x", "no-such-choice", 1, True]
    elif isinstance(constraint, OfType):
        out = {bool: ["true", 1, 0.5], str: [5, True, ["x"]], Path: [5, True, ""]}[constraint.kind]
    elif constraint.kind is list:
        out = ["35", [], [True], 3, [2.0]]
        out += [] if constraint.minimum is None else [[int(constraint.minimum) - 1]]
        out += [] if constraint.maximum is None else [[int(constraint.maximum) + 1]]
    else:
        integer = constraint.kind is int
        out = ["7", True, [7], *([2.5, 3.0] if integer else [math.nan, math.inf, -math.inf])]
        step = 0 if constraint.exclusive else 1 if integer else 0.5  # an open bound: the bound itself
        out += [] if constraint.minimum is None else [constraint.minimum - step]
        out += [] if constraint.maximum is None else [constraint.maximum + step]
    return out if arg.nullable else [*out, None]


def _cases(rows: list[tuple[str, Declared]]) -> list[Any]:
    return [
        pytest.param(where, arg, bad, id=f"{where}:{arg.name}={bad!r}")
        for where, arg in rows
        for bad in invalid_values(arg)
    ]


BACKEND_ARGS = {name: backend.args for name, backend in backends().items()}
BACKEND_ROWS = [(backend, arg) for backend, spec in BACKEND_ARGS.items() for arg in spec.declared]


def test_every_declaration_has_invalid_values_and_its_default_passes() -> None:
    rows = declarations()
    assert {arg.applies for _, arg in rows} == {"task option", "backend argument", "command-line flag"}
    for _, arg in rows:
        assert len(invalid_values(arg)) >= 3, arg.name
        if arg.default is not None:
            check_value(arg.default, arg)


@pytest.mark.parametrize(("where", "arg", "bad"), _cases([("task 't'", a) for a in declared_options().values()]))
def test_a_task_option_refuses_each_invalid_value_naming_it(where: str, arg: Declared, bad: Any) -> None:
    with pytest.raises(OptionError) as raised:
        check_option(arg.name, bad, label=f"metadata.{arg.name}", where=where)
    assert str(raised.value).startswith(f"task 't': metadata.{arg.name} must be "), raised.value


@pytest.mark.parametrize(("where", "arg", "bad"), _cases(BACKEND_ROWS))
def test_a_backend_argument_refuses_each_invalid_value_naming_it(where: str, arg: Declared, bad: Any) -> None:
    with pytest.raises(OptionError) as raised:
        check_declared({arg.name: bad}, BACKEND_ARGS[where])
    assert str(raised.value).startswith(f"{where} --model_args: {arg.name} must be "), raised.value


@pytest.mark.parametrize(
    ("where", "arg", "bad"),
    _cases([(name, arg) for name, recipe in recipes().items() for arg in recipe.training.declaration.declared]),
)
def test_a_training_hyperparameter_refuses_each_invalid_value_naming_it(where: str, arg: Declared, bad: Any) -> None:
    with pytest.raises(OptionError) as raised:
        check_declared({arg.name: bad}, recipes()[where].training.declaration)
    assert str(raised.value).startswith(f"improve {where} --train-args: {arg.name} must be "), raised.value


@pytest.mark.parametrize(("where", "arg", "bad"), _cases([("flag", a) for a in declared_flags().values()]))
def test_a_flag_refuses_each_invalid_value_naming_it(where: str, arg: Declared, bad: Any) -> None:
    flag = "--" + arg.name.replace("_", "-")
    with pytest.raises(OptionError, match=f"^{re.escape(flag)} must be "):
        check_flag(arg.name, bad)


#: Each declared flag on its commands: the arguments before it (``plan`` checks its flags first).
FLAG_COMMANDS: dict[str, list[list[str]]] = {
    "shards": [["plan", "--tasks", "x"], ["leaderboard", "build", "--out", "{tmp}"]],
    "price_in": [["plan", "--tasks", "x"]],
    "price_out": [["plan", "--tasks", "x"]],
    "limit": [["plan", "--tasks", "x"], ["leaderboard", "build", "--out", "{tmp}"]],
    "confidence": [["leaderboard", "ingest", "{tmp}", "--out", "{tmp}"]],
    "n_resamples": [["leaderboard", "ingest", "{tmp}", "--out", "{tmp}"]],
    "bootstrap_seed": [["leaderboard", "ingest", "{tmp}", "--out", "{tmp}"]],
    "retries": [["leaderboard", "build", "--out", "{tmp}", "--executor", "ray"]],
    "gpus_per_row": [["improve", "repair", "--base", "x", "--out", "{tmp}", "--executor", "ray"]],
    "min_examples": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
    "rounds": [["improve", "gv", "--base", "x", "--out", "{tmp}"]],
    "selftrain_rounds": [["improve", "gv", "--base", "x", "--out", "{tmp}"]],
    "flip": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
    "rebuild_mismatched": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
    "max_steps": [
        ["improve", "repair", "--base", "x", "--out", "{tmp}"],
        ["improve", "gv", "--base", "x", "--out", "{tmp}"],
    ],
    "timeout": [["leaderboard", "build", "--out", "{tmp}"]],
    "apply_chat_template": [],  # a model list's only (test_model_list_settings_are_checked_by_their_declarations)
    "enabled": [],
    "public_endpoint": [],  # a model list's only
    "method": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
    "eval_backend": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
    "downsample_to": [["improve", "repair", "--base", "x", "--out", "{tmp}"]],
}


def _texts(arg: Declared) -> list[str]:
    """Invalid command-line text for ``arg``: what does not parse as its type, and each bound's neighbour
    (none for a switch, which takes no text: argparse refuses ``--switch=x`` itself; for a choice: a near
    miss and another word)."""
    if isinstance(arg.constraint, OfType) and arg.constraint.kind is bool:
        return []
    if isinstance(arg.constraint, Choices):
        return [f"{arg.constraint.values[-1]}x", "no-such-choice"]
    assert isinstance(arg.constraint, Interval)  # every other flag declared today is a number
    texts = ["x", "true", "2.5"] if arg.kind is int else ["x", "nan", "inf"]
    step = 0 if arg.exclusive else 1 if arg.kind is int else 0.5
    texts += [] if arg.minimum is None else [f"{arg.minimum - step:g}"]
    return texts + ([] if arg.maximum is None else [f"{arg.maximum + step:g}"])


def test_every_flag_is_on_a_command() -> None:
    assert set(FLAG_COMMANDS) == set(declared_flags())


@pytest.mark.parametrize(
    ("name", "before", "text"),
    [
        (name, before, text)
        for name, commands in FLAG_COMMANDS.items()
        for before in commands
        for text in _texts(declared_flags()[name])
    ],
)
def test_a_flag_on_the_command_line_is_refused_in_one_line_naming_it(
    name: str, before: list[str], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flag = "--" + name.replace("_", "-")
    argv = [part.replace("{tmp}", str(tmp_path)) for part in before] + [f"{flag}={text}"]
    try:
        status = app.main(argv)
    except SystemExit as exit:  # argparse: the text is not of the flag's type
        status = int(exit.code or 0)
    err = capsys.readouterr().err
    assert status == 2, err
    assert re.search(rf"(argument {flag}: invalid (int|float) value|'?{name}'? must be|{flag} must be)", err), err


def test_the_same_input_gets_the_same_verdict_everywhere() -> None:
    """The issue's case: ``check_declared`` used to turn ``"5"`` into 5 where ``check_option`` refused it."""
    integer_option = declared_options()["pairs_runs"]
    max_tokens = next(arg for arg in BACKEND_ARGS["lc-chat"].declared if arg.name == "max_tokens")
    for value in ("5", 5.0, True, None):
        verdicts = []
        for check in (
            lambda v: check_option("pairs_runs", v),
            lambda v: check_declared({"max_tokens": v}, BACKEND_ARGS["lc-chat"]),
            lambda v: check_flag("shards", v),
            lambda v: check_shards(v, "models.yaml"),
            lambda v: check_value(v, integer_option),
            lambda v: check_value(v, max_tokens),
        ):
            with pytest.raises(OptionTypeError):
                check(value)
            verdicts.append("refused")
        assert len(verdicts) == 6
    assert check_option("pairs_runs", 5) == check_flag("shards", 5) == check_shards(5, "m") == 5
    assert check_declared({"max_tokens": 5}, BACKEND_ARGS["lc-chat"]) == {"max_tokens": 5}


def test_text_is_typed_once_by_its_declaration_then_checked_the_same_way() -> None:
    shards = declared_flags()["shards"]
    assert parse_text("5", shards) == 5 and parse_text(" 256 ", shards) == 256
    for text, error in (("5.0", OptionTypeError), ("true", OptionTypeError), ("257", OptionError), ("0", OptionError)):
        with pytest.raises(error, match="shards must be"):
            parse_text(text, shards)
    assert parse_text("null", declared_options()["max_items"]) is None
    assert parse_text("3,5", declared_options()["ks"]) == (3, 5)
    assert parse_text("false", declared_options()["calibrated"]) is False
    assert check_declared({"max_tokens": "5"}, BACKEND_ARGS["lc-chat"], text=True) == {"max_tokens": 5}


def test_the_shards_bounds_are_one_declaration() -> None:
    """``plan --shards``, ``leaderboard build --shards`` and a model list's ``shards``: [1, 256]."""
    for check in (lambda v: check_flag("shards", v), lambda v: check_shards(v, "models.yaml")):
        assert check(1) == 1 and check(256) == 256
        for bad in (0, 257):
            with pytest.raises(OptionError, match="shards'? must be at (least 1|most 256)"):
                check(bad)


def test_docs_running_holds_the_generated_table() -> None:
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    start = text.index("<!-- options table: generated by `logic-consistency options --markdown` -->\n")
    end = text.index("\n<!-- end of options table -->")
    copy = text[start:end].split("\n", 1)[1]
    assert copy == markdown_table(), "docs/running.md: paste `logic-consistency options --markdown` between the markers"


@pytest.mark.parametrize("name", ["limit", "timeout", "apply_chat_template", "enabled", "shards", "public_endpoint"])
def test_model_list_settings_are_checked_by_their_declarations(name: str, tmp_path: Path) -> None:
    """A model list's settings go through the same declarations as the flags (issue 39, item 5)."""
    from logic_consistency.leaderboard.run.modellist import load_model_list

    for bad in invalid_values(declared_flags()[name]):
        if bad is None:
            continue  # null: the list's default (every setting here may be left out)
        listed = tmp_path / "models.yaml"
        listed.write_text(json.dumps({"models": [{"name": "m", "model": "dummy", name: bad}]}), encoding="utf-8")
        with pytest.raises(OptionError, match=rf"models\.yaml: models\[0\] \(m\): '{name}' must be"):
            load_model_list(listed)


def test_model_list_metadata_values_are_checked_by_their_declarations(tmp_path: Path) -> None:
    from logic_consistency.leaderboard.run.modellist import load_model_list

    listed = tmp_path / "models.yaml"
    listed.write_text(json.dumps({"models": [{"name": "m", "model": "dummy", "metadata": {"max_items": 1}}]}))
    with pytest.raises(OptionError, match=r"models\[0\] \(m\).*metadata\.max_items must be"):
        load_model_list(listed)
