"""Tests of the SummEval loader on hand-written fixtures (and on the real data when available)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, _source, summeval

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
FIXTURE_FILE = FIXTURES / "summeval" / "summeval_hub_format.jsonl"


def fixture_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> Path:
    path = tmp_path / "summeval" / summeval.LOCAL_FILE
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    return path


@pytest.mark.usefixtures("local_fixtures")
def test_rows_follow_the_common_schema() -> None:
    result = summeval.load()
    assert list(result) == ["test"]
    test = result["test"]
    assert isinstance(test, datasets.Dataset)
    assert set(test.column_names) == {"instance_id", "context", "items", "item_ids", "human_scores", "aspect"}
    records = fixture_records()
    assert test.num_rows == len(records)
    for row, record in zip(test, records):
        assert row["instance_id"] == record["id"]
        assert row["context"] == record["text"]
        assert row["items"] == record["machine_summaries"]
        assert row["item_ids"] == [f"S{i}" for i in range(len(record["machine_summaries"]))]
        assert row["human_scores"] == pytest.approx(record["coherence"])
        assert row["aspect"] == "coherence"


@pytest.mark.usefixtures("local_fixtures")
def test_aspect_option() -> None:
    test = summeval.load(aspect="fluency")["test"]
    assert test[1]["human_scores"] == pytest.approx(fixture_records()[1]["fluency"])
    assert test[1]["aspect"] == "fluency"
    with pytest.raises(ValueError, match="aspect"):
        summeval.load(aspect="overall")


@pytest.mark.usefixtures("local_fixtures")
def test_max_items_keeps_aligned_seeded_subsets() -> None:
    full = {row["instance_id"]: row for row in summeval.load()["test"]}
    capped = summeval.load(max_items=3, seed=5)["test"]
    assert capped.to_list() == summeval.load(max_items=3, seed=5)["test"].to_list()
    for row in capped:
        original = full[row["instance_id"]]
        assert len(row["items"]) == len(row["item_ids"]) == len(row["human_scores"]) == 3
        positions = [int(item_id[1:]) for item_id in row["item_ids"]]
        assert positions == sorted(positions)  # original order kept
        assert row["items"] == [original["items"][p] for p in positions]
        assert row["human_scores"] == [original["human_scores"][p] for p in positions]
    subsets = {tuple(tuple(r["item_ids"]) for r in summeval.load(max_items=3, seed=s)["test"]) for s in range(8)}
    assert len(subsets) > 1


def test_missing_file_names_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        summeval.load()
    assert str(tmp_path / "summeval" / "summeval_hub_format.jsonl") in str(info.value)
    assert DATA_ENV_VAR in str(info.value)


def _broken(change: str) -> list[str]:
    """The fixture lines, with the second record changed as ``change`` says."""
    records = fixture_records()
    record = records[1]
    if change == "short_coherence":
        record["coherence"] = record["coherence"][:-1]
    elif change == "score_out_of_range":
        record["fluency"][2] = 6.0
    elif change == "score_is_bool":
        record["relevance"][0] = True
    elif change == "score_not_list":
        record["consistency"] = 3.0
    elif change == "missing_text":
        del record["text"]
    elif change == "summaries_not_strings":
        record["machine_summaries"][1] = 7
    elif change == "empty_id":
        record["id"] = " "
    elif change == "duplicate_id":
        record["id"] = records[0]["id"]
    lines = [json.dumps(r) for r in records]
    if change == "bad_json":
        lines[1] = lines[1][:-1]
    return lines


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ("short_coherence", "coherence", "has 4 values, expected 5 (one per machine summary)"),
        ("score_out_of_range", "fluency[2]", "outside [1, 5]"),
        ("score_is_bool", "relevance[0]", "must be a number"),
        ("score_not_list", "consistency", "must be a list"),
        ("missing_text", "text", "is missing"),
        ("summaries_not_strings", "machine_summaries", "entry 1"),
        ("empty_id", "id", "is empty"),
        ("bad_json", None, "not valid JSON"),
    ],
)
def test_malformed_record_names_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str, field: str | None, fragment: str
) -> None:
    path = write_records(tmp_path, monkeypatch, _broken(change))
    with pytest.raises(DatasetFormatError) as info:
        summeval.load()
    message = str(info.value)
    assert str(path) in message and "line 2" in message and fragment in message
    if field is not None:
        assert f"field '{field}'" in message


def test_duplicate_ids_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_records(tmp_path, monkeypatch, _broken("duplicate_id"))
    with pytest.raises(DatasetFormatError, match="field 'id' repeats id 'fx-article-1'"):
        summeval.load()


def test_online_path_reads_the_hub_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))
    offline = summeval.load(max_items=3)["test"].to_list()
    monkeypatch.delenv(DATA_ENV_VAR)
    calls: list[tuple[str, str, str | None]] = []

    def fake_hub(path: str, split: str, revision: str | None = None) -> datasets.Dataset:
        calls.append((path, split, revision))
        return datasets.Dataset.from_list(fixture_records())

    monkeypatch.setattr(_source, "load_hub_split", fake_hub)
    online = summeval.load(max_items=3)["test"].to_list()
    assert calls == [("mteb/summeval", "test", None)]
    assert online == offline


def test_online_malformed_row_names_hub_dataset_and_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    records = fixture_records()
    records[2]["coherence"] = [0.5] * len(records[2]["machine_summaries"])
    monkeypatch.setattr(_source, "load_hub_split", lambda *args, **kw: datasets.Dataset.from_list(records))
    with pytest.raises(DatasetFormatError, match=r"mteb/summeval .*row index 2: field 'coherence\[0\]'"):
        summeval.load()


@pytest.mark.usefixtures("real_data")
def test_real_data_counts() -> None:
    test = summeval.load()["test"]
    assert test.num_rows == 100
    assert len(set(test["instance_id"])) == 100
    assert all(len(items) == 16 for items in test["items"])
    scores = [score for row in test["human_scores"] for score in row]
    assert len(scores) == 1600 and min(scores) >= 1.0 and max(scores) <= 5.0
    assert summeval.load(max_items=6)["test"].num_rows == 100
