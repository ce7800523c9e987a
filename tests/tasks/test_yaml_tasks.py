"""Every shipped task YAML loads through lm-eval against the small fixtures (as lm-eval's
``tests/extra/test_new_tasks.py`` does for new tasks): the class is built, its options validate,
its loader reads the fixture data and its documents render to prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.data import DATA_ENV_VAR

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
MANAGER = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
SUITE_TASKS = sorted(name for name in MANAGER.all_subtasks if name.startswith("logic_consistency"))
# Small synthetic sets, so that building 40 tasks stays quick (GV documents are generated).
METADATA = {"n_docs": 3}


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


def test_every_yaml_file_is_indexed() -> None:
    """Each leaf ``*.yaml`` under tasks/ is a task or group lm-eval knows (none silently ignored)."""
    names = set(MANAGER.all_tasks) | set(MANAGER.all_groups) | set(MANAGER.all_tags)
    yaml_files = sorted(tasks_dir().rglob("*.yaml"))
    assert len(yaml_files) >= 30 and len(SUITE_TASKS) >= 29
    for path in yaml_files:
        text = path.read_text(encoding="utf-8")
        declared = [
            line.split(":", 1)[1].strip()
            for line in text.splitlines()
            if line.startswith(("task:", "group:")) and line.split(":", 1)[1].strip()
        ]
        assert declared and declared[0] in names, path


@pytest.mark.parametrize("name", SUITE_TASKS)
def test_shipped_task_loads_against_fixtures(name: str) -> None:
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=METADATA)
    task = manager.load(name)["tasks"][name]
    docs = list(task.eval_docs)  # the test split, or the validation split of a base that has no test split (triviaqa)
    assert docs, f"{name}: no documents from the fixtures"
    prompt = task.doc_to_text(docs[0])
    assert isinstance(prompt, str)
    if task.config.task.startswith(
        ("logic_consistency_summeval", "logic_consistency_noveleval", "logic_consistency_caters")
    ):
        # the pairwise class renders every (variant, i, j) of the first document
        rendered = [task.render(variant, docs[0], i, j) for variant, i, j in task.plan(docs[0])]
        assert rendered and all(docs[0]["items"][i] in text for text, (_, i, _) in zip(rendered, task.plan(docs[0])))


def test_suite_groups_expand_their_tags() -> None:
    """The pairwise groups list a tag; the tag holds the three datasets of the variant."""
    for suffix in ("", "_generate", "_cot"):
        tag = MANAGER._index[f"logic_consistency_pairwise{suffix}_tasks"]
        assert sorted(tag.tags) == [f"logic_consistency_{d}{suffix}" for d in ("caters", "noveleval", "summeval")]


def test_ctp_group_expands_its_tag_to_the_seven_conjunctions() -> None:
    tag = MANAGER._index["logic_consistency_causal_ctp_tasks"]
    conjunctions = ("as", "because", "hence", "since", "so", "therefore", "thus")
    assert sorted(tag.tags) == [f"logic_consistency_causal_ctp_{c}" for c in conjunctions]
