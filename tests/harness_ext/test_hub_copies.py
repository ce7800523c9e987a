"""Local copies of hub datasets for lm-eval's own tasks (``harness_ext/task/hub_copies.py``).

Each task is built from an lm-eval config written out here (MMLU's and TriviaQA's own keys,
``lm_eval/tasks/mmlu/default/_default_template_yaml`` and ``lm_eval/tasks/triviaqa/default.yaml``),
so no task index is built; the autoload hook wraps ``ConfigurableTask.download`` as in a real run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest
from lm_eval.api.task import ConfigurableTask

from logic_consistency.harness_ext.task import hub_copies
from logic_consistency.options import OptionError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
MMLU = {
    "task": "mmlu_abstract_algebra",
    "dataset_path": "cais/mmlu",
    "dataset_name": "abstract_algebra",
    "test_split": "test",
    "fewshot_split": "dev",
    "fewshot_config": {"sampler": "first_n"},
    "output_type": "multiple_choice",
    "doc_to_text": "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nAnswer:",
    "doc_to_choice": ["A", "B", "C", "D"],
    "doc_to_target": "answer",
    "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
}
TRIVIAQA = {
    "task": "triviaqa",
    "dataset_path": "mandarjoshi/trivia_qa",
    "dataset_name": "rc.nocontext",
    "output_type": "generate_until",
    "training_split": "train",
    "validation_split": "validation",
    "doc_to_text": "Question: {{question}}?\nAnswer:",
    "doc_to_target": "{{answer.aliases}}",
    "generation_kwargs": {"until": ["\n"], "do_sample": False},
    "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
}


@pytest.fixture
def local_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(hub_copies.DATA_ENV_VAR, str(FIXTURES))
    return FIXTURES


def _no_hub(*args: Any, **kwargs: Any) -> None:
    raise AssertionError(f"the hub was asked: {args} {kwargs}")


def test_mmlu_subject_reads_its_rows_of_the_local_copy(local_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets, "load_dataset", _no_hub)
    task = ConfigurableTask(config=dict(MMLU))
    rows = [json.loads(line) for line in (local_data / "mmlu" / "mmlu_test.jsonl").read_text().splitlines()]
    expected = [row for row in rows if row["subject"] == "abstract_algebra"]
    assert [dict(doc) for doc in task.eval_docs] == expected
    assert task.config.metadata["data_sha256"]  # the data folder's identity reaches the results' configs
    assert len(task.dataset["dev"]) == 0  # a placeholder, never test rows


def test_mmlu_all_config_reads_every_row(local_data: Path) -> None:
    task = ConfigurableTask(config={**MMLU, "task": "mmlu_all", "dataset_name": "all"})
    assert len(task.eval_docs) == len((local_data / "mmlu" / "mmlu_test.jsonl").read_text().splitlines())


def test_few_shot_run_without_the_dev_split_is_refused(local_data: Path) -> None:
    task = ConfigurableTask(config=dict(MMLU))
    task.set_config(key="num_fewshot", value=5)
    with pytest.raises(OptionError, match=r"--num_fewshot 5 needs few-shot examples from split 'dev'.*cais/mmlu"):
        task.build_all_requests(limit=1)
    task.set_config(key="num_fewshot", value=0)
    task.build_all_requests(limit=1)
    assert len(task.instances) == 4


def test_triviaqa_rows_take_the_hub_fields(local_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets, "load_dataset", _no_hub)
    task = ConfigurableTask(config=dict(TRIVIAQA))
    first = json.loads((local_data / "triviaqa" / "triviaqa.json").read_text())[0]
    doc = task.eval_docs[0]
    assert doc["question_id"] == first["qid"] and doc["answer"]["aliases"] == first["aliases"]
    assert task.doc_to_target(doc) == first["aliases"]


def test_unknown_config_of_a_known_dataset_is_an_error(local_data: Path) -> None:
    with pytest.raises(ValueError, match=r"holds no config 'unfiltered'.*unset LOGIC_CONSISTENCY_DATA"):
        ConfigurableTask(config={**TRIVIAQA, "dataset_name": "unfiltered"})
    with pytest.raises(ValueError, match=r"no rows of 'cais/mmlu' config 'astrology'"):
        ConfigurableTask(config={**MMLU, "dataset_name": "astrology"})


def test_unknown_dataset_and_unset_variable_go_to_the_hub(local_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[Any, Any]] = []

    def hub(path: Any = None, name: Any = None, **kwargs: Any) -> datasets.DatasetDict:
        asked.append((path, name))
        return datasets.DatasetDict(
            {"test": datasets.Dataset.from_list([{"question": "q", "choices": ["a"] * 4, "answer": 0}])}
        )

    monkeypatch.setattr(datasets, "load_dataset", hub)
    ConfigurableTask(config={**MMLU, "dataset_path": "someone/else", "fewshot_split": None})
    monkeypatch.delenv(hub_copies.DATA_ENV_VAR)
    ConfigurableTask(config={**MMLU, "fewshot_split": None})
    assert asked == [("someone/else", "abstract_algebra"), ("cais/mmlu", "abstract_algebra")]


def test_missing_copy_names_the_file_and_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hub_copies.DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mmlu/mmlu_test.jsonl: file not found.*LOGIC_CONSISTENCY_DATA"):
        ConfigurableTask(config=dict(MMLU))
