"""Tests of the NovelEval loader on hand-written fixtures (and on the real data when available)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, _source, noveleval

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the fixtures; returns its ``noveleval`` folder."""
    shutil.copytree(FIXTURES / "noveleval", tmp_path / "noveleval")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    return tmp_path / "noveleval"


def replace_line(path: Path, number: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = new
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.usefixtures("local_fixtures")
def test_rows_follow_the_common_schema() -> None:
    test = noveleval.load()["test"]
    assert set(test.column_names) == {"instance_id", "context", "items", "item_ids", "human_scores", "aspect"}
    assert test["instance_id"] == ["10", "11", "12"]
    first = test[0]
    assert first["context"] == "Which city hosted the 2031 robot football final?"
    # the passages in a seeded order (not qrels.txt's), every per-item list permuted alike
    assert sorted(first["item_ids"]) == ["10-0", "10-1", "10-2", "10-3", "10-4"]
    assert first["item_ids"] != sorted(first["item_ids"])
    score = dict(zip(first["item_ids"], first["human_scores"], strict=True))
    assert score == {"10-0": 2.0, "10-1": 0.0, "10-2": 1.0, "10-3": 0.0, "10-4": 2.0}
    assert first["aspect"] == "relevance"
    # CSV quoting: doubled quotes inside a quoted field, and a tab inside quotes.
    text = dict(zip(first["item_ids"], first["items"], strict=True))
    assert text["10-2"] == '"The final in Lisbon was the best yet," said the league\'s president.'
    assert text["10-4"] == "Lisbon hosted the final\tafter Madrid withdrew its bid."
    assert [len(items) for items in test["items"]] == [5, 4, 6]


@pytest.mark.usefixtures("local_fixtures")
def test_max_items_keeps_aligned_seeded_subsets() -> None:
    full = {row["instance_id"]: row for row in noveleval.load(seed=3)["test"]}  # the seed's item order
    capped = noveleval.load(max_items=4, seed=3)["test"]
    assert capped.to_list() == noveleval.load(max_items=4, seed=3)["test"].to_list()
    for row in capped:
        original = full[row["instance_id"]]
        assert len(row["items"]) == len(row["item_ids"]) == len(row["human_scores"]) == min(4, len(original["items"]))
        positions = [original["item_ids"].index(item_id) for item_id in row["item_ids"]]
        assert positions == sorted(positions)
        assert row["items"] == [original["items"][p] for p in positions]
        assert row["human_scores"] == [original["human_scores"][p] for p in positions]
    subsets = {
        tuple(capped_row["item_ids"]) for s in range(8) for capped_row in noveleval.load(max_items=2, seed=s)["test"]
    }
    assert len(subsets) > 3


@pytest.mark.parametrize("name", ["queries.tsv", "corpus.tsv", "qrels.txt"])
def test_missing_file_names_path(data_copy: Path, name: str) -> None:
    (data_copy / name).unlink()
    with pytest.raises(FileNotFoundError) as info:
        noveleval.load()
    assert str(data_copy / name) in str(info.value) and DATA_ENV_VAR in str(info.value)


@pytest.mark.parametrize(
    ("name", "line", "new", "field", "fragment"),
    [
        ("qrels.txt", 3, "10 Q0 10-2 3", "rel", "value 3 is not one of 0, 1, 2"),
        ("qrels.txt", 3, "10 Q0 10-2 high", "rel", "must be an integer"),
        ("qrels.txt", 3, "10 Q0 10-99 1", "docid", "'10-99' is not a passage id"),
        ("qrels.txt", 3, "77 Q0 10-2 1", "qid", "'77' is not a query id"),
        ("qrels.txt", 3, "10 10-2 1", None, "has 3 columns, expected 4"),
        ("qrels.txt", 3, "10 Q0 10-1 1", "docid", "judged twice"),
        ("corpus.tsv", 4, "10-3\tTickets sold\tout fast.", None, "has 3 columns, expected 2"),
        ("corpus.tsv", 4, "10-2\tA repeated id.", "docid", "repeats docid '10-2'"),
        ("corpus.tsv", 4, "10-3\t ", "content", "is empty"),
        ("queries.tsv", 2, "11", None, "has 1 columns, expected 2"),
    ],
)
def test_malformed_line_names_file_line_and_field(
    data_copy: Path, name: str, line: int, new: str, field: str | None, fragment: str
) -> None:
    replace_line(data_copy / name, line, new)
    with pytest.raises(DatasetFormatError) as info:
        noveleval.load()
    message = str(info.value)
    assert f"{data_copy / name} line {line}:" in message and fragment in message
    if field is not None:
        assert f"field '{field}'" in message


def test_query_without_two_judgements_is_rejected(data_copy: Path) -> None:
    qrels = data_copy / "qrels.txt"
    kept = [line for line in qrels.read_text().splitlines() if not line.startswith("11 ") or "11-0" in line]
    qrels.write_text("\n".join(kept) + "\n")
    with pytest.raises(DatasetFormatError, match="query '11' .* has 1 judged passages"):
        noveleval.load()


def test_online_path_downloads_pinned_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))
    offline = noveleval.load(max_items=3)["test"].to_list()
    monkeypatch.delenv(DATA_ENV_VAR)
    requested: dict[str, str] = {}

    def fake_download(urls: dict[str, str]) -> dict[str, Path]:
        requested.update(urls)
        return {key: FIXTURES / "noveleval" / key for key in urls}

    monkeypatch.setattr(_source, "download", fake_download)
    assert noveleval.load(max_items=3)["test"].to_list() == offline
    base = "https://raw.githubusercontent.com/sunnweiwei/RankGPT/0d62bc3855c7c118048a7c47c18e719b938e291a/NovelEval"
    assert requested == {name: f"{base}/{name}" for name in ("queries.tsv", "corpus.tsv", "qrels.txt")}


@pytest.mark.usefixtures("real_data")
def test_real_data_counts() -> None:
    test = noveleval.load()["test"]
    assert test.num_rows == 21
    assert all(len(items) == 20 for items in test["items"])
    assert Counter(score for row in test["human_scores"] for score in row) == {0.0: 290, 1.0: 40, 2.0: 90}
    assert all(item_id.startswith(f"{row['instance_id']}-") for row in test for item_id in row["item_ids"])
