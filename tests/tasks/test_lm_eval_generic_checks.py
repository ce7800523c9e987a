"""lm-eval's generic per-task checks over every suite task.

lm-eval runs the checks of ``BaseTasks`` (its ``tests/test_tasks.py``) on every new or changed
task. The same checks are written out here (lm-eval does not ship its tests in the wheel), one test
per check and task, adapted to the suite in three ways:

* documents come from the small fixtures in ``tests/fixtures/data``, or from the local copy of the
  real datasets when ``LOGIC_CONSISTENCY_DATA`` names one (as in CI); generated sets hold
  :data:`LIMIT` documents (``n_docs``) and pairwise instances at most 5 items (``max_items``, as
  ``tests/harness_ext/test_lm_eval_cli.py`` runs the suite), which keeps the checks to about a
  minute of CPU on the real data (uncapped SummEval instances of 16 items mean 240 prompts each);
* lm-eval asks ``construct_requests`` for ``limit`` request lists and so needs ``limit`` documents;
  a fixture set may hold fewer, so the check asks for one list per document read (at most
  :data:`LIMIT`) and checks each is a non-empty list of requests;
* a task that asks the model while it builds its requests (multi-stage tasks with more than one
  stage, PairS, self-agreement) cannot run ``build_all_requests`` without one: the check confirms it
  stops with the documented error and skips with :data:`NEEDS_MODEL_REASON`. Those tasks build
  their requests with a real model object in ``tests/harness_ext/test_lm_eval_cli.py``.

One ``TaskManager`` indexes the suite and every task is loaded once per session, as lm-eval loads
them once at collection time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.multistage import MultiStageTask
from logic_consistency.tasks.data import DATA_ENV_VAR
from logic_consistency.tasks.pairwise.pairs_task import PairsRankingTask
from logic_consistency.tasks.pairwise.self_agreement_task import SelfAgreementTask

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
#: Documents per check (lm-eval's ``limit`` fixture is 10); also the size of the generated GV sets.
LIMIT = 10
#: Task options for the checks: the caps above (every suite task accepts both keys).
METADATA = {"n_docs": LIMIT, "max_items": 5}
DATA = os.environ.get(DATA_ENV_VAR, "").strip() or str(FIXTURE_DATA)
NEEDS_MODEL_REASON = (
    "asks the model while building its requests (earlier stages, PairS merge rounds or self-agreement "
    "samples run inside build_all_requests); without a model it stops with the documented "
    "'needs the model object' error"
)
SUITE_TASKS = sorted(
    name
    for name in TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_subtasks
    if name.startswith("logic_consistency")
)


def _data_folder(tmp: Path) -> str:
    """:data:`DATA`, with the fixture's folder of each dataset the copy has none of (MS MARCO: the
    project's copy holds no RankGPT files, docs/data.md), so that every task loads."""
    missing = [d for d in FIXTURE_DATA.iterdir() if d.is_dir() and not (Path(DATA) / d.name).exists()]
    if Path(DATA) == FIXTURE_DATA or not missing:
        return DATA
    for entry in [*Path(DATA).resolve().iterdir(), *missing]:  # absolute: DATA may be relative (CI)
        (tmp / entry.name).symlink_to(entry)  # read-only use
    return str(tmp)


@pytest.fixture(scope="session")
def data_folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _data_folder(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def suite_tasks(data_folder: str) -> Iterator[dict[str, ConfigurableTask]]:
    """Every suite task, loaded once from the chosen data (one ``TaskManager``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ENV_VAR, data_folder)
        manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=METADATA)
        yield manager.load(SUITE_TASKS)["tasks"]


@pytest.fixture(params=SUITE_TASKS)
def task(request: pytest.FixtureRequest, suite_tasks: dict[str, ConfigurableTask]) -> ConfigurableTask:
    return suite_tasks[request.param]


def needs_model(task: ConfigurableTask) -> bool:
    """Whether the task asks the model inside ``build_all_requests``."""
    if isinstance(task, MultiStageTask):
        return len(task.stages) > 1
    return isinstance(task, (PairsRankingTask, SelfAgreementTask))


def first_docs(task: ConfigurableTask) -> list[dict[str, Any]]:
    """Up to :data:`LIMIT` evaluation documents, test split first (as lm-eval's checks take them)."""
    docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
    out = list(islice(docs, LIMIT))
    assert out, f"{task.config.task}: no evaluation documents"
    return out


def test_every_suite_task_is_checked() -> None:
    assert len(SUITE_TASKS) >= 60


def test_download(task: ConfigurableTask, data_folder: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ENV_VAR, data_folder)
        task.download(task.config.dataset_kwargs)
    assert task.dataset is not None


def test_has_and_check_splits(task: ConfigurableTask) -> None:
    for split in ("training", "validation", "test"):
        has = getattr(task, f"has_{split}_docs")()
        assert has in (True, False)
        if has:
            assert task.config[f"{split}_split"] is not None


def test_should_decontaminate(task: ConfigurableTask) -> None:
    assert task.should_decontaminate() in (True, False)
    if task.should_decontaminate():
        assert task.config["doc_to_decontamination_query"] is not None


def test_doc_to_text(task: ConfigurableTask) -> None:
    texts = [task.doc_to_text(doc) for doc in first_docs(task)]
    if task.multiple_input:
        return
    for text in texts:
        assert isinstance(text, str)
        if text and task.config.target_delimiter.isspace():
            assert not text[-1].isspace(), "doc_to_text ends in a whitespace and target delimiter also a whitespace"


def test_create_choices(task: ConfigurableTask) -> None:
    if "multiple_choice" not in task.config.output_type:
        return
    choices = [task.doc_to_choice(doc) for doc in first_docs(task)]
    assert all(isinstance(c, list) and isinstance(c[0], str) for c in choices)


def test_doc_to_target(task: ConfigurableTask) -> None:
    targets = [task.doc_to_target(doc) for doc in first_docs(task)]
    if task.config.output_type == "multiple_choice":
        for label in targets:
            if isinstance(label, list):
                assert all(isinstance(x, int) for x in label)
            else:
                assert isinstance(label, (int, str))


def test_build_all_requests(task: ConfigurableTask) -> None:
    if needs_model(task):
        with pytest.raises(RuntimeError, match="needs the model object"):
            task.build_all_requests(rank=1, limit=LIMIT, world_size=1)
        pytest.skip(NEEDS_MODEL_REASON)
    task.build_all_requests(rank=1, limit=LIMIT, world_size=1)
    assert task.instances is not None


def test_construct_requests(task: ConfigurableTask) -> None:
    """``construct_requests(doc=..., ctx=...)`` without lm-eval's ``metadata`` argument."""
    docs = first_docs(task)
    requests = [
        task.construct_requests(doc=doc, ctx="" if task.multiple_input else task.doc_to_text(doc)) for doc in docs
    ]
    assert len(requests) == len(docs)
    for built in requests:
        built = built if isinstance(built, list) else [built]
        assert built and all(isinstance(r, Instance) for r in built)
        assert all(r.task_name == task.config.task for r in built)
