"""``logic-consistency check-task``: a valid task YAML is described (name, output type, documents),
a broken one is one line naming file, key and line with exit status 2. The error classes, one case
each, are rows of the bad-input table (``tests/bad_input_setup.py``); this file checks the command
around them: the valid tasks, the exit status, the printed line, and that ``lm_eval`` itself says
only "Tasks not found" where check-task names the cause."""

from __future__ import annotations

import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bad_input_setup import PAIRWISE, PLAIN, _task_folder  # noqa: E402

from logic_consistency.cli import main  # noqa: E402
from logic_consistency.harness_ext.task.check_task import check_task  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_a_valid_pairwise_task_is_described(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _task_folder(tmp_path, PAIRWISE)
    assert main(["check-task", str(path)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == f"{path}: task 'user_pairwise_task' is valid: output_type loglikelihood, 1 documents"


def test_a_valid_plain_lm_eval_task_and_a_shipped_fixture(tmp_path: Path) -> None:
    plain = check_task(_task_folder(tmp_path, PLAIN))
    assert (plain["task"], plain["output_type"], plain["docs"]) == ("user_plain_task", "loglikelihood", 1)
    toy = check_task(FIXTURES / "toy_pairwise.yaml")
    assert (toy["task"], toy["output_type"], toy["docs"]) == ("toy_pairwise", "loglikelihood", 2)
    assert "docs" not in check_task(FIXTURES / "toy_pairwise.yaml", load_data=False)


@pytest.mark.slow
def test_a_broken_task_is_one_line_with_status_2(tmp_path: Path) -> None:
    path = _task_folder(tmp_path, PLAIN.replace("task: user_plain_task\n", "task: user_plain_task\n  bad"))
    done = children.run(
        [str(BIN / "logic-consistency"), "check-task", str(path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"logic-consistency: error: {path} line 2 column ") and "malformed YAML" in lines[0]


@pytest.mark.slow
def test_lm_eval_alone_says_only_tasks_not_found(tmp_path: Path) -> None:
    """What check-task is for: lm-eval's own validator skips the file without a word on why."""
    path = _task_folder(tmp_path, "include: _missing_yaml\n" + PLAIN)
    done = children.run(
        [str(BIN / "lm_eval"), "validate", "--tasks", "user_plain_task", "--include_path", str(path.parent)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Tasks not found: user_plain_task" in done.stdout + done.stderr
    assert "_missing_yaml" not in done.stdout + done.stderr
