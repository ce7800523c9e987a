"""What the bad-input tables share: a case, a table of cases, the runner, and the inputs several
tables break (a private copy of the fixture data, every dataset file, the command line).

The tables (``tests/bad_input_*.py``, ``tests/test_bad_inputs_files_options.py``) fill a
:class:`CaseTable`; ``tests/test_bad_inputs.py`` and ``tests/test_bad_inputs_files_options.py`` run
every case with :func:`run_case`.
"""

from __future__ import annotations

import functools
import importlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks import TaskManager
from lm_eval.tasks._yaml_loader import load_yaml

from logic_consistency.cli import build_parser
from logic_consistency.harness_ext.autoload import tasks_dir

FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"

#: (dataset loader, file under the data folder, header line kept by "header only" or None).
DATA_FILES = [
    ("advbench", "advbench/harmful_behaviors.csv", True),
    ("summeval", "summeval/summeval_hub_format.jsonl", False),
    ("delta_causal", "delta_causal/shuffled_test_extended.csv", True),
    ("triviaqa", "triviaqa/triviaqa.json", False),
    ("summarize_feedback", "summarize_from_feedback/comparisons_validation.jsonl", False),
    ("noveleval", "noveleval/queries.tsv", False),
    ("noveleval", "noveleval/corpus.tsv", False),
    ("noveleval", "noveleval/qrels.txt", False),
    ("caters", "caters/caters_test/test/test_15Oct.ann", False),
    ("caters", "caters/caters_evaluation/train/batch_1.txt", False),
]


@dataclass(frozen=True)
class Case:
    """``run(tmp_path)`` must raise ``error`` with every string of ``expect`` in its message."""

    name: str
    run: Callable[[Path], Any]
    expect: tuple[str, ...]
    error: type[BaseException] = Exception


class CaseTable(list[Case]):
    """A table of cases, filled with :meth:`add` or the decorator :meth:`case`."""

    def add(self, name: str, run: Callable[[Path], Any], *expect: str, error: type[BaseException] = Exception) -> None:
        self.append(Case(name, run, expect, error))

    def case(self, name: str, *expect: str, error: type[BaseException] = Exception) -> Callable[..., Any]:
        def register(function: Callable[[Path], Any]) -> Callable[[Path], Any]:
            self.add(name, function, *expect, error=error)
            return function

        return register

    def ids(self) -> list[str]:
        return [case.name for case in self]


def run_case(bad: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run one case offline, on the data folder ``tmp_path/data``, and check its error message."""
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(bad.error) as raised:
        bad.run(tmp_path)
    message = str(raised.value)
    missing = [part for part in bad.expect if part not in message]
    assert not missing, f"{bad.name}: {missing} not in {type(raised.value).__name__}: {message}"


def copy_data(tmp: Path) -> Path:
    """A private copy of the fixture data, named by LOGIC_CONSISTENCY_DATA for the case."""
    root = tmp / "data"
    if not root.exists():
        shutil.copytree(FIXTURE_DATA, root)
    return root


def loader(dataset: str) -> Callable[[], Any]:
    """The loader of ``dataset`` (a module of ``tasks/data``), called without options."""
    if dataset == "summarize_feedback":
        module = importlib.import_module("logic_consistency.tasks.data.summarize_feedback")
        return lambda: module.load_comparisons("validation")
    return importlib.import_module(f"logic_consistency.tasks.data.{dataset}").load  # type: ignore[no-any-return]


def cli(*argv: str) -> Any:
    """Run the suite's command line as a user would (``logic-consistency ARGV``)."""
    args = build_parser().parse_args(list(argv))
    return args.run(args)


@functools.cache
def suite_tasks() -> TaskManager:
    """lm-eval's index of the suite's task YAML files (built once: it reads every file)."""
    return TaskManager(include_path=str(tasks_dir()), include_defaults=False)


def task_config(name: str) -> dict[str, Any]:
    """The merged YAML config of the suite task ``name``, ``!function`` values resolved, as lm-eval reads it."""
    return dict(load_yaml(suite_tasks().task_index[name].yaml_path, resolve_func=True))


def build_task(name: str, **dataset_kwargs: Any) -> Any:
    """Build the suite task ``name`` as lm-eval's ``TaskManager`` does, with ``dataset_kwargs`` added to its
    YAML's; the task class checks its options before any data loads (then lm-eval loads the data)."""
    config = task_config(name)
    for key in ("tag", "group", "task_list"):  # lm-eval drops these before building a task
        config.pop(key, None)
    config["dataset_kwargs"] = {**(config.get("dataset_kwargs") or {}), **dataset_kwargs}
    return config["class"](config=config)
