"""Tests of the shared loader helpers: errors, option checks, item cap and source resolution."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import datasets
import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, _common, _source


def test_format_error_message_names_source_location_and_field() -> None:
    error = DatasetFormatError("/x/a.jsonl", "line 3", "coherence", "has 15 values, expected 16")
    assert isinstance(error, ValueError)
    assert str(error) == "/x/a.jsonl line 3: field 'coherence' has 15 values, expected 16"
    assert (error.source, error.location, error.field) == ("/x/a.jsonl", "line 3", "coherence")
    assert str(DatasetFormatError("f.txt", None, None, "broken")) == "f.txt: broken"


@pytest.mark.parametrize(
    ("max_items", "seed", "error"),
    [
        (1, 0, ValueError),
        (0, 0, ValueError),
        (2.0, 0, TypeError),
        (True, 0, TypeError),
        (None, -1, ValueError),
        (None, "1", TypeError),
    ],
)
def test_check_options_rejects_bad_values(max_items: object, seed: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        _common.check_options(max_items, seed)  # type: ignore[arg-type]


def test_select_item_indices_without_cap_keeps_everything() -> None:
    assert _common.select_item_indices(5, None, 1, "a") == [0, 1, 2, 3, 4]
    assert _common.select_item_indices(5, 5, 1, "a") == [0, 1, 2, 3, 4]
    assert _common.select_item_indices(5, 9, 1, "a") == [0, 1, 2, 3, 4]


def test_select_item_indices_is_sorted_deterministic_and_seeded() -> None:
    first = _common.select_item_indices(16, 5, 1234, "doc-1")
    assert first == sorted(first) and len(set(first)) == 5 and all(0 <= i < 16 for i in first)
    assert _common.select_item_indices(16, 5, 1234, "doc-1") == first
    other_seeds = {tuple(_common.select_item_indices(16, 5, seed, "doc-1")) for seed in range(10)}
    other_ids = {tuple(_common.select_item_indices(16, 5, 1234, f"doc-{n}")) for n in range(10)}
    assert len(other_seeds) > 1 and len(other_ids) > 1


def test_select_item_indices_does_not_depend_on_python_hash_randomisation() -> None:
    code = (
        "import json; from logic_consistency.tasks.data import _common; "
        "print(json.dumps(_common.select_item_indices(20, 6, 7, 'instance-x')))"
    )
    outputs = {
        children.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == _common.select_item_indices(20, 6, 7, "instance-x")


def test_make_dataset_dict_handles_empty_results() -> None:
    result = _common.make_dataset_dict([], _common.pairwise_features())
    assert list(result) == ["test"] and result["test"].num_rows == 0
    assert set(result["test"].column_names) == {"instance_id", "context", "items", "item_ids", "human_scores", "aspect"}


def test_local_data_dir_unset_blank_and_relative(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    assert _source.local_data_dir() is None
    monkeypatch.setenv(DATA_ENV_VAR, "  ")
    assert _source.local_data_dir() is None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATA_ENV_VAR, "some/raw")
    assert _source.local_data_dir() == tmp_path / "some" / "raw"


def test_local_file_missing_names_path_and_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        _source.local_file(tmp_path, "noveleval", "qrels.txt")
    assert str(tmp_path / "noveleval" / "qrels.txt") in str(info.value)
    assert DATA_ENV_VAR in str(info.value)


def test_resolve_files_online_builds_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    seen: dict[str, str] = {}

    def fake_download(urls: dict[str, str]) -> dict[str, Path]:
        seen.update(urls)
        return {key: Path("/cache") / key for key in urls}

    monkeypatch.setattr(_source, "download", fake_download)
    paths = _source.resolve_files("x", ["a/b.txt", "c.tsv"], "https://example.org/base/")
    assert seen == {"a/b.txt": "https://example.org/base/a/b.txt", "c.tsv": "https://example.org/base/c.tsv"}
    assert paths == {"a/b.txt": Path("/cache/a/b.txt"), "c.tsv": Path("/cache/c.tsv")}


def test_download_goes_through_datasets_download_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def fake_manager_download(self: datasets.DownloadManager, url_or_urls: dict[str, str]) -> dict[str, str]:
        calls.append(url_or_urls)
        return {key: f"/hf-cache/{key}" for key in url_or_urls}

    monkeypatch.setattr(datasets.DownloadManager, "download", fake_manager_download)
    result = _source.download({"q": "https://example.org/q.tsv"})
    assert calls == [{"q": "https://example.org/q.tsv"}]
    assert result == {"q": Path("/hf-cache/q")}


def test_github_raw_url_pins_commit() -> None:
    assert (
        _source.github_raw_url("owner/repo", "abc123", "/data/x/")
        == "https://raw.githubusercontent.com/owner/repo/abc123/data/x"
    )


@pytest.mark.parametrize("dataset", ["advbench", "caters", "delta_causal", "noveleval", "summeval", "triviaqa"])
def test_a_loader_takes_only_its_declared_options(dataset: str) -> None:
    # lm-eval's metadata does not reach a loader whole: harness_ext/task/base.py passes only the keys it names
    load = importlib.import_module(f"logic_consistency.tasks.data.{dataset}").load
    with pytest.raises(TypeError, match="unexpected keyword argument 'version'"):
        load(version=1.0)


def test_one_item_cap_check_serves_loaders_and_tasks() -> None:
    """Loaders call it with the declared minimum (2); a pairwise task with its largest K and a reason."""
    from logic_consistency.options import OptionError

    assert _common.check_max_items(None) is None and _common.check_max_items(2) == 2
    with pytest.raises(OptionError, match=r"task 't': metadata.max_items must be at least 5, got 4; the largest K"):
        _common.check_max_items(4, minimum=5, name="metadata.max_items", where="task 't'", why="the largest K is 5")
