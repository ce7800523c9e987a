"""A task file lm-eval cannot use names the file, not "Tasks not found: NAME" or ``KeyError: None``:
an ``--include_path`` YAML that does not parse or includes a missing file, and an unknown metric."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lm_eval import evaluator
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.task.check_task import (
    TaskFileError,
    explain_unreadable_task_files,
    unreadable_task_files,
)

LOADER = "import datasets\n\ndef load(**kwargs):\n    return datasets.DatasetDict({'test': datasets.Dataset.from_list([{'q': 'x'}])})\n"
METRIC_TASK = """\
task: my_metric
custom_dataset: !function utils.load
output_type: multiple_choice
doc_to_text: "{{q}}"
doc_to_target: 0
doc_to_choice: ["a", "b"]
test_split: test
metric_list:
  - metric: acc_typo
"""


def _folder(tmp: Path, name: str, text: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    (folder / "utils.py").write_text(LOADER, encoding="utf-8")
    return folder


def test_lm_eval_names_the_yaml_file_that_does_not_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lm_eval.__main__ import cli_evaluate

    folder = _folder(tmp_path, "bad", "task: my_bad\ndataset_path: foo\n  output_type: [multiple_choice\n")
    argv = ["lm_eval", "--model", "dummy", "--tasks", "my_bad", "--include_path", str(folder), "--limit", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit_status:
        cli_evaluate()
    assert exit_status.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("lm_eval: error: Tasks not found: my_bad;"), last
    assert f"{folder / 'bad.yaml'} line 3 column 14: malformed YAML" in last


def test_an_include_of_a_missing_file_is_named(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "inc", "include: _missing_base.yaml\ntask: my_inc\n")
    line = explain_unreadable_task_files(ValueError("Tasks not found: my_inc"), ["--include_path", str(folder)])
    assert line is not None and "inc.yaml line 1: key 'include': '_missing_base.yaml' names no file" in line
    assert explain_unreadable_task_files(ValueError("Tasks not found: my_inc"), [f"--include_path={folder}"]) == line
    assert explain_unreadable_task_files(ValueError("other"), ["--include_path", str(folder)]) is None
    assert unreadable_task_files([str(_folder(tmp_path, "good", "task: my_good\n"))]) == []


def test_an_unknown_metric_names_the_file_and_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path, "metric", METRIC_TASK)
    monkeypatch.chdir(folder)  # !function utils.load is imported from the task's folder
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    with pytest.raises(TaskFileError) as error:
        evaluator.simple_evaluate(model="dummy", tasks=["my_metric"], task_manager=manager, limit=1)
    message = str(error.value)
    assert "metric.yaml line 9: key 'metric_list[0].metric': 'acc_typo' is not a metric lm-eval registers" in message
    assert isinstance(error.value.__cause__, KeyError)  # lm-eval's own error stays above it
