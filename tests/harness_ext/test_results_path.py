"""An ``--output_path`` whose results file the file system cannot hold is refused before the run,
naming it (lm-eval only logged "Could not save results aggregated" at the end and exited 0)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from lm_eval.loggers import EvaluationTracker

from logic_consistency.harness_ext.publish.results_path import check_results_path
from logic_consistency.options import OptionError

LONG = "x" * 5000


def test_a_5000_character_output_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"--output_path 'xxx.*\(5000 characters\).*longer than the 255 bytes"):
        check_results_path(LONG)
    deep = "/".join(["d" * 200] * 25)  # every name fits; the whole path does not
    with pytest.raises(OptionError, match=r"--output_path .*a path longer than the 4095 bytes"):
        check_results_path(tmp_path / deep)


def test_the_file_names_lm_eval_derives_are_checked(tmp_path: Path) -> None:
    stem = "r" * 240  # fits, but results_<stamp> is added: <stem>_2026-...json does not
    with pytest.raises(OptionError, match="--output_path"):
        check_results_path(tmp_path / f"{stem}.json")
    check_results_path(tmp_path / f"{stem}")  # a folder of that name holds m/results_<stamp>.json
    task = "t" * 220  # its samples file name does not fit
    check_results_path(tmp_path / "out", tasks=[task])
    with pytest.raises(OptionError, match="samples_ttt"):
        check_results_path(tmp_path / "out", tasks=[task], log_samples=True)


def test_a_path_that_fits_passes(tmp_path: Path) -> None:
    check_results_path(tmp_path / "out" / "run", tasks=["logic_consistency_summeval"], log_samples=True)
    check_results_path(None)


def test_simple_evaluate_refuses_it_before_the_model_is_built() -> None:
    from lm_eval import evaluator  # the autoload hook's wrapper checks it first

    with pytest.raises(OptionError, match="--output_path"):
        evaluator.simple_evaluate(
            model="no-such-model",  # never built: the check comes first
            tasks=["logic_consistency_summeval"],
            evaluation_tracker=EvaluationTracker(output_path=LONG),
        )


def test_lm_eval_exits_2_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from lm_eval.__main__ import cli_evaluate

    argv: list[Any] = ["lm_eval", "--model", "dummy", "--tasks", "logic_consistency_summeval", "--limit", "1"]
    monkeypatch.setattr(sys, "argv", [*argv, "--output_path", str(tmp_path / LONG), "--log_samples"])
    with pytest.raises(SystemExit) as exit_status:
        cli_evaluate()
    assert exit_status.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("lm_eval: error: --output_path") and "choose a shorter path" in last, last
