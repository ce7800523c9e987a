"""Local copies of hub datasets for lm-eval's own tasks: offline runs of ``mmlu_*`` and ``triviaqa``.

With ``LOGIC_CONSISTENCY_DATA`` set (the suite's data folder, docs/data.md), a task whose
``dataset_path`` is declared in ``tasks/data/_hub_copies_yaml`` reads the local copy instead of the
hub: lm-eval's own task (``mmlu_abstract_algebra``) and a wrapped one alike, since the autoload hook
wraps ``ConfigurableTask.download`` (:func:`redirected_download`). A ``dataset_path`` that is not
declared goes to the hub as before, never silently elsewhere; a declared one whose ``dataset_name``
the copy does not hold is an error naming both. The copy holds one split; the task's other splits
are empty placeholders, and a few-shot run that would read one stops with a line naming the split
(:func:`check_fewshot_source`), rather than borrowing rows of the evaluated split.

This room knows no dataset: the declarations are data beside the suite's dataset loaders, read from
the tasks folder (as ``loading.TASKS_DIR`` names it). Their keys are documented in the file itself.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import yaml

from logic_consistency.harness_ext.task import data_files
from logic_consistency.harness_ext.task.loading import TASKS_DIR
from logic_consistency.options import OptionError

__all__ = ["DATA_ENV_VAR", "DECLARATIONS", "HubCopy", "check_fewshot_source", "declared_copies", "redirected_download"]

#: The environment variable naming the suite's local data folder (``tasks/data/_source.py`` reads it too).
DATA_ENV_VAR = "LOGIC_CONSISTENCY_DATA"
#: The declarations of the local copies (data beside the suite's dataset loaders).
DECLARATIONS = TASKS_DIR / "data" / "_hub_copies_yaml"
#: The attribute a task loaded from a local copy carries: the splits the copy does not hold.
PLACEHOLDER_SPLITS = "_logic_consistency_placeholder_splits"


@dataclass(frozen=True)
class HubCopy:
    """One declared local copy of a hub dataset (a ``copies`` entry of :data:`DECLARATIONS`)."""

    hub_path: str
    folder: str
    file: str
    split: str
    by_field: str | None
    every: tuple[str, ...]
    names: tuple[str, ...]
    fields: Mapping[str, str]

    def serves(self, name: str | None) -> bool:
        """Whether the copy holds the config ``name`` (``None``: the dataset's only config)."""
        if self.by_field is not None:
            return name is not None
        return name is None or name in self.names


def _copy(hub_path: str, facts: Any) -> HubCopy:
    where = f"{DECLARATIONS}: {hub_path!r}"
    if not isinstance(facts, dict) or not {"folder", "file", "split", "configs"} <= set(facts):
        raise OptionError(f"{where}: needs folder, file, split and configs")
    unknown = set(facts) - {"folder", "file", "split", "configs", "fields"}
    configs = facts["configs"]
    if unknown or not isinstance(configs, dict) or not set(configs) <= {"by_field", "every", "names"}:
        raise OptionError(f"{where}: unknown keys {sorted(unknown) or configs}")
    return HubCopy(
        hub_path=hub_path,
        folder=str(facts["folder"]),
        file=str(facts["file"]),
        split=str(facts["split"]),
        by_field=configs.get("by_field"),
        every=tuple(configs.get("every") or ()),
        names=tuple(configs.get("names") or ()),
        fields=dict(facts.get("fields") or {}),
    )


@functools.cache
def declared_copies() -> Mapping[str, HubCopy]:
    """The declared local copies by hub name; a malformed declaration is an error naming the file and entry."""
    document = yaml.safe_load(DECLARATIONS.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or set(document) != {"copies"} or not isinstance(document["copies"], dict):
        raise OptionError(f"{DECLARATIONS}: expected one key 'copies' mapping hub names to their local copies")
    return {str(name): _copy(str(name), facts) for name, facts in document["copies"].items()}


def _data_root() -> Path | None:
    value = os.environ.get(DATA_ENV_VAR, "")
    return Path(value).expanduser().absolute() if value.strip() else None


#: Records already read in this process, by (path, size, modification time): the 57 MMLU subjects share a file.
_RECORDS: dict[tuple[str, int, int], list[Any]] = {}


def _read_records(path: Path) -> list[Any]:
    status = path.stat()
    key = (str(path), status.st_size, status.st_mtime_ns)
    if key not in _RECORDS:
        _RECORDS[key] = _parse_records(path)
    return _RECORDS[key]


def _parse_records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = []
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
        return records
    try:
        records = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error.msg})") from None
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of objects")
    return records


def _hub_row(record: Any, copy: HubCopy, *, where: str) -> dict[str, Any]:
    """A record in the hub's fields: the copy's fields renamed as declared (``answer.value`` nests)."""
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected an object, got {type(record).__name__}")
    if not copy.fields:
        return record
    row: dict[str, Any] = {}
    for hub_field, local_field in copy.fields.items():
        if local_field not in record:
            raise ValueError(f"{where}: field {local_field!r} is missing")
        *parents, leaf = hub_field.split(".")
        target = row
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = record[local_field]
    return row


