"""A fourth pairwise dataset added with YAML and a loader function only (no edit of the suite).

The test writes, into a temporary folder, what a user would write: ``tinyset.yaml`` including the
shipped ``_pairwise_yaml`` and a ``utils.py`` with a loader that takes only its own keyword
(``path``, from ``dataset_kwargs``), knows nothing of ``max_items`` or ``seed``, and reads a tiny
fixture. The task class applies the item cap, validates options and loader keywords before loading,
and the template's tag makes the task a member of ``logic_consistency_pairwise``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager
from tiny_pairwise_judge import Judge

from logic_consistency.common import select_item_indices
from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.data import DATA_ENV_VAR

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "data" / "tiny_pairwise" / "instances.jsonl"

LOADER = """
import json
import datasets

def load_tiny(path):
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            rows.append({"instance_id": record["id"], "context": record["question"],
                         "items": record["candidates"], "item_ids": [str(k) for k in range(len(record["candidates"]))],
                         "human_scores": [float(s) for s in record["scores"]]})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
"""


def _write_task(folder: Path, dataset_kwargs: str = f"path: {FIXTURE}") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "utils.py").write_text(LOADER, encoding="utf-8")
    (folder / "tinyset.yaml").write_text(
        textwrap.dedent(f"""\
        include: {tasks_dir() / "pairwise" / "_pairwise_yaml"}
        task: logic_consistency_tinyset
        custom_dataset: !function utils.load_tiny
        dataset_kwargs:
          {dataset_kwargs}
        prompts:
          normal: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is larger? {{{{ answer_instruction }}}}"
          negated: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is smaller? {{{{ answer_instruction }}}}"
        """),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(autouse=True)
def no_dataset_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)


def test_new_dataset_runs_with_yaml_and_loader_only(tmp_path: Path) -> None:
    folder = _write_task(tmp_path / "tinyset")
    manager = TaskManager(
        include_path=str(folder), include_defaults=False, metadata={"max_items": 4, "ks": [3, 4], "seed": 5}
    )
    results = simple_evaluate(
        model=Judge(), tasks=["logic_consistency_tinyset"], task_manager=manager, log_samples=True
    )
    scores = {
        k.split(",")[0]: v for k, v in results["results"]["logic_consistency_tinyset"].items() if k.endswith(",none")
    }
    for name in ("s_tran_3", "s_tran_4", "s_comm", "s_neg", "human_agreement"):
        assert scores[name] == pytest.approx(1.0), name
    # the cap is the task's: a seeded subset of 4 of the 6 items of tiny-0, aligned across fields
    doc = results["samples"]["logic_consistency_tinyset"][0]["doc"]
    keep = select_item_indices(6, 4, 5, "tiny-0")
    assert doc["items"] == [["item-4", "item-9", "item-1", "item-7", "item-3", "item-6"][k] for k in keep]
    assert doc["human_scores"] == [[4.0, 9.0, 1.0, 7.0, 3.0, 6.0][k] for k in keep]
    assert doc["item_ids"] == [str(k) for k in keep]


def test_template_tag_puts_the_new_dataset_in_the_pairwise_group(tmp_path: Path) -> None:
    folder = _write_task(tmp_path / "tinyset")
    manager = TaskManager(include_path=[str(tasks_dir()), str(folder)], include_defaults=False)
    assert "logic_consistency_tinyset" in manager._index["logic_consistency_pairwise_tasks"].tags


def test_unknown_loader_keyword_fails_before_loading_and_suggests(tmp_path: Path) -> None:
    folder = _write_task(tmp_path / "tinyset", dataset_kwargs="pth: /nowhere.jsonl")
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    with pytest.raises(
        ValueError, match=r"logic_consistency_tinyset.*dataset_kwargs.*pth.*did you mean .pth. -> .path."
    ):
        manager.load("logic_consistency_tinyset")


def test_bad_option_fails_before_loading(tmp_path: Path) -> None:
    # the loader's file does not exist: a ValueError about the option proves nothing was loaded
    folder = _write_task(tmp_path / "tinyset", dataset_kwargs="path: /nowhere.jsonl")
    manager = TaskManager(include_path=str(folder), include_defaults=False, metadata={"max_items": 2})
    with pytest.raises(ValueError, match=r"logic_consistency_tinyset.*max_items"):
        manager.load("logic_consistency_tinyset")
