"""A GV question-answering task from a JSONL, CSV or hub dataset with YAML only (no loader).

lm-eval loads the data (``dataset_path`` / ``dataset_kwargs``, as any lm-eval task); the task's
``fields:`` maps its columns onto the GV row schema :data:`~logic_consistency.tasks.data.fields.GV_QA`
(``instance_id``, ``question``, ``answers``: the accepted answers, a list or one text column), with the
same mechanism and messages as a pairwise dataset's (:mod:`logic_consistency.tasks.data.fields`). The
design (which stages, prompts and validator) comes from the template the YAML includes: ``gv/_qa_yaml``
is Li et al.'s question-answering design (ICLR 2024, Table 13's prompts, order randomisation: the
generator writes "correct || misleading", the validator picks between them as A / B), run by
:mod:`.triviaqa`'s hooks, the question's ``answers`` playing TriviaQA's aliases; ``gv/_qa_true_false_yaml``
is Table 12's True/False design. Each document gets ``id`` (its ``instance_id``), ``gv_task`` (the task's
name) and ``r`` from the seed and its id (:func:`.common.make_docs`); ``n_docs`` takes a seeded subset
(null, the default here: every row). A repeated ``instance_id`` is an error naming the file and the rows.
"""

from __future__ import annotations

from typing import Any

import datasets

from logic_consistency.harness_ext.task.multistage import MultiStageTask
from logic_consistency.options import read_option
from logic_consistency.tasks.data._common import DatasetFormatError
from logic_consistency.tasks.data.fields import GV_QA, check_field_map, map_fields

from .common import check_n_docs, make_docs, subsample

__all__ = ["GVFieldsTask"]

#: The run options the class reads from ``metadata`` (declared in ``tasks/gv/_options_yaml`` and
#: ``tasks/data/_options_yaml``).
OPTION_NAMES = ("n_docs", "seed")


class GVFieldsTask(MultiStageTask):
    """A GV task whose documents are a dataset's rows mapped by ``fields:`` (see the module doc)."""

    EXTRA_KEYS = (*MultiStageTask.EXTRA_KEYS, "fields")

    def validate_options(self, config: dict[str, Any]) -> None:
        """Check ``fields:`` against :data:`GV_QA` and read ``n_docs`` and ``seed``, before any data loads.

        Raises:
            ValueError: The task names a ``custom_dataset`` loader (a loader task is a ``MultiStageTask``).
            OptionError: A bad ``fields:`` entry or option (names the task, the key and the closest).
        """
        task, metadata = config.get("task"), config.get("metadata") or {}
        if config.get("custom_dataset") is not None:
            raise ValueError(
                f"task {task!r}: a GV task by YAML reads dataset_path / dataset_kwargs; a task with a "
                "custom_dataset loader uses logic_consistency.harness_ext.task.multistage.MultiStageTask"
            )
        self.check_loader_options(config, task_options=OPTION_NAMES)
        self.field_map = check_field_map(self.extra_config.get("fields"), GV_QA, where=f"task {task!r}")
        self.n_docs = check_n_docs(metadata.get("n_docs"), allow_none=True)
        self.seed: int = read_option(metadata, "seed", where=f"task {task!r}")

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """lm-eval loads the data; the evaluated split's rows become the task's GV documents."""
        super().download(dataset_kwargs, **kwargs)
        files = (self.config.dataset_kwargs or {}).get("data_files")
        source = f"task {self.config.task!r}: dataset {self.config.dataset_path}" + (f" {files}" if files else "")
        split = self.config.test_split or self.config.validation_split
        if split not in self.dataset:
            raise DatasetFormatError(source, "the data", "split", f"{split!r} is not one of {list(self.dataset)}")
        mapped = map_fields({split: self.dataset[split]}, self.field_map, GV_QA, where=source)[split]
        rows = [{"id": row["instance_id"], "question": row["question"], "aliases": row["answers"]} for row in mapped]
        _refuse_repeated_ids(rows, source=source, split=split)
        name = str(self.config.task)
        docs = make_docs(name, subsample(rows, self.n_docs, self.seed, name), self.seed)["test"]
        self.dataset = datasets.DatasetDict({split: docs})
        self.select_instances()


def _refuse_repeated_ids(rows: list[dict[str, Any]], *, source: str, split: str) -> None:
    """Every ``instance_id`` once (a document's ``r`` and its logs go by it).

    Raises:
        DatasetFormatError: Naming the data source, the split, the id and the two rows.
    """
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        first = seen.setdefault(row["id"], number)
        if first != number:
            raise DatasetFormatError(
                source, f"split {split!r} row {number}", "instance_id", f"{row['id']!r} repeats row {first}"
            )