def load_copy(copy: HubCopy, name: str | None, root: Path) -> datasets.Dataset:
    """The rows of config ``name`` in the local copy under ``root`` (the data folder), in the hub's fields.

    Raises:
        FileNotFoundError: The copy's file is missing (names the path and the variable).
        ValueError: A record is malformed, or the config has no row (names the file and the config).
    """
    path = root / copy.folder / copy.file
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: file not found; {DATA_ENV_VAR} must hold {copy.folder}/{copy.file}, the local copy of the "
            f"hub dataset {copy.hub_path!r} (docs/data.md); unset {DATA_ENV_VAR} to read the hub instead"
        )
    data_files.note_read(root, path)
    rows = [_hub_row(r, copy, where=f"{path}, record {i + 1}") for i, r in enumerate(_read_records(path))]
    if copy.by_field is not None and name not in copy.every:
        rows = [row for row in rows if row.get(copy.by_field) == name]
    if not rows:
        raise ValueError(f"{path}: no rows of {copy.hub_path!r} config {name!r} (the {copy.by_field!r} field)")
    return datasets.Dataset.from_list(rows)


def _task_splits(config: Any) -> set[str]:
    names = (config.training_split, config.validation_split, config.test_split, config.fewshot_split)
    return {split for split in names if split}


def local_dataset(task: Any) -> datasets.DatasetDict | None:
    """The local copy of ``task``'s hub dataset, or ``None`` when it reads the hub (or its own loader).

    Raises:
        ValueError: The copy does not hold the task's config or its evaluated split.
    """
    config, root = task.config, _data_root()
    copy = declared_copies().get(str(config.dataset_path)) if root is not None else None
    if copy is None or root is None or callable(config.custom_dataset):
        return None
    name = config.dataset_name
    if not copy.serves(name):
        raise ValueError(
            f"task {config.task!r}: the local copy of {copy.hub_path!r} ({root / copy.folder / copy.file}) holds "
            f"no config {name!r} (it holds {list(copy.names)}); unset {DATA_ENV_VAR} to read the hub"
        )
    evaluated = config.test_split or config.validation_split
    if evaluated != copy.split:
        raise ValueError(
            f"task {config.task!r}: evaluates split {evaluated!r} of {copy.hub_path!r}; its local copy holds only "
            f"{copy.split!r}; unset {DATA_ENV_VAR} to read the hub"
        )
    with data_files.collecting() as files:
        rows = load_copy(copy, name, root)
    digest = data_files.files_sha256(files.items())
    config.metadata = {**(config.metadata or {}), data_files.DATA_HASH_KEY: digest}
    empty = rows.select([])
    missing = sorted(_task_splits(config) - {copy.split})
    setattr(task, PLACEHOLDER_SPLITS, (copy, missing))
    return datasets.DatasetDict({copy.split: rows, **{split: empty for split in missing}})


def redirected_download(download: Callable[..., None]) -> Callable[..., None]:
    """Wrap ``ConfigurableTask.download``: a declared hub dataset is read from its local copy (see the module)."""
    if getattr(download, "_logic_consistency", False):
        return download

    @functools.wraps(download)
    def wrapper(self: Any, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        local = local_dataset(self)
        if local is None:
            download(self, dataset_kwargs, **kwargs)
        else:
            self.dataset = local

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper


def _fewshot_split(task: Any) -> str | None:
    """The split lm-eval 0.4.13 takes few-shot examples from (``fewshot_docs``): the few-shot split, else
    the training split, else the validation split."""
    config = task.config
    split = getattr(getattr(task, "fewshot_cfg", None), "split", None)
    chosen = split or config.fewshot_split or config.training_split or config.validation_split
    return None if chosen is None else str(chosen)


def check_fewshot_source(task: Any) -> None:
    """A few-shot run of a task read from a local copy whose few-shot split the copy lacks is an error.

    Raises:
        OptionError: Names the task, the split, the copy and the way out (zero-shot or the hub).
    """
    placeholders = getattr(task, PLACEHOLDER_SPLITS, None)
    shots = task.config.num_fewshot or 0
    if placeholders is None or shots <= 0:
        return
    copy, missing = placeholders
    split = _fewshot_split(task)
    if split in missing or split is None:
        raise OptionError(
            f"task {task.config.task!r}: --num_fewshot {shots} needs few-shot examples from split {split!r}, which "
            f"the local copy of {copy.hub_path!r} ({copy.folder}/{copy.file}, split {copy.split!r} only) does not "
            f"hold; run zero-shot, or unset {DATA_ENV_VAR} to read the hub (test rows are never borrowed)"
        )


def checked_build(build_all_requests: Callable[..., None]) -> Callable[..., None]:
    """Wrap ``Task.build_all_requests``: :func:`check_fewshot_source` first."""
    if getattr(build_all_requests, "_logic_consistency", False):
        return build_all_requests

    @functools.wraps(build_all_requests)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        check_fewshot_source(self)
        build_all_requests(self, *args, **kwargs)

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
