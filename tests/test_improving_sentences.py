"""The fine-tuning pages' sentences about ``--tasks``, ``--train-data``, GPUs and rounds say what the code does.

Each test reads the behaviour from the code (the parser, the fit check, the device check, the study's
units) and the sentence from the page, so a change to either shows here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _page(name: str) -> str:
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_tasks_replaces_the_default_study_task() -> None:
    from logic_consistency.cli import build_parser
    from logic_consistency.tasks.gv.improve_options import GVStudyOptions
    from logic_consistency.tasks.gv.improve_report import PAPER_TASK

    argv = ["improve", "gv", "--base", "b", "--out", "o", "--tasks", "logic_consistency_gv_triviaqa"]
    assert build_parser().parse_args(argv).tasks == "logic_consistency_gv_triviaqa"  # the default is not added
    assert GVStudyOptions.__dataclass_fields__["tasks"].default == PAPER_TASK
    assert "`--tasks` names the study's tasks instead (it replaces the default, arithmetic)" in _page("reproducing.md")
    assert "`--tasks` adds" not in _page("reproducing.md") + _page("improving.md")


def test_external_training_data_fits_the_tasks_the_page_names() -> None:
    from logic_consistency.harness_ext.training.trainer import TrainingError
    from logic_consistency.tasks.pairwise.improve_data import check_train_data_fits, parse_train_data

    for data, task in (("summarize_feedback", "logic_consistency_summeval"), ("msmarco", "logic_consistency_msmarco")):
        check_train_data_fits(parse_train_data(data), task)
    check_train_data_fits(parse_train_data("msmarco"), "logic_consistency_noveleval")  # MS MARCO's comparison
    with pytest.raises(TrainingError, match="--tasks logic_consistency_msmarco"):
        check_train_data_fits(parse_train_data("msmarco"), "logic_consistency_caters")
    page = _page("improving.md")
    assert "fit `logic_consistency_summeval` and `logic_consistency_msmarco`; NovelEval's tasks" in page


def test_no_page_advises_a_batch_over_several_gpus() -> None:
    from logic_consistency.harness_ext.training import devices

    assert "make one GPU visible" in (Path(devices.__file__).read_text(encoding="utf-8"))  # several are refused
    for name in ("improving.md", "reproducing.md", "running.md"):
        assert "on 8 GPUs" not in _page(name) and "8 / N" not in _page(name)
    assert "one visible GPU (`harness_ext/training/devices.py` refuses several" in _page("improving.md")
