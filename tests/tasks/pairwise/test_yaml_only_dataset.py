"""A new pairwise dataset with ONE YAML file and no Python: lm-eval's ``dataset_path`` / ``dataset_kwargs``
load a JSONL (or CSV) fixture and ``fields:`` maps its columns onto the row schema
(``tasks/data/fields.py``); ``check-task`` names a missing or mistyped field before any model call."""

from __future__ import annotations

import glob
import json
import math
import os
import sys
import textwrap
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager
from tiny_pairwise_judge import Judge

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.check_task import TaskFileError, check_task
from logic_consistency.tasks.data import DATA_ENV_VAR

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "data" / "tiny_pairwise"
JSONL_FIELDS = "{instance_id: id, context: question, items: candidates, human_scores: scores}"
CSV_FIELDS = (
    "{instance_id: id, context: question, items: [first, second, third], "
    "human_scores: [score_first, score_second, score_third]}"
)


def _write_yaml(
    folder: Path, *, kind: str = "json", data: Path = FIXTURES / "instances.jsonl", fields: str = JSONL_FIELDS
) -> Path:
    """The one file a user writes: no ``utils.py``, no ``custom_dataset``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny_yaml.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        include: {tasks_dir() / "pairwise" / "_pairwise_yaml"}
        task: logic_consistency_tiny_yaml
        dataset_path: {kind}
        dataset_kwargs:
          data_files: {{test: {data}}}
        fields: {fields}
        prompts:
          normal: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is larger? {{{{ answer_instruction }}}}"
          negated: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is smaller? {{{{ answer_instruction }}}}"
        """),
        encoding="utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(
    ("kind", "data", "fields", "first_items"),
    [
        (
            "json",
            FIXTURES / "instances.jsonl",
            JSONL_FIELDS,
            ["item-4", "item-9", "item-1", "item-7", "item-3", "item-6"],
        ),
        ("csv", FIXTURES / "instances.csv", CSV_FIELDS, ["item-4", "item-9", "item-1"]),
    ],
)
def test_a_yaml_only_dataset_scores_as_a_loader_would(
    tmp_path: Path, kind: str, data: Path, fields: str, first_items: list[str]
) -> None:
    path = _write_yaml(tmp_path / "mine", kind=kind, data=data, fields=fields)
    assert [p.name for p in path.parent.iterdir()] == ["tiny_yaml.yaml"]
    manager = TaskManager(include_path=str(path.parent), include_defaults=False, metadata={"ks": [3]})
    results = simple_evaluate(
        model=Judge(), tasks=["logic_consistency_tiny_yaml"], task_manager=manager, log_samples=True
    )
    scores = results["results"]["logic_consistency_tiny_yaml"]
    for name in ("s_tran_3", "s_comm", "s_neg", "human_agreement"):
        assert scores[f"{name},none"] == pytest.approx(1.0), name  # the judge agrees with the mapped human scores
    doc = results["samples"]["logic_consistency_tiny_yaml"][0]["doc"]
    assert doc["instance_id"] in ("tiny-0", "csv-0") and doc["items"] == first_items
    assert doc["human_scores"] == [float(item.split("-")[1]) for item in first_items]  # CSV text cells read as numbers


def test_check_task_accepts_it_and_names_a_missing_or_mistyped_field(tmp_path: Path) -> None:
    checked = check_task(_write_yaml(tmp_path / "good"))
    assert checked["task"] == "logic_consistency_tiny_yaml" and checked["docs"] == 2
    cases = {
        "column": (
            JSONL_FIELDS.replace("candidates", "candidate"),
            r"field 'items' is missing: fields.items names column 'candidate'.*did you mean 'candidates'",
        ),
        "key": (
            JSONL_FIELDS.replace("context:", "contxt:"),
            r"fields: unknown field\(s\) \['contxt'\]; did you mean 'contxt' -> 'context'",
        ),
        "unmapped": (
            JSONL_FIELDS.replace("context: question, ", ""),
            r"field 'context' is missing: no column 'context'.*columns: \['id', 'question'",
        ),
        "type": (
            JSONL_FIELDS.replace("items: candidates", "items: question"),
            r"split 'test' row 1: field 'items' must be a list",
        ),
        "scores": (
            "{instance_id: id, context: question, items: candidates, human_scores: candidates}",
            r"field 'human_scores\[0\]' must be a number, got 'item-4'",
        ),
    }
    for name, (fields, message) in cases.items():
        with pytest.raises(TaskFileError, match=message):
            check_task(_write_yaml(tmp_path / name, fields=fields))


@pytest.mark.slow
def test_lm_eval_runs_it_with_the_dummy_model(tmp_path: Path) -> None:
    folder = _write_yaml(tmp_path / "mine").parent
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", "logic_consistency_tiny_yaml",
               "--include_path", str(folder), "--output_path", str(tmp_path / "results")]  # fmt: skip
    done = children.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = glob.glob(str(tmp_path / "results" / "**" / "results_*.json"), recursive=True)
    results = json.loads(Path(results_file).read_text(encoding="utf-8"))["results"]["logic_consistency_tiny_yaml"]
    for metric in ("s_tran_3,none", "s_comm,none", "s_neg,none", "human_agreement,none"):
        assert 0.0 <= results[metric] <= 1.0 and not math.isnan(results[metric]), metric


def test_field_map_reads_dotted_paths_and_gathers_columns() -> None:
    import datasets

    from logic_consistency.tasks.data.fields import PAIRWISE, check_field_map, map_fields

    rows = [{"meta": {"qid": 7, "text": "which?"}, "p1": "a", "p2": "b", "s1": "1.5", "s2": 2, "extra": "kept"}]
    fields = check_field_map(
        {"instance_id": "meta.qid", "context": "meta.text", "items": ["p1", "p2"], "human_scores": ["s1", "s2"]},
        PAIRWISE,
        where="task 'mine'",
    )
    (row,) = map_fields({"test": datasets.Dataset.from_list(rows)}, fields, PAIRWISE, where="mine")["test"]
    assert (row["instance_id"], row["context"], row["items"], row["human_scores"]) == (
        "7",
        "which?",
        ["a", "b"],
        [1.5, 2.0],
    )
    assert row["extra"] == "kept"  # every other column stays for the prompts
