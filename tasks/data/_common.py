"""Pieces shared by the pairwise-judgement loaders: errors, field checks, item cap, output schema.

Every loader returns the same row schema (see :func:`pairwise_features`) so that the task YAML and
the metrics never need to know which dataset they are looking at.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.common import JsonLineError, instance_rng, read_jsonl, select_item_indices
from logic_consistency.options import OptionError, OptionTypeError, check_option

__all__ = [
    "jsonl_objects",
    "DatasetFormatError",
    "apply_cap",
    "cap_row",
    "check_human_scores",
    "check_max_items",
    "check_options",
    "delimited_records",
    "instance_rng",
    "make_dataset_dict",
    "pairwise_dataset",
    "pairwise_features",
    "require_id",
    "require_int",
    "require_records",
    "require_score",
    "require_str",
    "require_str_list",
    "select_item_indices",
    "shuffle_items",
]


class DatasetFormatError(ValueError):
    """A source file (or hub row) does not have the expected format.

    The message always names the source (file path or hub dataset), the location (line or row) and,
    when one field is to blame, that field, so that a user can open the file and fix it.

    Attributes:
        source: File path or hub dataset description.
        location: ``"line 3"``, ``"row index 2"``, ... or ``None`` when the whole source is at fault.
        field: Name of the offending field, or ``None``.
        problem: What is wrong, in words.
    """

    def __init__(self, source: str, location: str | None, field: str | None, problem: str) -> None:
        self.source = source
        self.location = location
        self.field = field
        self.problem = problem
        where = source if location is None else f"{source} {location}"
        what = problem if field is None else f"field '{field}' {problem}"
        super().__init__(f"{where}: {what}")


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL source file, read by the suite's one
    JSONL reader (:func:`logic_consistency.common.read_jsonl`).

    Raises:
        DatasetFormatError: A line is not valid JSON, or not a JSON object (naming the file and line).
    """
    try:
        for number, record in read_jsonl(path):
            if not isinstance(record, dict):
                raise DatasetFormatError(str(path), f"line {number}", None, "must be a JSON object")
            yield number, record
    except JsonLineError as error:
        raise DatasetFormatError(str(path), f"line {error.line}", None, f"is {error.problem}") from None


def delimited_records(reader: Any, *, source: str, kind: str = "CSV") -> Iterator[tuple[int, int, list[str]]]:
    """Yield ``(first line, last line, fields)`` of each record a ``csv.reader`` reads.

    A quoted field may span lines, so a record has a first and a last physical line; callers
    name whichever their messages use. Records already read before the call are not repeated.

    Args:
        reader: A ``csv.reader`` over the source file.
        source: The file, for error messages.
        kind: The format's name in error messages (``"CSV"``, ``"TSV"``).

    Raises:
        DatasetFormatError: A record is malformed; the message names the file and line.
    """
    previous_end = reader.line_num
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise DatasetFormatError(
                source, f"line {reader.line_num}", None, f"is not valid {kind} ({error})"
            ) from None
        first, previous_end = previous_end + 1, reader.line_num
        yield first, previous_end, fields


def require_records(records: Any, *, source: str, what: str, header: bool = False) -> Any:
    """Return ``records`` if there is at least one, else raise a :class:`DatasetFormatError` naming ``source``.

    An empty data file would otherwise end in an error far from its cause (lm-eval's
    ``IndexError: Invalid key: 0 is out of bounds for size 0``, or a task with no documents).

    Args:
        records: What the file yielded (any sized collection).
        source: The file.
        what: What a record is, in words (``"comparisons"``, ``"queries"``).
        header: The format has a header line (the message then says "only its header").
    """
    if len(records) == 0:
        shape = "is empty or holds only its header line" if header else "is empty"
        raise DatasetFormatError(source, None, None, f"{shape}: no {what} to evaluate")
    return records


