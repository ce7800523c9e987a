"""SummEval (Fabbri et al., 2021): which of two summaries of an article is more coherent?

One row per CNN/DM article (100 instances): ``context`` is the article; ``items`` its 16 machine
summaries in the source's order, ``item_ids`` ``"S0"`` ... ``"S15"``; ``human_scores`` the mean of
the 3 expert annotations (1-5) for ``aspect`` (default coherence, the paper's aspect). Textually
identical summaries of one article are kept (the benchmark is defined on all 16; docs/data.md).

Sources: online, hub dataset ``mteb/summeval`` split ``test``; offline,
``$LOGIC_CONSISTENCY_DATA/summeval/summeval_hub_format.jsonl`` (the hub dataset's fields, one JSON
object per line). Both go through :func:`build_row`, so they are validated identically.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.options import check_option
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import _source
from ._common import (
    DatasetFormatError,
    check_options,
    jsonl_objects,
    pairwise_dataset,
    require_records,
    require_score,
    require_str,
    require_str_list,
)

__all__ = ["ASPECTS", "HUB_PATH", "HUB_SPLIT", "LOCAL_FILE", "build_row", "load"]

HUB_PATH = "mteb/summeval"
HUB_SPLIT = "test"
#: Hub revision to load; ``None`` = the default branch (the data README does not pin one).
HUB_REVISION: str | None = None
LOCAL_DIR = "summeval"
LOCAL_FILE = "summeval_hub_format.jsonl"
#: Score fields of the hub format; each holds one mean expert score (1-5) per machine summary.
ASPECTS: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")
SCORE_RANGE: tuple[float, float] = (1.0, 5.0)


def build_row(record: Mapping[str, Any], *, source: str, location: str, aspect: str) -> dict[str, Any]:
    """Validate one hub-format record and turn it into a row of the common schema.

    Args:
        record: Mapping with at least ``id``, ``text``, ``machine_summaries`` and the four score lists.
        source: File path or hub dataset name, for error messages.
        location: ``"line N"`` or ``"row index N"``, for error messages.
        aspect: Score field used as ``human_scores``.

    Raises:
        DatasetFormatError: A field is missing, has the wrong type or length, or a score is outside
            [1, 5].
    """
    for field in ("id", "text", "machine_summaries", *ASPECTS):
        if field not in record:
            raise DatasetFormatError(source, location, field, "is missing")
    instance_id = require_str(record["id"], source=source, location=location, field="id")
    text = require_str(record["text"], source=source, location=location, field="text")
    summaries = require_str_list(
        record["machine_summaries"], source=source, location=location, field="machine_summaries", min_length=2
    )
    scores: dict[str, list[float]] = {}
    # All four aspects are checked, not only the one used: a broken column means a broken file.
    for field in ASPECTS:
        values = record[field]
        if not isinstance(values, (list, tuple)):
            raise DatasetFormatError(source, location, field, f"must be a list, got {type(values).__name__}")
        if len(values) != len(summaries):
            raise DatasetFormatError(
                source,
                location,
                field,
                f"has {len(values)} values, expected {len(summaries)} (one per machine summary)",
            )
        low, high = SCORE_RANGE
        scores[field] = [
            require_score(value, source=source, location=location, field=f"{field}[{index}]", low=low, high=high)
            for index, value in enumerate(values)
        ]
    return {
        "instance_id": instance_id,
        "context": text,
        "items": summaries,
        "item_ids": [f"S{index}" for index in range(len(summaries))],
        "human_scores": scores[aspect],
        "aspect": aspect,
    }


def _read_jsonl(path: Path, aspect: str) -> list[dict[str, Any]]:
    rows = [  # blank lines (e.g. a trailing one) are skipped
        build_row(record, source=str(path), location=f"line {number}", aspect=aspect)
        for number, record in jsonl_objects(path)
    ]
    return require_records(rows, source=str(path), what="SummEval records")


def _read_hub(aspect: str) -> list[dict[str, Any]]:
    dataset: datasets.Dataset = _source.load_hub_split(HUB_PATH, HUB_SPLIT, HUB_REVISION)
    source = f"hub dataset {HUB_PATH} (split {HUB_SPLIT})"
    return [
        build_row(record, source=source, location=f"row index {index}", aspect=aspect)
        for index, record in enumerate(dataset)
    ]


def _check_unique_ids(rows: list[dict[str, Any]], source: str) -> None:
    seen: set[str] = set()
    for index, row in enumerate(rows):
        if row["instance_id"] in seen:
            raise DatasetFormatError(source, f"record {index + 1}", "id", f"repeats id {row['instance_id']!r}")
        seen.add(row["instance_id"])


def load(
    *,
    max_items: int | None = None,
    seed: int = DEFAULT_SEED,
    aspect: str = "coherence",
) -> datasets.DatasetDict:
    """Load SummEval as pairwise-judgement instances (lm-eval ``custom_dataset`` entry point).

    Args:
        max_items: Keep at most this many summaries per article: a random subset drawn from
            ``seed`` and the article id (stable across runs), in the original order. ``None`` keeps
            all 16.
        seed: Seed of the ``max_items`` subset.
        aspect: Expert score used as ``human_scores``: ``"coherence"`` (default, as in the paper),
            ``"consistency"``, ``"fluency"`` or ``"relevance"``.

    Returns:
        ``DatasetDict`` with one split ``"test"`` (100 rows for the full data).

    Raises:
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but the file is missing.
        DatasetFormatError: A record is malformed.
    """
    check_options(max_items, seed)
    check_option("aspect", aspect)
    root = _source.local_data_dir()
    if root is not None:
        path = _source.local_file(root, LOCAL_DIR, LOCAL_FILE)
        rows, source = _read_jsonl(path, aspect), str(path)
    else:
        rows, source = _read_hub(aspect), f"hub dataset {HUB_PATH} (split {HUB_SPLIT})"
    _check_unique_ids(rows, source)
    return pairwise_dataset(rows, max_items, seed)
