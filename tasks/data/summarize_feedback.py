"""Summarize from Feedback (Stiennon et al., 2020), the pairwise-comparison part used by REPAIR
(Liu et al., "Aligning with Logic", section 4.2 and Appendix B).

Each record is one human comparison of two summaries of one Reddit TL;DR post or CNN/DM article:
``info`` (``id``, ``post`` or ``article``, ``title``, ...), ``summaries`` (two objects with
``text`` and ``policy``) and ``choice`` (0 or 1, the index of the preferred summary). One instance
is one ``info.id``; summaries are identified by the SHA-1 of their text (first 12 hex digits), so
a summary compared several times is one item.

Sources: online, hub dataset ``openai/summarize_from_feedback``, config ``comparisons``, splits
``train`` / ``validation``; offline, ``$LOGIC_CONSISTENCY_DATA/summarize_from_feedback/
comparisons_<split>.jsonl`` (one hub record per line, same field names). Not shipped with the
suite's test data: the unit tests use a small hand-written file with the same fields.
:func:`load_with_source` also says what was read (a file's SHA-256 and size, or the hub dataset).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.common import file_sha256

from . import _source
from ._common import DatasetFormatError, jsonl_objects, require_id, require_records, require_str

__all__ = [
    "HUB_CONFIG",
    "HUB_PATH",
    "SPLITS",
    "FeedbackComparison",
    "item_id",
    "load_comparisons",
    "load_with_source",
    "parse_record",
]

HUB_PATH = "openai/summarize_from_feedback"
HUB_CONFIG = "comparisons"
SPLITS = ("train", "validation")
LOCAL_DIR = "summarize_from_feedback"


@dataclass(frozen=True)
class FeedbackComparison:
    """One human comparison: summary ``text_a`` was shown first (index 0), ``text_b`` second."""

    instance_id: str
    context: str
    item_a: str
    item_b: str
    text_a: str
    text_b: str
    winner: str  #: ``item_a`` or ``item_b``


def item_id(text: str) -> str:
    """Stable id of a summary: the first 12 hex digits of the SHA-1 of its UTF-8 text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def parse_record(record: Mapping[str, Any], *, source: str, location: str) -> FeedbackComparison:
    """Validate one hub-format record.

    Raises:
        DatasetFormatError: a field is missing or malformed (named in the message).
    """
    instance_id, context = _post(record.get("info"), source=source, location=location)
    texts = _summary_texts(record.get("summaries"), source=source, location=location)
    choice = record.get("choice")
    if type(choice) is not int or choice not in (0, 1):  # 1.0 or True would index the summaries by accident
        raise DatasetFormatError(source, location, "choice", f"must be 0 or 1, got {choice!r:.40}")
    ids = [item_id(text.strip()) for text in texts]
    if ids[0] == ids[1]:
        raise DatasetFormatError(source, location, "summaries", "compares a summary with itself")
    return FeedbackComparison(
        instance_id=instance_id,
        context=context,
        item_a=ids[0],
        item_b=ids[1],
        text_a=texts[0],
        text_b=texts[1],
        winner=ids[choice],
    )


def _post(info: Any, *, source: str, location: str) -> tuple[str, str]:
    """A record's ``info``: its id, and the post (or article) under its title, if any."""
    if not isinstance(info, Mapping):
        raise DatasetFormatError(source, location, "info", "must be an object")
    if "id" not in info:
        raise DatasetFormatError(source, location, "info.id", "is missing")
    instance_id = require_id(info["id"], source=source, location=location, field="info.id")
    context = info.get("post") or info.get("article")
    context = require_str(context, source=source, location=location, field="info.post/info.article")
    title = info.get("title")
    if isinstance(title, str) and title.strip():
        context = f"{title.strip()}\n\n{context}"
    return instance_id, context


def _summary_texts(summaries: Any, *, source: str, location: str) -> list[str]:
    """The texts of a record's two ``summaries``."""
    if not isinstance(summaries, list) or len(summaries) != 2:
        raise DatasetFormatError(source, location, "summaries", "must be a list of two summaries")
    texts = []
    for index, summary in enumerate(summaries):
        if not isinstance(summary, Mapping):
            raise DatasetFormatError(source, location, f"summaries[{index}]", "must be an object")
        texts.append(
            require_str(summary.get("text"), source=source, location=location, field=f"summaries[{index}].text")
        )
    return texts


def _read_jsonl(path: Path) -> Iterator[FeedbackComparison]:
    for number, record in jsonl_objects(path):
        yield parse_record(record, source=str(path), location=f"line {number}")


def load_comparisons(split: str = "validation", *, path: str | Path | None = None) -> list[FeedbackComparison]:
    """Load the human comparisons of one split.

    Args:
        split: ``"train"`` or ``"validation"``.
        path: read this JSONL file (hub field names) instead of the local data directory or hub.

    Returns:
        The comparisons, in file order.

    Raises:
        ValueError: unknown split.
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but the file is missing.
        DatasetFormatError: a malformed record.
    """
    return load_with_source(split, path=path)[0]


def _file_source(path: Path) -> dict[str, Any]:
    """What identifies a file read: its path, SHA-256 and size in bytes."""
    return {"file": str(path.resolve()), "sha256": file_sha256(path), "bytes": path.stat().st_size}


def load_with_source(
    split: str = "validation", *, path: str | Path | None = None
) -> tuple[list[FeedbackComparison], dict[str, Any]]:
    """:func:`load_comparisons`, with what identifies the data read (a study records it).

    Returns:
        The comparisons, and the source: ``file``, ``sha256`` and ``bytes`` of the file read, or for
        the hub its ``hub`` path, ``config``, ``split``, the dataset's ``fingerprint`` and ``rows``.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if path is None and (root := _source.local_data_dir()) is not None:
        path = _source.local_file(root, LOCAL_DIR, f"comparisons_{split}.jsonl")
    if path is not None:
        file = Path(path)
        comparisons = require_records(list(_read_jsonl(file)), source=str(file), what="comparisons")
        return comparisons, _file_source(file)
    dataset = _source.load_hub_split(HUB_PATH, split, name=HUB_CONFIG)
    source = f"hub dataset {HUB_PATH} ({HUB_CONFIG}, split {split})"
    comparisons = [parse_record(record, source=source, location=f"row index {i}") for i, record in enumerate(dataset)]
    identity = {"hub": HUB_PATH, "config": HUB_CONFIG, "split": split, "rows": len(comparisons)}
    return comparisons, {**identity, "fingerprint": getattr(dataset, "_fingerprint", None)}