def require_str(value: Any, *, source: str, location: str, field: str, allow_empty: bool = False) -> str:
    """Return ``value`` if it is a (non-blank) string, else raise :class:`DatasetFormatError`."""
    if not isinstance(value, str):
        raise DatasetFormatError(source, location, field, f"must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise DatasetFormatError(source, location, field, "is empty")
    return value


def require_id(value: Any, *, source: str, location: str, field: str) -> str:
    """Return a record id (a non-blank string, or an integer) as text; null, a bool or a float is an error.

    ``str(None)`` would make every null id the same id ``'None'``, so an id is never converted blindly.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DatasetFormatError(source, location, field, f"must be a string or an integer, got {value!r:.40}")
    return require_str(str(value), source=source, location=location, field=field)


def require_str_list(value: Any, *, source: str, location: str, field: str, min_length: int = 0) -> list[str]:
    """Return ``value`` if it is a list of non-blank strings with at least ``min_length`` entries."""
    if not isinstance(value, (list, tuple)):
        raise DatasetFormatError(source, location, field, f"must be a list, got {type(value).__name__}")
    if len(value) < min_length:
        raise DatasetFormatError(source, location, field, f"has {len(value)} values, expected at least {min_length}")
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not entry.strip():
            raise DatasetFormatError(
                source, location, field, f"entry {index} must be a non-empty string, got {entry!r:.60}"
            )
    return list(value)


def require_score(value: Any, *, source: str, location: str, field: str, low: float, high: float) -> float:
    """Return ``value`` as a float if it is a finite number in ``[low, high]``."""
    # bool is an int subclass; a stray true/false in a score column is a format error, not 1/0.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DatasetFormatError(source, location, field, f"must be a number, got {value!r:.60}")
    number = float(value)
    if not math.isfinite(number):
        raise DatasetFormatError(source, location, field, f"value {value!r} is not a finite number")
    if not low <= number <= high:
        raise DatasetFormatError(source, location, field, f"value {value!r} is outside [{low:g}, {high:g}]")
    return number


def check_human_scores(rows: Any, *, source: str) -> None:
    """Refuse, before any model call, rows whose ``human_scores`` cannot be scored.

    Each row's ``human_scores`` must hold one finite number per entry of ``items`` (not a bool, not
    NaN or inf, not missing). A source with no ``human_scores`` column at all is accepted: its tasks
    then report no human agreement. Without this check a bad score surfaced only when the metrics
    ran, after every model call of the run.

    Args:
        rows: The loaded rows (a ``datasets.Dataset`` or any iterable of mappings).
        source: What produced them (a file, a hub dataset, a loader), for the message.

    Raises:
        DatasetFormatError: Naming ``source``, the row (1-based, with its ``instance_id``) and the field.
    """
    if "human_scores" not in getattr(rows, "column_names", ["human_scores"]):
        return
    for number, row in enumerate(rows, start=1):
        if "human_scores" not in row:
            continue
        location = f"row {number} (instance_id {row.get('instance_id')!r:.60})"
        scores, items = row["human_scores"], row.get("items")
        if not isinstance(scores, (list, tuple)):
            raise DatasetFormatError(source, location, "human_scores", f"must be a list of numbers, got {scores!r:.60}")
        if isinstance(items, (list, tuple)) and len(scores) != len(items):
            raise DatasetFormatError(
                source, location, "human_scores", f"has {len(scores)} values, expected {len(items)} (one per item)"
            )
        for index, value in enumerate(scores):
            require_score(
                value, source=source, location=location, field=f"human_scores[{index}]", low=-math.inf, high=math.inf
            )


def require_int(text: str, *, source: str, location: str, field: str) -> int:
    """Parse a decimal integer written in a text file."""
    stripped = text.strip()
    if not stripped.lstrip("-").isdigit():
        raise DatasetFormatError(source, location, field, f"must be an integer, got {text!r:.60}")
    return int(stripped)


def check_max_items(
    max_items: Any, *, minimum: int | None = None, name: str = "max_items", where: str | None = None, why: str = ""
) -> int | None:
    """The item cap ``max_items`` (declared in ``_options_yaml``: ``None`` = all, else at least 2), checked once.

    Args:
        max_items: The value.
        minimum: A tighter lower bound (a pairwise task's largest K); the declared one (2) by default.
        name: How messages name it (``metadata.max_items``).
        where: How messages name the source (``task 'logic_consistency_summeval'``).
        why: Appended to a bound's message (why the bound, what to do).

    Raises:
        OptionTypeError: Not an integer or ``None``.
        OptionError: Below the bound.
    """
    try:
        cap: int | None = check_option("max_items", max_items, label=name, where=where, minimum=minimum)
    except OptionTypeError:
        raise
    except OptionError as error:
        if not why:
            raise
        raise OptionError(f"{error}; {why}") from None
    return cap


def check_options(max_items: int | None, seed: int) -> None:
    """Validate the options shared by every loader (declared in ``_options_yaml``).

    Raises:
        TypeError: ``max_items`` or ``seed`` is not an integer (an ``OptionTypeError``, also a ``ValueError``).
        ValueError: ``max_items`` < 2 (a pairwise comparison needs two items) or ``seed`` < 0.
    """
    check_max_items(max_items)
    check_option("seed", seed)


def pairwise_features(extra: Mapping[str, datasets.features.FeatureType] | None = None) -> datasets.Features:
    """The common row schema, plus dataset-specific ``extra`` fields."""
    # Sequence (not List) keeps compatibility with datasets 2.x, which setup.cfg allows.
    features: dict[str, datasets.features.FeatureType] = {
        "instance_id": datasets.Value("string"),
        "context": datasets.Value("string"),
        "items": datasets.Sequence(datasets.Value("string")),
        "item_ids": datasets.Sequence(datasets.Value("string")),
        "human_scores": datasets.Sequence(datasets.Value("float64")),
        "aspect": datasets.Value("string"),
    }
    features.update(extra or {})
    return datasets.Features(features)


def make_dataset_dict(rows: Sequence[Mapping[str, Any]], features: datasets.Features) -> datasets.DatasetDict:
    """Build the ``DatasetDict`` with the single split ``"test"`` that lm-eval expects."""
    # from_dict (not from_list) so that an empty result still gets its columns.
    columns = {name: [row[name] for row in rows] for name in features}
    return datasets.DatasetDict({"test": datasets.Dataset.from_dict(columns, features=features)})


def pairwise_dataset(
    rows: Iterable[Mapping[str, Any]],
    max_items: int | None,
    seed: int,
    *,
    extra: Mapping[str, datasets.features.FeatureType] | None = None,
    context_of: Callable[[Sequence[str]], str] | None = None,
) -> datasets.DatasetDict:
    """A pairwise loader's result: its rows capped (:func:`apply_cap`) in the common schema plus ``extra``."""
    return make_dataset_dict(apply_cap(rows, max_items, seed, context_of), pairwise_features(extra))


def cap_row(
    row: Mapping[str, Any],
    max_items: int | None,
    seed: int,
    context_of: Callable[[Sequence[str]], str] | None = None,
) -> dict[str, Any]:
    """Keep a seeded subset of at most ``max_items`` items of one row: the suite's one item cap.

    Every list column as long as ``items`` (``items``, ``item_ids``, ``human_scores``, any other
    per-item list) is subset with the same indices, so they stay aligned; the subset
    (:func:`select_item_indices`) depends only on ``seed`` and ``instance_id``. A row with no more
    than ``max_items`` items (or ``max_items=None``) is returned as it is.

    Args:
        row: One complete row.
        max_items: Cap (``None`` = keep everything), already checked (:func:`check_max_items`).
        seed: Global seed.
        context_of: The loader's ``context`` builder when its ``context`` lists the items (CaTeRS):
            a capped row's ``context`` is rebuilt from its kept items, so it never names a dropped one.
    """
    n = len(row["items"])
    keep = select_item_indices(n, max_items, seed, str(row["instance_id"]))
    if len(keep) == n:
        return dict(row)
    capped = {
        name: [value[index] for index in keep] if isinstance(value, list) and len(value) == n else value
        for name, value in row.items()
    }
    if context_of is not None:
        capped["context"] = context_of(capped["items"])
    return capped


def apply_cap(
    rows: Iterable[Mapping[str, Any]],
    max_items: int | None,
    seed: int,
    context_of: Callable[[Sequence[str]], str] | None = None,
) -> list[dict[str, Any]]:
    """:func:`cap_row` on every row (arguments as there)."""
    return [cap_row(row, max_items, seed, context_of) for row in rows]


def shuffle_items(row: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """``row`` with its items in a seeded order (CaTeRS's: ``instance_rng(seed, instance_id, "shuffle")``),
    every per-item list permuted alike, so that no source order (BM25's, the relevance file's) decides
    which passage a pair shows first."""
    n = len(row["items"])
    order = [int(k) for k in instance_rng(seed, str(row["instance_id"]), "shuffle").permutation(n)]
    return {name: [value[k] for k in order] if isinstance(value, list) and len(value) == n else value
            for name, value in row.items()}  # fmt: skip
