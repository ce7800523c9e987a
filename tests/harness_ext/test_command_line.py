"""``lm_eval``'s own command line, as the suite's hook reads it: an abbreviation of an option the suite reads,
a key given twice across repeated options or inside one JSON object, and ``--cache_requests`` (dill pickles)
end ``lm_eval`` with one line and exit status 2, before any model is built (issue 46)."""

from __future__ import annotations

import sys

import pytest

from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--metadat", "max_items=5"], "lm_eval: error: lm_eval --metadat: an abbreviation of --metadata"),
        (
            ["--metadata", "max_items=5", "--metadata", "max_items=6"],
            "lm_eval: error: lm_eval --metadata: key 'max_items' given twice",
        ),
        (["--cache_requests", "true"], "lm_eval: error: lm_eval --cache_requests true: lm-eval stores"),
        (
            ["--metadata", '{"max_items": 5, "max_items": 7}'],
            "lm_eval: error: lm_eval --metadata: key 'max_items' given twice",
        ),
    ],
    ids=["abbreviation", "repeated key", "cache_requests", "repeated key in one JSON object"],
)
def test_lm_eval_refuses_in_one_line_before_any_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    from lm_eval.__main__ import cli_evaluate

    monkeypatch.setattr(sys, "argv", ["lm_eval", "--model", "no-such-model", "--tasks", "t", *argv])
    with pytest.raises(SystemExit) as exit_status:
        cli_evaluate()  # the model name is unknown: reaching lm-eval would fail otherwise
    assert exit_status.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(expected), err[-3:]


def test_what_lm_eval_accepts_passes() -> None:
    """Full spellings, one key per option across repeats, bracketed commas, and ``--cache_requests delete``."""
    check_lm_eval_argv(
        [
            "run",
            "--model",
            "hf",
            "-a",
            "pretrained=x",
            "--model_args",
            "dtype=float32",
            "--gen_kwargs",
            'until=["a,b"]',
            "max_gen_toks=4",
            "--metadata",
            '{"max_items": 5}',
            "--metadata=seed=1",
            "--limit",
            "-1",
            "--cache_requests",
            "delete",
        ]
    )


@pytest.mark.parametrize(
    "flags",
    [["--apply_chat_template"], ["--apply_chat_template", "chatml"], ["--log_samples", "--fewshot_as_multiturn"]],
    ids=["chat template alone", "chat template named", "switches"],
)
def test_an_option_given_alone_passes(flags: list[str]) -> None:
    """An option that takes no value, or whose value is optional and left out (argparse hands the recorder
    the option's const, ``True``), is read as given without a value: the chat-judge and study commands."""
    check_lm_eval_argv(["--model", "lc-chat", *flags, "--model_args", "base_url=http://127.0.0.1:1", "--tasks", "t"])
