"""common.py: JSONL reading and writing through jsonlines, the seeded item subset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_consistency.common import (
    RESULTS_PATTERN,
    JsonLineError,
    files_or_folders,
    read_jsonl,
    read_samples,
    select_item_indices,
)
from logic_consistency.outputs import atomic_write, jsonl_chunks


def test_jsonl_round_trip_keeps_non_ascii_and_skips_blank_lines(tmp_path: Path) -> None:
    records = [{"text": "café ✓", "n": 1}, {"text": "line\nbreak", "n": 2}, [1, 2]]
    path = atomic_write(tmp_path / "out.jsonl", jsonl_chunks(records))
    raw = path.read_text(encoding="utf-8")
    assert "café ✓" in raw and raw.count("\n") == 3
    path.write_text(raw.replace("\n", "\n\n", 1), encoding="utf-8")  # a blank line 2
    assert list(read_jsonl(path)) == [(1, records[0]), (3, records[1]), (4, records[2])]
    assert [json.loads(line) for line in raw.splitlines()] == records


def test_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n{not json\n', encoding="utf-8")
    with pytest.raises(JsonLineError, match=r"bad\.jsonl line 3: not valid JSON") as error:
        list(read_jsonl(path))
    assert error.value.line == 3
    path.write_text('{"a": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: must be a JSON object"):
        list(read_samples(path))


def test_item_subset_is_seeded_sorted_and_instance_specific() -> None:
    first = select_item_indices(16, 5, 1234, "doc-1")
    assert first == sorted(first) and len(set(first)) == 5 and max(first) < 16
    assert select_item_indices(16, 5, 1234, "doc-1") == first
    assert {tuple(select_item_indices(16, 5, seed, "doc-1")) for seed in range(5)} != {tuple(first)}
    assert select_item_indices(4, 5, 1234, "doc-1") == [0, 1, 2, 3]
    assert select_item_indices(4, None, 1234, "doc-1") == [0, 1, 2, 3]


def test_files_or_folders_expands_folders_oldest_first_and_names_bad_paths(tmp_path: Path) -> None:
    for stamp, folder in (("2026-01-02", "b"), ("2026-01-01", "a/deep")):
        (tmp_path / "runs" / folder).mkdir(parents=True)
        (tmp_path / "runs" / folder / f"results_{stamp}.json").write_text("{}")
    single = tmp_path / "results_single.json"
    single.write_text("{}")
    found = files_or_folders([tmp_path / "runs", single], RESULTS_PATTERN)
    assert [p.name for p in found] == ["results_2026-01-01.json", "results_2026-01-02.json", "results_single.json"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty: no results_\*\.json file in this folder"):
        files_or_folders([tmp_path / "empty"], RESULTS_PATTERN)
    with pytest.raises(FileNotFoundError, match="missing: no such file or folder"):
        files_or_folders([tmp_path / "missing"], RESULTS_PATTERN)
