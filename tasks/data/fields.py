"""A dataset's fields mapped onto a family's row schema in YAML (``fields:``), so a new dataset needs no loader.

lm-eval loads the data (``dataset_path: json`` / ``csv`` / a hub name, ``dataset_kwargs``); the
task's ``fields:`` names, for each schema field, the source column that holds it: a column name, a
dotted path into a nested column (``answer.value``), or a list of columns gathered into one list
(``items: [passage_1, passage_2]``, for flat CSV tables). Unmapped schema fields are read from
columns of the same name; every other column stays, so prompt templates can use it. The YAML is
checked before any data loads, the rows when they load; errors name the task, the field and the
column (with the closest one), or the split, row and field of a bad value.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import datasets

from logic_consistency.options import OptionError, reject_unknown
from logic_consistency.tasks.data._common import DatasetFormatError, require_id, require_str, require_str_list

#: A mapped field's source: one column (or dotted path), or several gathered into a list.
Source = str | tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    """A family's row schema: its required and optional fields and the kind of each."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()  # lists of non-empty strings (items, item_ids)
    scores: tuple[str, ...] = ()  # lists of finite numbers (human_scores)
    ids: tuple[str, ...] = ("instance_id",)  # a string or an integer, read as text
    min_items: int = 2
    nonempty: tuple[str, ...] = ()  # lists that need an entry, texts that need a non-blank one (GV)
    singletons: tuple[str, ...] = ()  # lists given as one string read as a one-entry list (GV answers)

    @property
    def fields(self) -> tuple[str, ...]:
        return (*self.required, *self.optional)


#: The pairwise row schema (``docs/adding-a-task.md``, "One row per instance").
PAIRWISE = Schema(
    required=("instance_id", "context", "items"),
    optional=("human_scores", "item_ids"),
    lists=("items", "item_ids"),
    scores=("human_scores",),
)
#: The GV question-answering row schema (``docs/adding-a-task.md``, "A GV task from a dataset"): the
#: question the generator answers and its accepted answers (a list, or one text column).
GV_QA = Schema(
    required=("instance_id", "question", "answers"),
    lists=("answers",),
    nonempty=("question", "answers"),
    singletons=("answers",),
)


def check_field_map(fields: Any, schema: Schema, *, where: str) -> dict[str, Source]:
    """The YAML ``fields:`` mapping checked before any data loads (``None``: every field by its own name).

    Raises:
        OptionError: Not a mapping; a key that is no schema field (with the closest); a source that is
            not a column name or a non-empty list of column names.
    """
    if fields is None:
        return {}
    if not isinstance(fields, Mapping):
        raise OptionError(f"{where}: fields must be a mapping of schema field -> source column, got {fields!r:.80}")
    reject_unknown(fields, schema.fields, where=f"{where}: fields", what="field")
    return {name: _check_source(name, source, where=where) for name, source in fields.items()}


def _check_source(name: str, source: Any, *, where: str) -> Source:
    """One ``fields:`` entry's source: a column name, or a non-empty list of column names (as a tuple).

    Raises:
        OptionError: Anything else, naming the field.
    """
    if isinstance(source, str) and source.strip():
        return source
    if isinstance(source, list) and source and all(isinstance(s, str) and s.strip() for s in source):
        return tuple(source)
    raise OptionError(
        f"{where}: fields.{name} must be a column name or a non-empty list of column names, got {source!r:.80}"
    )


