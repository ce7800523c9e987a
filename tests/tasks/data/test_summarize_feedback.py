"""Summarize-from-Feedback loader on a small hand-written file with the hub's field names."""

import json
import re
from pathlib import Path

import pytest

from logic_consistency.tasks.data import DatasetFormatError
from logic_consistency.tasks.data.summarize_feedback import item_id, load_comparisons

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"


def test_reads_the_local_layout(monkeypatch):
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
    comparisons = load_comparisons("validation")
    assert len(comparisons) == 4
    first = comparisons[0]
    assert first.instance_id == "t3_post1"
    assert first.context.startswith("Roommate problem\n\nMy roommate")
    assert first.winner == first.item_a == item_id("Roommate eats my food and lies about it.")
    # the same summary text is the same item across comparisons
    assert comparisons[2].item_b == first.item_a
    assert comparisons[1].winner == comparisons[1].item_b
    assert comparisons[3].context.startswith("The city council")


def test_missing_local_file_names_the_path(monkeypatch, tmp_path):
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="comparisons_train.jsonl"):
        load_comparisons("train")
    with pytest.raises(ValueError, match="split"):
        load_comparisons("test")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.update(choice=2), "choice"),
        (lambda r: r.update(summaries=r["summaries"][:1]), "summaries"),
        (lambda r: r["info"].pop("id"), "info.id"),
        (lambda r: r["summaries"][1].update(text=""), "summaries[1].text"),
    ],
)
def test_malformed_records_name_line_and_field(tmp_path, change, field):
    lines = (FIXTURES / "summarize_from_feedback" / "comparisons_validation.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    change(record)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(DatasetFormatError, match=re.escape(f"line 2: field '{field}'")):
        load_comparisons(path=path)
