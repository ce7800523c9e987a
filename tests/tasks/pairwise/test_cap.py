"""The task-side ``max_items`` cap gives the shipped datasets exactly the documents the loaders'
own cap gave (same seeded subsets, aligned fields), and the CaTeRS prompt lists exactly the kept
events, as the loader-built ``context`` did."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.data import DATA_ENV_VAR, caters, noveleval, summeval

FIXTURE_DATA = Path(__file__).resolve().parents[2] / "fixtures" / "data"
LOADERS = {"summeval": summeval.load, "noveleval": noveleval.load, "caters": caters.load}


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


@pytest.mark.parametrize("dataset", list(LOADERS))
@pytest.mark.parametrize("seed", [1234, 7])
def test_task_cap_equals_the_loader_cap(dataset: str, seed: int) -> None:
    manager = TaskManager(
        include_path=str(tasks_dir()), include_defaults=False, metadata={"max_items": 4, "ks": [3, 4], "seed": seed}
    )
    task = manager.load(f"logic_consistency_{dataset}")["tasks"][f"logic_consistency_{dataset}"]
    docs = list(task.test_docs())
    expected = LOADERS[dataset](max_items=4, seed=seed)["test"].to_list()
    assert [doc["instance_id"] for doc in docs] == [row["instance_id"] for row in expected]
    for doc, row in zip(docs, expected, strict=True):
        for field in ("items", "item_ids", "human_scores"):
            assert doc[field] == row[field], (doc["instance_id"], field)
        prompt = task.render("normal", doc, 0, 1)
        if dataset == "caters":
            # the loader's capped context, i.e. the kept events in item order
            assert f"Events:\n{row['context']}\n\nEvent A:" in prompt
        else:
            assert row["context"] in prompt
