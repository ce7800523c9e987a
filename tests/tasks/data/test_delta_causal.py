"""Tests of the δ-CAUSAL loader on hand-written fixtures (and on the real data when available)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, _source, delta_causal

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
TEST_FILE = "shuffled_test_extended.csv"
FIELDS = {
    "id",
    "pair_id",
    "domain",
    "keyword",
    "keyword_model",
    "cause",
    "effect_interval",
    "effect",
    "defeater_interval",
    "defeater",
    "supporter",
    "display_order",
}


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the fixtures; returns its test file."""
    shutil.copytree(FIXTURES / "delta_causal", tmp_path / "delta_causal")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    return tmp_path / "delta_causal" / TEST_FILE


def replace_line(path: Path, number: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = new
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.usefixtures("local_fixtures")
def test_one_document_per_row_with_the_row_fields() -> None:
    result = delta_causal.load()
    assert list(result) == ["test"]
    test = result["test"]
    assert set(test.column_names) == FIELDS
    assert test["id"] == ["101", "101-1", "101-2", "202", "202-1"]
    assert test["pair_id"] == ["101", "101", "101", "202", "202"]
    first = test[0]
    assert first["cause"] == "Mara takes the night ferry to the island."
    assert first["effect_interval"] == "Days later,"
    assert first["effect"] == "Mara knows every café on the island by name."
    assert first["defeater_interval"] == "Hours later,"
    assert first["defeater"] == "A storm forces the ferry to turn back to the mainland."
    assert first["supporter"] == "Mara plans to stay on the island for two weeks."
    assert first["keyword_model"] == "chatgpt"
    # CSV quoting: a comma and doubled quotes inside quoted fields
    assert test[1]["defeater"] == "Mara realises she boarded the wrong ferry, one bound for the city."
    assert test[2]["defeater"] == 'The island\'s cafés all close for the "off season".'


@pytest.mark.usefixtures("local_fixtures")
def test_display_orders_are_seeded_per_document_permutations() -> None:
    test = delta_causal.load()["test"]
    orders = [tuple(order) for order in test["display_order"]]
    assert all(sorted(order) == list(range(10)) for order in orders)
    assert len(set(orders)) == len(orders)  # differs between documents
    assert orders == [tuple(order) for order in delta_causal.load()["test"]["display_order"]]  # stable
    assert orders != [tuple(order) for order in delta_causal.load(seed=7)["test"]["display_order"]]
    # the order depends on the document, not its position in the file
    assert delta_causal.load(one_per_pair=True)["test"][1]["display_order"] == list(orders[3])


@pytest.mark.usefixtures("local_fixtures")
def test_one_per_pair_keeps_the_first_row_of_each_pair() -> None:
    assert delta_causal.load(one_per_pair=True)["test"]["id"] == ["101", "202"]


@pytest.mark.usefixtures("local_fixtures")
def test_validation_file_names_its_supporter_column_assumption() -> None:
    row = delta_causal.load(split="validation")["test"][0]
    assert row["id"] == "301"
    assert row["supporter"] == "Leo follows a structured training plan."


@pytest.mark.usefixtures("local_fixtures")
def test_bad_options() -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        delta_causal.load(split="dev")
    with pytest.raises(TypeError, match="one_per_pair"):
        delta_causal.load(one_per_pair="yes")
    with pytest.raises(ValueError, match="seed"):
        delta_causal.load(seed=-1)


def test_missing_file_names_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        delta_causal.load()
    assert str(tmp_path / "delta_causal" / TEST_FILE) in str(info.value)
    assert DATA_ENV_VAR in str(info.value)


GOOD_ROW = '9,travel,x,none,A cause.,"Days later,",An effect.,"Hours later,",A defeater.,A supporter.'


@pytest.mark.parametrize(
    ("line", "new", "location", "field", "fragment"),
    [
        (3, '101-1,travel,ferry,chatgpt,,"Days later,",Effect.,"Minutes later,",D.,S.', "line 3", "cause", "is empty"),
        (
            2,
            '101,travel,ferry,chatgpt,Cause.,"Days later,",Effect.,"Hours later,",D.,  ',
            "line 2",
            "supporter",
            "is empty",
        ),
        (2, ',travel,ferry,chatgpt,Cause.,"Days later,",Effect.,"Hours later,",D.,S.', "line 2", "ID", "is empty"),
        (5, "202,science,solar panels,gpt3,Cause.", "line 5", None, "has 5 fields, expected 10"),
        (6, GOOD_ROW.replace("9,", "101-2,", 1), "line 6", "ID", "repeats ID '101-2' (first seen on line 4)"),
        (
            1,
            "ID,domain,keyword,keyword-model,cause,long_term_interval,long_term_effect,defeater_time_interval,defeater",
            "line 1",
            "supporter",
            "is missing from the header",
        ),
    ],
)
def test_malformed_rows_name_file_line_and_field(
    data_copy: Path, line: int, new: str, location: str, field: str | None, fragment: str
) -> None:
    replace_line(data_copy, line, new)
    with pytest.raises(DatasetFormatError) as info:
        delta_causal.load()
    message = str(info.value)
    assert message.startswith(f"{data_copy} {location}: ")
    assert fragment in message
    if field is not None:
        assert f"field '{field}'" in message


def test_a_multi_line_record_is_reported_at_its_first_line(data_copy: Path) -> None:
    replace_line(
        data_copy, 2, '101,travel,ferry,chatgpt,"A cause\nover two lines.","Days later,",E.,"Hours later,",D.,'
    )
    with pytest.raises(DatasetFormatError, match=r"line 2: field 'supporter' is empty"):
        delta_causal.load()


def test_empty_file(data_copy: Path) -> None:
    data_copy.write_text("", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="is empty"):
        delta_causal.load()


def test_online_path_downloads_the_pinned_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))
    offline = delta_causal.load()["test"].to_list()
    monkeypatch.delenv(DATA_ENV_VAR)
    calls: list[dict[str, str]] = []

    def fake_download(urls: dict[str, str]) -> dict[str, Path]:
        calls.append(dict(urls))
        return {key: FIXTURES / "delta_causal" / key for key in urls}

    monkeypatch.setattr(_source, "download", fake_download)
    assert delta_causal.load()["test"].to_list() == offline
    assert calls == [
        {
            TEST_FILE: "https://raw.githubusercontent.com/cui-shaobo/defeasibility-in-causality/"
            "ebfdbc8443146c287fb1b2629f1faac884889471/delta-causal-dataset/shuffled_test_extended.csv"
        }
    ]


@pytest.mark.usefixtures("real_data")
def test_real_data_counts() -> None:
    test = delta_causal.load()["test"]
    assert test.num_rows == 1969
    assert len(set(test["id"])) == 1969
    pairs = Counter(zip(test["cause"], test["effect"]))
    assert len(pairs) == 500
    assert Counter(pairs.values()) == {4: 469, 3: 31}
    assert len(set(test["pair_id"])) == 500
    assert delta_causal.load(one_per_pair=True)["test"].num_rows == 500
    assert Counter(test["keyword_model"]) == {"gpt3": 823, "chatgpt": 779, "none": 367}
    validation = delta_causal.load(split="validation")["test"]
    assert validation.num_rows == 2276
    assert all(validation["supporter"])
