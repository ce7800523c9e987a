"""TriviaQA (Joshi et al., 2017): closed-book questions with their answer aliases.

Used by the generator-validator task ``logic_consistency_gv_triviaqa``. One row per question:
``qid``, ``question``, ``gold_answer`` (``answer.value`` online) and ``aliases`` (every accepted
spelling, ``answer.aliases`` online; non-empty).

Sources: offline, ``$LOGIC_CONSISTENCY_DATA/triviaqa/triviaqa.json`` (a JSON list of objects
``{qid, question, gold_answer, aliases}``; 150 validation questions, see the data folder's
``SOURCE.md``); online, hub dataset ``mandarjoshi/trivia_qa`` config ``rc.nocontext`` split
``validation``. Errors name the file, the line where the offending record starts and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.common import read_text

from . import _source
from ._common import DatasetFormatError, make_dataset_dict, require_records, require_str, require_str_list

__all__ = ["FEATURES", "HUB_CONFIG", "HUB_PATH", "HUB_SPLIT", "LOCAL_FILE", "build_row", "load"]

HUB_PATH = "mandarjoshi/trivia_qa"
HUB_CONFIG = "rc.nocontext"
HUB_SPLIT = "validation"
#: Hub revision to load; ``None`` = the default branch (the data README does not pin one).
HUB_REVISION: str | None = None
LOCAL_DIR = "triviaqa"
LOCAL_FILE = "triviaqa.json"
FEATURES = datasets.Features(
    {
        "qid": datasets.Value("string"),
        "question": datasets.Value("string"),
        "gold_answer": datasets.Value("string"),
        "aliases": datasets.Sequence(datasets.Value("string")),
    }
)


def build_row(record: Mapping[str, Any], *, source: str, location: str) -> dict[str, Any]:
    """Validate one local-format record (``qid, question, gold_answer, aliases``).

    Raises:
        DatasetFormatError: A field is missing, not a (non-empty) string, or ``aliases`` is not a
            non-empty list of non-empty strings.
    """
    for field in ("qid", "question", "gold_answer", "aliases"):
        if field not in record:
            raise DatasetFormatError(source, location, field, "is missing")
    return {
        "qid": require_str(record["qid"], source=source, location=location, field="qid").strip(),
        "question": require_str(record["question"], source=source, location=location, field="question").strip(),
        "gold_answer": require_str(record["gold_answer"], source=source, location=location, field="gold_answer"),
        "aliases": require_str_list(record["aliases"], source=source, location=location, field="aliases", min_length=1),
    }


def _hub_record(record: Mapping[str, Any], *, source: str, location: str) -> dict[str, Any]:
    """Map one hub row (``question_id``, ``question``, ``answer.{value, aliases}``) to the local format."""
    for field in ("question_id", "question", "answer"):
        if field not in record:
            raise DatasetFormatError(source, location, field, "is missing")
    answer = record["answer"]
    if not isinstance(answer, Mapping):
        raise DatasetFormatError(source, location, "answer", f"must be a mapping, got {type(answer).__name__}")
    for key in ("value", "aliases"):
        if key not in answer:
            raise DatasetFormatError(source, location, f"answer.{key}", "is missing")
    value = require_str(answer["value"], source=source, location=location, field="answer.value")
    aliases = require_str_list(
        answer["aliases"], source=source, location=location, field="answer.aliases", min_length=1
    )
    return build_row(
        {"qid": record["question_id"], "question": record["question"], "gold_answer": value, "aliases": aliases},
        source=source,
        location=location,
    )


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def iter_json_array(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, element)`` for each element of the JSON array in ``path``.

    ``line`` is the 1-based line where the element starts, so that an error about one record can
    point at it (``json.load`` would only give the elements).

    Raises:
        DatasetFormatError: The file is not a JSON array (message names the line of the problem).
    """
    source = str(path)
    text = read_text(path)
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    if position >= len(text) or text[position] != "[":
        raise DatasetFormatError(source, f"line {_line_of(text, position)}", None, "must hold a JSON list of objects")
    first = _skip_space(text, position + 1)
    if first < len(text) and text[first] == "]":
        return
    next_position: int | None = first
    while next_position is not None:
        position = next_position
        try:
            element, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise DatasetFormatError(source, f"line {error.lineno}", None, f"is not valid JSON ({error.msg})") from None
        yield _line_of(text, position), element
        next_position = _after_element(text, _skip_space(text, end), source)


def _skip_space(text: str, position: int) -> int:
    """The first position from ``position`` on that is not JSON whitespace."""
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _after_element(text: str, position: int, source: str) -> int | None:
    """After an array element: where the next one starts (after ``,``), or ``None`` at the array's end
    (``]``, then nothing but whitespace)."""
    if position < len(text) and text[position] == ",":
        return _skip_space(text, position + 1)
    if position < len(text) and text[position] == "]":
        if _skip_space(text, position + 1) != len(text):
            location = f"line {_line_of(text, position)}"
            raise DatasetFormatError(source, location, None, "has text after the JSON list")
        return None
    raise DatasetFormatError(
        source, f"line {_line_of(text, position)}", None, "is not valid JSON (expected ',' or ']')"
    )


def _read_local(path: Path) -> list[dict[str, Any]]:
    rows, locations = [], []
    for line, record in iter_json_array(path):
        location = f"line {line}"
        if not isinstance(record, dict):
            raise DatasetFormatError(str(path), location, None, "must be a JSON object")
        rows.append(build_row(record, source=str(path), location=location))
        locations.append(location)
    _check_unique_ids(rows, str(path), locations)
    return require_records(rows, source=str(path), what="TriviaQA questions")


def load_hub_split() -> datasets.Dataset:
    """Load the hub split (network or the ``datasets`` cache); replaced by ``monkeypatch`` in tests."""
    return _source.load_hub_split(HUB_PATH, HUB_SPLIT, HUB_REVISION, name=HUB_CONFIG)


def _read_hub() -> list[dict[str, Any]]:
    source = f"hub dataset {HUB_PATH} (config {HUB_CONFIG}, split {HUB_SPLIT})"
    rows = [
        _hub_record(record, source=source, location=f"row index {index}")
        for index, record in enumerate(load_hub_split())
    ]
    _check_unique_ids(rows, source, [f"row index {index}" for index in range(len(rows))])
    return rows


def _check_unique_ids(rows: list[dict[str, Any]], source: str, locations: list[str]) -> None:
    seen: set[str] = set()
    for row, location in zip(rows, locations):
        if row["qid"] in seen:
            raise DatasetFormatError(source, location, "qid", f"repeats qid {row['qid']!r}")
        seen.add(row["qid"])


def load() -> datasets.DatasetDict:
    """Load the TriviaQA questions (local file if ``LOGIC_CONSISTENCY_DATA`` is set, else the hub).

    Returns:
        ``DatasetDict`` with one split ``"test"`` (150 rows for the local file).

    Raises:
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but the file is missing.
        DatasetFormatError: A record is malformed or repeats a ``qid``.
    """
    root = _source.local_data_dir()
    rows = _read_local(_source.local_file(root, LOCAL_DIR, LOCAL_FILE)) if root is not None else _read_hub()
    return make_dataset_dict(rows, FEATURES)
