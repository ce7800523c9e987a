"""A new GV dataset with ONE YAML file and no Python (issue 55, item 5): lm-eval's ``dataset_path`` /
``dataset_kwargs`` load a JSONL file, ``fields:`` maps its question and answers onto the GV row schema
(``tasks/data/fields.py`` ``GV_QA``), and ``gv/_qa_yaml`` gives Li et al.'s question-answering design.
``check-task`` accepts it and names a bad row's file and field; a scripted model scores it as designed
through lm-eval's evaluator; ``lm_eval --include_path`` runs it on the embedded SmolLM2."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import gv_fake_models as fakes  # loaded by tests/tasks/gv/conftest.py
import pytest
from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.check_task import TaskFileError, check_task
from logic_consistency.tasks.data import DATA_ENV_VAR

BIN = Path(sys.executable).parent
ROWS = [
    {"qid": "q1", "q": "What is the capital of France?", "gold": ["Paris"]},
    {"qid": "q2", "q": "Which planet is known as the Red Planet?", "gold": ["Mars", "planet Mars"]},
    {"qid": "q3", "q": "How many legs does a spider have?", "gold": ["eight", "8"]},
]
FIELDS = "{instance_id: qid, question: q, answers: gold}"


def _write(folder: Path, rows: list[dict[str, Any]] = ROWS, fields: str = FIELDS, design: str = "_qa_yaml") -> Path:
    """The data and the one file a user writes: no ``utils.py``, no ``custom_dataset``."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "qa.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    path = folder / "my_gv_qa.yaml"
    path.write_text(
        f"include: {tasks_dir() / 'gv' / design}\n"
        "task: my_gv_qa\n"
        "dataset_path: json\n"
        f"dataset_kwargs: {{data_files: {{test: {data}}}}}\n"
        f"fields: {fields}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_check_task_accepts_it_and_names_the_file_and_field_of_a_bad_row(tmp_path: Path) -> None:
    checked = check_task(_write(tmp_path / "good"))
    assert checked["task"] == "my_gv_qa" and checked["docs"] == len(ROWS)
    one_answer = [{**row, "gold": row["gold"][0]} for row in ROWS]  # one text column: a one-answer list
    assert check_task(_write(tmp_path / "one", rows=one_answer))["docs"] == len(ROWS)
    csv = tmp_path / "csv"
    csv.mkdir()
    (csv / "qa.csv").write_text(
        "qid,q,gold\nq1,How many legs does a spider have?,8\nq2,How many sides does a hexagon have?,6\n"
    )
    path = _write(csv)
    path.write_text(path.read_text().replace("dataset_path: json", "dataset_path: csv").replace(".jsonl", ".csv"))
    assert check_task(path)["docs"] == 2  # a CSV column of one answer each (integers here, read as text)
    cases: dict[str, tuple[list[dict[str, Any]], str, str]] = {
        "key": (ROWS, FIELDS.replace("question:", "questoin:"), r"unknown field\(s\) \['questoin'\].*'question'"),
        "column": (ROWS, FIELDS.replace("gold", "golds"), r"field 'answers' is missing.*'golds'.*did you mean 'gold'"),
        "no answer": ([*ROWS[:2], {**ROWS[2], "gold": []}], FIELDS, r"row 3: field 'answers' has 0 values"),
        "blank question": ([{**ROWS[0], "q": " "}, *ROWS[1:]], FIELDS, r"row 1: field 'question' is empty"),
        "repeated id": ([*ROWS, {**ROWS[0], "q": "Again?"}], FIELDS, r"row 4: field 'instance_id'.*'q1' repeats row 1"),
    }
    for name, (rows, fields, message) in cases.items():
        path = _write(tmp_path / name.replace(" ", "_"), rows=rows, fields=fields)
        with pytest.raises(TaskFileError, match=message) as error:
            check_task(path)
        if name not in ("key",):  # a row's error names the data file (the YAML's is named by check-task)
            assert str(path.parent / "qa.jsonl") in str(error.value), name


def _answer(prompt: str, *, right: bool) -> str:
    """The scripted model's answers: the first gold answer and a misleading one ("Wrongtown")."""
    row = next(row for row in ROWS if row["q"] in prompt)
    return row["gold"][0] if right else fakes.WRONG_ANSWER


def _generate(prompt: str) -> str:
    return f" {_answer(prompt, right=True)} || {_answer(prompt, right=False)}"


def _score(context: str, continuation: str) -> float:
    """Prefers the option (A/B) or the verdict (True/False) that is right for what the validator shows."""
    right = _answer(context, right=True)
    if "Answer (A or B):" in context:
        shown_a = re.search(r"\nA: (.*)\n", context)
        wanted = "A" if shown_a is not None and shown_a.group(1) == right else "B"
    else:
        wanted = "True" if f"Answer: {right}\n" in context else "False"
    return -0.1 if continuation.strip() == wanted else -5.0


@pytest.mark.parametrize("design", ["_qa_yaml", "_qa_true_false_yaml"])
def test_a_scripted_honest_model_is_consistent_and_right(design: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "mine", design=design)
    manager = TaskManager(include_path=str(path.parent), include_defaults=False)
    results = simple_evaluate(model=fakes.ScriptedLM(_generate, _score), tasks=["my_gv_qa"], task_manager=manager)
    scores = results["results"]["my_gv_qa"]
    for metric in ("gv_consistency", "generator_accuracy", "validator_accuracy"):
        assert scores[f"{metric},none"] == 1.0, metric
    assert scores["unparseable_generator,none"] == 0 and scores["gv_left_out,none"] == 0


@pytest.mark.slow  # starts check-task and lm_eval with the embedded model (about 45 s on 2 shared cores)
def test_check_task_and_lm_eval_run_it_on_the_embedded_model(tmp_path: Path) -> None:
    path = _write(tmp_path / "mytasks")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env.pop(DATA_ENV_VAR, None)
    check = children.run(
        [shutil.which("logic-consistency", path=str(BIN)) or "logic-consistency", "check-task", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert check.returncode == 0 and "'my_gv_qa' is valid" in check.stdout, check.stderr[-2000:]
    out = tmp_path / "results"
    command = [shutil.which("lm_eval", path=str(BIN)) or "lm_eval", "--model", "lc-embedded", "--tasks", "my_gv_qa"]
    command += ["--include_path", str(path.parent), "--limit", "2", "--output_path", str(out)]
    run = children.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    (results_file,) = out.glob("*/results_*.json")
    scores = json.loads(results_file.read_text())["results"]["my_gv_qa"]
    parsed = 2 - scores["unparseable_generator,none"] - scores["unparseable_validator,none"]
    assert scores["gv_left_out,none"] == pytest.approx(1 - parsed / 2)  # the unparseable ones are counted
    if parsed:  # GV consistency over the parsed documents; else undefined, and lm-eval leaves it out
        assert 0.0 <= scores["gv_consistency,none"] <= 1.0
    else:
        assert scores.get("gv_consistency,none") is None and scores["gv_consistency_strict,none"] == 0.0
