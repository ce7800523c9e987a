"""Tests of the TriviaQA loader on hand-written fixtures (and on the real data when available)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, triviaqa

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
FIXTURE_FILE = FIXTURES / "triviaqa" / "triviaqa.json"


def fixture_records() -> list[dict[str, Any]]:
    return json.loads(FIXTURE_FILE.read_text(encoding="utf-8"))


def write_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "triviaqa" / "triviaqa.json"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    return path


def one_record_per_line(records: list[dict[str, Any]]) -> str:
    """The records as a JSON list with record k (0-based) on line k + 2."""
    return "[\n" + ",\n".join(json.dumps(record) for record in records) + "\n]\n"


def test_rows_follow_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))
    result = triviaqa.load()
    assert list(result) == ["test"]
    test = result["test"]
    assert isinstance(test, datasets.Dataset)
    assert set(test.column_names) == {"qid", "question", "gold_answer", "aliases"}
    records = fixture_records()
    assert test.num_rows == len(records) == 4
    for row, record in zip(test, records):
        assert row["qid"] == record["qid"]
        assert row["question"] == record["question"]
        assert row["gold_answer"] == record["gold_answer"]
        assert row["aliases"] == record["aliases"]


def test_missing_file_names_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        triviaqa.load()
    assert str(tmp_path / "triviaqa" / "triviaqa.json") in str(info.value)
    assert DATA_ENV_VAR in str(info.value)


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ("missing_question", "question", "is missing"),
        ("empty_qid", "qid", "is empty"),
        ("aliases_not_list", "aliases", "must be a list"),
        ("aliases_empty", "aliases", "has 0 values, expected at least 1"),
        ("alias_not_string", "aliases", "entry 1"),
        ("gold_not_string", "gold_answer", "must be a string"),
        ("duplicate_qid", "qid", "repeats qid 'fx_q1'"),
        ("not_object", None, "must be a JSON object"),
    ],
)
def test_malformed_record_names_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str, field: str | None, fragment: str
) -> None:
    records: list[Any] = fixture_records()
    record = records[2]
    if change == "missing_question":
        del record["question"]
    elif change == "empty_qid":
        record["qid"] = "  "
    elif change == "aliases_not_list":
        record["aliases"] = "Rome"
    elif change == "aliases_empty":
        record["aliases"] = []
    elif change == "alias_not_string":
        record["aliases"][1] = 7
    elif change == "gold_not_string":
        record["gold_answer"] = None
    elif change == "duplicate_qid":
        record["qid"] = "fx_q1"
    elif change == "not_object":
        records[2] = ["Rome"]
    path = write_file(tmp_path, monkeypatch, one_record_per_line(records))
    with pytest.raises(DatasetFormatError) as info:
        triviaqa.load()
    message = str(info.value)
    assert str(path) in message and "line 4" in message and fragment in message
    if field is not None:
        assert f"field '{field}'" in message


def test_invalid_json_names_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = one_record_per_line(fixture_records()).replace('"Mars", "The Red', '"Mars" "The Red')
    path = write_file(tmp_path, monkeypatch, text)
    with pytest.raises(DatasetFormatError, match=r"line 3: is not valid JSON") as info:
        triviaqa.load()
    assert str(path) in str(info.value)


def test_not_a_list_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(tmp_path, monkeypatch, json.dumps(fixture_records()[0]))
    with pytest.raises(DatasetFormatError, match="line 1: must hold a JSON list of objects"):
        triviaqa.load()


def test_online_path_maps_the_hub_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    hub_rows = [
        {
            "question_id": record["qid"],
            "question": record["question"],
            "question_source": "http://example.org",
            "answer": {"value": record["gold_answer"], "aliases": record["aliases"], "normalized_value": "x"},
        }
        for record in fixture_records()
    ]
    monkeypatch.setattr(triviaqa, "load_hub_split", lambda: datasets.Dataset.from_list(hub_rows))
    online = triviaqa.load()["test"].to_list()
    assert online == [{k: r[k] for k in ("qid", "question", "gold_answer", "aliases")} for r in fixture_records()]
    assert (triviaqa.HUB_PATH, triviaqa.HUB_CONFIG, triviaqa.HUB_SPLIT) == (
        "mandarjoshi/trivia_qa",
        "rc.nocontext",
        "validation",
    )


def test_online_malformed_row_names_hub_dataset_and_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    rows = [
        {"question_id": "a", "question": "Q?", "answer": {"value": "x", "aliases": ["x"]}},
        {"question_id": "b", "question": "Q?", "answer": {"value": "x"}},
    ]
    monkeypatch.setattr(triviaqa, "load_hub_split", lambda: rows)
    with pytest.raises(
        DatasetFormatError, match=r"mandarjoshi/trivia_qa .*row index 1: field 'answer.aliases' is missing"
    ):
        triviaqa.load()


@pytest.mark.usefixtures("real_data")
def test_real_data_counts() -> None:
    test = triviaqa.load()["test"]
    assert test.num_rows == 150
    assert len(set(test["qid"])) == 150
    # SOURCE.md: gold_answer is always one of the aliases
    assert all(row["gold_answer"] in row["aliases"] for row in test)
