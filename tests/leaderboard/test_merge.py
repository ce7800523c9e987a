"""Merging nights: history keeps both, the board keeps the latest; settings never share a board."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.leaderboard.board.failures import failure_error
from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results
from logic_consistency.leaderboard.board.merge import make_document, merge_documents
from logic_consistency.leaderboard.board.schema import load_document, validate
from logic_consistency.leaderboard.run.nightly import commit

BOOT = BootstrapSettings(n_resamples=300)


def _later(hours: float) -> Callable[[dict[str, Any]], None]:
    def edit(results: dict[str, Any]) -> None:
        results["date"] += 3600 * hours

    return edit


def _failure(name: str, at: str) -> dict[str, Any]:
    return {
        "name": name,
        "backend": "hf",
        "model_args": f"pretrained={name}",
        "night": at[:10],
        "failed_at": at,
        "error": failure_error("lm_eval_failed", returncode=1, error_class="RuntimeError"),
        "log_file": None,
    }


@pytest.fixture
def nights(run_copy: Callable[..., Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same model measured on two nights, 24 h apart."""
    first = ingest_results(run_copy(), night="2026-03-01", bootstrap=BOOT)
    second = ingest_results(run_copy(_later(24)), night="2026-03-02", bootstrap=BOOT)
    return first, second


def test_merging_two_nights_keeps_both_in_history_and_the_latest_on_the_board(
    tmp_path: Path, nights: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    first, second = nights
    assert first["row_id"] == second["row_id"] and first["measured_at"] < second["measured_at"]
    commit(tmp_path, "2026-03-01", [first], [], bootstrap=BOOT)
    board = commit(tmp_path, "2026-03-02", [second], [], bootstrap=BOOT)
    assert board == load_document(tmp_path / "leaderboard.json")
    assert len(board["rows"]) == 1
    assert board["rows"][0]["measured_at"] == second["measured_at"] and board["rows"][0]["night"] == "2026-03-02"
    assert [n["night"] for n in board["nights"]] == ["2026-03-01", "2026-03-02"]
    assert [n["history_file"] for n in board["nights"]] == ["history/2026-03-01.json", "history/2026-03-02.json"]
    for night, row in (("2026-03-01", first), ("2026-03-02", second)):
        history = load_document(tmp_path / "history" / f"{night}.json")
        assert history["kind"] == "night"
        assert [r["measured_at"] for r in history["rows"]] == [row["measured_at"]]
    # merging an older night afterwards does not replace the newer row
    again = commit(tmp_path, "2026-03-01", [first], [], bootstrap=BOOT)
    assert again["rows"][0]["measured_at"] == second["measured_at"]
    assert len(load_document(tmp_path / "history" / "2026-03-01.json")["rows"]) == 1


def test_a_second_build_of_the_same_night_merges_into_its_history(
    tmp_path: Path, run_copy: Callable[..., Path]
) -> None:
    model_a = ingest_results(run_copy(), name="model-a", night="2026-03-05", bootstrap=BOOT)
    model_b = ingest_results(run_copy(_later(1)), name="model-b", night="2026-03-05", bootstrap=BOOT)
    commit(tmp_path, "2026-03-05", [model_a], [_failure("model-b", "2026-03-05T01:00:00Z")], bootstrap=BOOT)
    board = commit(tmp_path, "2026-03-05", [model_b], [], bootstrap=BOOT)
    history = load_document(tmp_path / "history" / "2026-03-05.json")
    assert sorted(r["model"]["name"] for r in history["rows"]) == ["model-a", "model-b"]
    assert board["nights"] == [
        {"night": "2026-03-05", "rows": 2, "failures": 0, "history_file": "history/2026-03-05.json"}
    ]
    # model-b's later success supersedes its earlier failure
    assert board["failures"] == [] and history["failures"] == []


def test_rows_under_different_settings_are_on_separate_boards(run_copy: Callable[..., Path]) -> None:
    def fewer(results: dict[str, Any]) -> None:
        results["config"]["limit"] = 1.0

    full = ingest_results(run_copy(), name="m", bootstrap=BOOT)
    small = ingest_results(run_copy(fewer), name="m", bootstrap=BOOT)
    document = make_document("leaderboard", [full, small], bootstrap=BOOT)
    validate(document)
    assert len(document["rows"]) == 2
    assert {b["settings_id"] for b in document["boards"]} == {full["settings_id"], small["settings_id"]}
    assert all(board["n_rows"] == 1 for board in document["boards"])
    labels = {b["settings_id"]: b["label"] for b in document["boards"]}
    assert "limit 1" in labels[small["settings_id"]] and "limit 2" in labels[full["settings_id"]]


def test_failures_are_kept_until_a_newer_success(nights: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, second = nights
    name = first["model"]["name"]
    base = make_document("leaderboard", [first], bootstrap=BOOT)
    failed_later = make_document(
        "night", [], [_failure(name, "2999-01-01T00:00:00Z"), _failure("other", "2026-03-01T00:00:00Z")], bootstrap=BOOT
    )
    merged = merge_documents(base, failed_later)
    assert sorted(f["name"] for f in merged["failures"]) == [name, "other"]
    assert len(merged["rows"]) == 1  # the last good row stays, marked by the failure
    recovered = merge_documents(merged, make_document("night", [second], bootstrap=BOOT))
    assert sorted(f["name"] for f in recovered["failures"]) == [name, "other"]  # failure is newer than the row
    stale = make_document("night", [], [_failure(name, "2000-01-01T00:00:00Z")], bootstrap=BOOT)
    assert [f["name"] for f in merge_documents(base, stale)["failures"]] == []


def test_bootstrap_settings_must_match(nights: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, second = nights
    base = make_document("leaderboard", [first], bootstrap=BOOT)
    other = make_document("night", [second], bootstrap=BootstrapSettings(n_resamples=301))
    with pytest.raises(ValueError, match="bootstrap settings differ"):
        merge_documents(base, other)


def test_an_invalid_existing_board_is_reported_and_left_alone(
    tmp_path: Path, nights: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    board = tmp_path / "leaderboard.json"
    board.write_text(json.dumps({"schema_version": "1.0"}), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{board}: not a valid leaderboard"):
        commit(tmp_path, "2026-03-01", [nights[0]], [], bootstrap=BOOT)
    assert json.loads(board.read_text(encoding="utf-8")) == {"schema_version": "1.0"}
    assert not (tmp_path / "history" / "2026-03-01.json").exists()