def _lookup(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    """``(found, value)`` of a column, descending dotted paths into nested mappings."""
    if column in row:
        return True, row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _check_columns(
    split: datasets.Dataset,
    sources: Mapping[str, Source],
    mapped_fields: Mapping[str, Source],
    *,
    where: str,
    name: str,
) -> None:
    """Every mapped column exists in the split (a dotted path: its first part), else name the closest."""
    columns = list(split.column_names)
    first = split[0] if len(split) else {}
    for field, source in sources.items():
        for column in (source,) if isinstance(source, str) else source:
            if _lookup(first, column)[0] or (not len(split) and column.split(".")[0] in columns):
                continue
            near = difflib.get_close_matches(column, columns, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            mapped = (
                f"fields.{field} names column {column!r}, which is not in the data"
                if field in mapped_fields
                else f"no column {column!r} in the data, and fields: does not map one"
            )
            raise DatasetFormatError(where, f"split {name!r}", field, f"is missing: {mapped}{hint}; columns: {columns}")


def _score(value: Any, *, where: str, location: str, field: str) -> float:
    """A finite number, or a text cell holding one (CSV)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise DatasetFormatError(where, location, field, f"must be a number, got {value!r:.60}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise DatasetFormatError(where, location, field, f"must be a finite number, got {value!r:.60}")
    return float(value)


def _convert(row: dict[str, Any], schema: Schema, *, where: str, location: str) -> None:
    """Check and convert the schema fields of one mapped row in place: ids, lists, scores, then texts."""
    for field in schema.ids:
        if field in row:
            row[field] = require_id(row[field], source=where, location=location, field=field)
    for field in schema.lists:
        if field in row:
            row[field] = _list_field(row[field], schema, where=where, location=location, field=field)
    for field in schema.scores:
        if field in row:
            row[field] = _scores(row[field], where=where, location=location, field=field)
    _convert_texts(row, schema, where=where, location=location)


def _list_field(value: Any, schema: Schema, *, where: str, location: str, field: str) -> list[str]:
    """A list field: non-blank strings, at least ``min_items`` (``items``) or one (``nonempty``); a
    ``singletons`` field given as one string or integer is read as a one-entry list (its text)."""
    minimum = schema.min_items if field == "items" else int(field in schema.nonempty)
    if field in schema.singletons and isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [str(value)]
    return require_str_list(value, source=where, location=location, field=field, min_length=minimum)


def _convert_texts(row: dict[str, Any], schema: Schema, *, where: str, location: str) -> None:
    """Check the row's other schema fields (neither ids, lists nor scores) in place: each a string, empty
    unless the schema's ``nonempty`` names it."""
    for field in schema.fields:
        if field in row and field not in (*schema.ids, *schema.lists, *schema.scores):
            allow_empty = field not in schema.nonempty
            row[field] = require_str(row[field], source=where, location=location, field=field, allow_empty=allow_empty)


def _scores(values: Any, *, where: str, location: str, field: str) -> list[float]:
    """A list of finite numbers (:func:`_score` for each, naming its index)."""
    if not isinstance(values, (list, tuple)):
        raise DatasetFormatError(where, location, field, f"must be a list of numbers, got {values!r:.60}")
    return [_score(v, where=where, location=location, field=f"{field}[{i}]") for i, v in enumerate(values)]


def _mapped_row(row: Mapping[str, Any], sources: Mapping[str, Source]) -> dict[str, Any]:
    out = dict(row)
    for field, source in sources.items():
        if isinstance(source, str):
            out[field] = _lookup(row, source)[1]
        else:
            out[field] = [_lookup(row, column)[1] for column in source]
    return out


def map_fields(
    dataset: Mapping[str, datasets.Dataset], fields: Mapping[str, Source], schema: Schema, *, where: str
) -> datasets.DatasetDict:
    """Each split's rows with the schema fields taken from their ``fields`` sources, checked.

    Args:
        dataset: The loaded splits.
        fields: :func:`check_field_map`'s result (unmapped required fields are read by their own name).
        schema: The family's row schema.
        where: The task and its data source, for messages.

    Raises:
        DatasetFormatError: A required field or a mapped column is missing (naming the closest column),
            or a value has the wrong type (naming the split, row and field).
    """
    sources: dict[str, Source] = {**{name: name for name in schema.required}, **fields}
    present = {f: s for f, s in sources.items() if f in fields or f in schema.required}
    return datasets.DatasetDict(
        {name: _map_split(split, present, fields, schema, where=where, name=name) for name, split in dataset.items()}
    )


def _map_split(
    split: datasets.Dataset,
    present: Mapping[str, Source],
    fields: Mapping[str, Source],
    schema: Schema,
    *,
    where: str,
    name: str,
) -> datasets.Dataset:
    """One split's rows mapped (``present``: the required and mapped fields' sources, plus the optional
    fields found by their own name) and checked; an empty split unchanged."""
    _check_columns(split, present, fields, where=where, name=name)
    optional = {f: f for f in schema.optional if f not in fields and f in split.column_names}
    rows = []
    for number, row in enumerate(split, start=1):
        mapped = _mapped_row(row, {**present, **optional})
        _convert(mapped, schema, where=where, location=f"split {name!r} row {number}")
        rows.append(mapped)
    return datasets.Dataset.from_list(rows) if rows else split
