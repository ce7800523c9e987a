"""AdvBench harmful behaviours (Zou et al., 2023): 520 harmful requests.

Stands in for the unreleased harmful questions of the generator-validator paper (Li et al., 2024)
in the task ``logic_consistency_gv_harmful``. One row per CSV row:

- ``id``: ``"advbench-<n>"``, ``n`` the 0-based data-row index (the file has no id column);
- ``goal``: the harmful request (an instruction such as "Write a script that ...");
- ``target``: the affirmative reply prefix the attack paper optimises for ("Sure, here is ...").

Sources: ``harmful_behaviors.csv`` of github ``llm-attacks/llm-attacks`` at a pinned commit, folder
``data/advbench/`` (or ``$LOGIC_CONSISTENCY_DATA/advbench/harmful_behaviors.csv``). The file is
read with :mod:`csv` (goals and targets are quoted when they contain commas).
"""

from __future__ import annotations

import csv
from contextlib import closing
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.common import text_lines

from . import _source
from ._common import DatasetFormatError, delimited_records, make_dataset_dict, require_records, require_str

__all__ = ["BASE_URL", "COLUMNS", "COMMIT", "FEATURES", "LOCAL_FILE", "load"]

REPO = "llm-attacks/llm-attacks"
COMMIT = "a62d1307e38b3a076e614b20781c785fd860d813"
BASE_URL = _source.github_raw_url(REPO, COMMIT, "data/advbench")
LOCAL_DIR = "advbench"
LOCAL_FILE = "harmful_behaviors.csv"
COLUMNS: tuple[str, ...] = ("goal", "target")
FEATURES = datasets.Features(
    {"id": datasets.Value("string"), "goal": datasets.Value("string"), "target": datasets.Value("string")}
)


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """Read and validate the CSV (header ``goal,target``)."""
    source = str(path)
    rows: list[dict[str, Any]] = []
    with closing(text_lines(path)) as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
        except csv.Error as error:
            raise DatasetFormatError(source, "line 1", None, f"is not valid CSV ({error})") from None
        if header is None:
            raise DatasetFormatError(source, None, None, "is empty (expected the header 'goal,target')")
        header = [name.strip().lstrip("\ufeff") for name in header]
        if tuple(header) != COLUMNS:
            raise DatasetFormatError(source, "line 1", None, f"has header {header}, expected {list(COLUMNS)}")
        for _, last_line, fields in delimited_records(reader, source=source):
            location = f"line {last_line}"
            if not fields:
                continue  # blank line
            if len(fields) != len(COLUMNS):
                problem = f"has {len(fields)} columns, expected 2 (goal, target)"
                raise DatasetFormatError(source, location, None, problem)
            goal = require_str(fields[0], source=source, location=location, field="goal").strip()
            target = require_str(fields[1], source=source, location=location, field="target").strip()
            rows.append({"id": f"advbench-{len(rows):03d}", "goal": goal, "target": target})
    return require_records(rows, source=source, what="goal,target records", header=True)


def load() -> datasets.DatasetDict:
    """Load AdvBench's harmful behaviours (local file if ``LOGIC_CONSISTENCY_DATA`` is set, else online).

    Returns:
        ``DatasetDict`` with one split ``"test"`` (520 rows for the real file).

    Raises:
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but the file is missing.
        DatasetFormatError: The header is not ``goal,target`` or a row is malformed.
    """
    paths = _source.resolve_files(LOCAL_DIR, [LOCAL_FILE], BASE_URL)
    return make_dataset_dict(_read_csv(paths[LOCAL_FILE]), FEATURES)
