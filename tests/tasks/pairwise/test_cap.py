"""``max_items`` takes one road: a task passes it to a loader that names it, so every shipped loader
called directly with ``max_items=k`` and the same loader through its task give identical documents
(every field: items, their aligned columns and ``context``, which CaTeRS rebuilds from the kept events)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.base import loader_parameter_names
from logic_consistency.tasks import data
from logic_consistency.tasks.data import DATA_ENV_VAR, caters, msmarco, noveleval, summeval

FIXTURE_DATA = Path(__file__).resolve().parents[2] / "fixtures" / "data"
LOADERS = {"summeval": summeval.load, "noveleval": noveleval.load, "caters": caters.load, "msmarco": msmarco.load}


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


def _task_docs(dataset: str, metadata: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    task = manager.load(f"logic_consistency_{dataset}")["tasks"][f"logic_consistency_{dataset}"]
    return task, list(task.test_docs())


def test_every_capping_loader_is_covered() -> None:
    capping = {
        name
        for _, name, _ in pkgutil.iter_modules(data.__path__)
        if not name.startswith("_")
        and "max_items"
        in loader_parameter_names(getattr(importlib.import_module(f"{data.__name__}.{name}"), "load", print))
    }
    assert capping == set(LOADERS)


@pytest.mark.parametrize("dataset", list(LOADERS))
@pytest.mark.parametrize(("max_items", "seed"), [(4, 1234), (4, 7), (3, 1234), (None, 1234)])
def test_task_documents_equal_the_loaders(dataset: str, max_items: int | None, seed: int) -> None:
    task, docs = _task_docs(dataset, {"max_items": max_items, "ks": [3], "seed": seed})
    expected = LOADERS[dataset](max_items=max_items, seed=seed)["test"].to_list()
    assert docs == expected
    assert any(len(row["items"]) == max_items for row in expected) or max_items is None
    for doc in docs:
        if max_items is not None:
            assert len(doc["items"]) <= max_items
        prompt = task.render("normal", doc, 0, 1)
        if dataset == "caters":
            # the event list shown is the (rebuilt) context: the kept events only, in item order
            assert doc["context"] == "\n".join(f"- {item}" for item in doc["items"])
            assert f"Events:\n{doc['context']}\n\nEvent A:" in prompt
        else:
            assert doc["context"] in prompt
