"""The ``instance_split`` option: each family's documents split by instance into two halves that never
overlap, whose union is every document, the same on every run (it trains an improve study on one half
and evaluates it on the other)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.common import in_split, instance_split
from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.options import OptionError
from logic_consistency.tasks.data import DATA_ENV_VAR

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


def load(task: str, **metadata: Any) -> Any:
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return manager.load(task)["tasks"][task]


def instance_ids(task: str, **metadata: Any) -> list[str]:
    return [str(doc.get("instance_id", doc.get("id"))) for doc in load(task, **metadata).test_docs()]


def test_the_halves_never_overlap_and_cover_every_id() -> None:
    ids = [f"story{n:04d}" for n in range(2000)]
    train = {i for i in ids if in_split(i, "train")}
    test = {i for i in ids if in_split(i, "test")}
    assert not train & test
    assert train | test == set(ids) == {i for i in ids if in_split(i, "all")}
    assert 0.45 < len(train) / len(ids) < 0.55  # a fair halving, not a degenerate one


def test_the_split_is_the_same_in_another_interpreter() -> None:
    ids = [f"arithmetic-{n:05d}" for n in range(50)]
    code = f"from logic_consistency.common import instance_split; print([instance_split(i) for i in {ids!r}])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = children.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str([instance_split(i) for i in ids])


@pytest.mark.parametrize(
    ("task", "metadata"),
    [
        ("logic_consistency_summeval", {}),
        ("logic_consistency_noveleval", {}),
        ("logic_consistency_gv_arithmetic", {"n_docs": 60}),
    ],
)
def test_each_training_family_splits_its_documents_by_instance(task: str, metadata: dict[str, Any]) -> None:
    every = instance_ids(task, **metadata)
    train = instance_ids(task, instance_split="train", **metadata)
    test = instance_ids(task, instance_split="test", **metadata)
    assert train and test, (task, len(every))
    assert not set(train) & set(test)
    assert sorted(train + test) == sorted(every)
    assert instance_ids(task, instance_split="all", **metadata) == every
    assert train == instance_ids(task, instance_split="train", **metadata)  # stable


def test_a_half_with_no_document_is_an_error_naming_the_task() -> None:
    # the four fixture stories all hash to train (the real release's 238 stories split about evenly)
    every = instance_ids("logic_consistency_caters", min_events=2)
    assert instance_ids("logic_consistency_caters", min_events=2, instance_split="train") == every
    with pytest.raises(
        ValueError, match=r"task 'logic_consistency_caters': metadata.instance_split='test' leaves no document"
    ):
        instance_ids("logic_consistency_caters", min_events=2, instance_split="test")


def test_a_split_run_records_its_half_in_the_task_metadata() -> None:
    task = load("logic_consistency_gv_arithmetic", n_docs=10, instance_split="test")
    assert task.config.metadata["instance_split"] == "test"
    assert "instance_split" not in load("logic_consistency_gv_arithmetic", n_docs=10).config.metadata


def test_an_unknown_split_names_the_task_and_the_option() -> None:
    with pytest.raises(OptionError, match=r"task 'logic_consistency_caters'.*metadata.instance_split.*'dev'"):
        load("logic_consistency_caters", instance_split="dev")


def test_the_instance_hash_depends_on_the_id_alone() -> None:
    assert instance_split("a") == instance_split("a")
    with pytest.raises(ValueError, match="instance split must be one of"):
        in_split("a", "validation")
