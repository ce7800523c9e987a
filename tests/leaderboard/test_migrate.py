"""Boards of schema 1.x (chat template and system instruction as board keys) still load, render and merge."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.leaderboard.board.merge import make_document, merge_documents
from logic_consistency.leaderboard.board.migrate import PROMPTING_SETTINGS, upgrade
from logic_consistency.leaderboard.board.schema import SCHEMA_VERSION, load_document, validate

#: Written by the suite before schema 2.0 (commit 9d844cc's make_document): an instruct model run with
#: its chat template (few-shot as multi-turn) and a base model without, on two boards.
OLD_BOARD = Path(__file__).resolve().parents[1] / "fixtures" / "leaderboard" / "leaderboard-1.0.json"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import hand_row  # noqa: E402


@pytest.fixture
def old() -> dict[str, Any]:
    document = json.loads(OLD_BOARD.read_text(encoding="utf-8"))
    assert document["schema_version"] == "1.0" and len(document["boards"]) == 2
    return document


def test_an_old_board_loads_with_both_models_on_one_board(old: dict[str, Any]) -> None:
    document = load_document(OLD_BOARD)
    assert document["schema_version"] == SCHEMA_VERSION
    (board,) = document["boards"]
    assert board["n_rows"] == 2 and {row["settings_id"] for row in document["rows"]} == {board["settings_id"]}
    by_name = {row["model"]["name"]: row for row in document["rows"]}
    assert by_name["smollm2-135m-instruct"]["provenance"]["fewshot_as_multiturn"] is True
    assert by_name["smollm2-135m-instruct"]["provenance"]["chat_template_applied"] is True
    assert by_name["gemma-3-270m"]["provenance"]["fewshot_as_multiturn"] is False
    for row in document["rows"]:
        assert not set(PROMPTING_SETTINGS) & set(row["settings"])
    # scores, nights and failures are carried over unchanged
    old_scores = {row["model"]["name"]: row["tasks"] for row in old["rows"]}
    assert {name: row["tasks"] for name, row in by_name.items()} == old_scores
    assert document["nights"] == old["nights"] and document["failures"] == old["failures"]


@pytest.mark.slow
def test_an_old_board_renders_and_validates(tmp_path: Path, cli: Callable[..., Any]) -> None:
    run = cli("leaderboard", "render", str(OLD_BOARD), "--out", str(tmp_path / "index.html"))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    checked = cli("leaderboard", "validate", str(OLD_BOARD))
    assert checked.returncode == 0 and "2 row(s) on 1 board(s)" in checked.stdout, checked.stderr


def test_new_rows_merge_into_an_upgraded_board() -> None:
    tonight = make_document("night", [hand_row("new-model")], [], night="2026-01-02")
    merged = merge_documents(load_document(OLD_BOARD), tonight, kind="leaderboard")
    validate(merged)
    assert len(merged["boards"]) == 1 and merged["boards"][0]["n_rows"] == 3


def test_a_corrupt_old_row_is_reported_not_rekeyed(old: dict[str, Any], tmp_path: Path) -> None:
    old["rows"][1]["settings"]["limit"] = 99.0
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path}: \$\.rows\[1\]\.settings_id: .* not the hash .*schema 1\.x"):
        load_document(path)


def test_upgrade_leaves_current_documents_alone(old: dict[str, Any]) -> None:
    current = make_document("leaderboard", [hand_row()], [], night="2026-01-01")
    assert upgrade(current) is current
    before = copy.deepcopy(old)
    upgrade(old)
    assert old == before  # the caller's old document is not modified


def test_a_build_rewrites_older_history_files_without_their_failure_text(tmp_path: Path) -> None:
    """Issue 46: a 2.x history file's failure text (a URL's path token, stderr) is not left published."""
    from logic_consistency.leaderboard.board.ingest import BootstrapSettings
    from logic_consistency.leaderboard.run.nightly import commit

    boot = BootstrapSettings(n_resamples=200)
    old = make_document("night", [hand_row()], [], night="2026-01-01", bootstrap=boot)
    old["schema_version"] = "2.2"
    old["failures"] = [
        {
            "name": "judge", "backend": "lc-chat", "model_args": "model=j,base_url=http://h:9/t/gw-TOKEN-1/v1",
            "night": "2026-01-01", "failed_at": "2026-01-01T03:00:00Z", "log_file": None,
            "error": {"message": "404 url='http://h:9/t/gw-TOKEN-1/v1'", "returncode": 1, "stderr_tail": "gw-TOKEN-1"},
        }
    ]  # fmt: skip
    history = tmp_path / "history" / "2026-01-01.json"
    history.parent.mkdir()
    history.write_text(json.dumps(old), encoding="utf-8")
    commit(tmp_path, "2026-01-02", [], [], bootstrap=boot)
    rewritten = history.read_text(encoding="utf-8")
    assert "gw-TOKEN-1" not in rewritten and "gw-TOKEN-1" not in (tmp_path / "leaderboard.json").read_text()
    document = load_document(history)
    assert (
        document["schema_version"] == SCHEMA_VERSION and document["failures"][0]["error"]["code"] == "recorded_as_text"
    )


HOME_PATH = "/home/alice/boards/lb/runs/2026-01-01/m/results_2026-01-01T03-00-00.json"


@pytest.mark.parametrize("version", ["2.2", "3.0"])
def test_a_results_file_published_as_its_path_is_rewritten_by_the_next_build(tmp_path: Path, version: str) -> None:
    """Issue 46 (leftover): a 2.x or early 3.0 board's ``results_file`` held the path it lay at (a home folder);
    the next build leaves it in no published file: ``local:<SHA-256 of the path>/<file name>``, as builds write."""
    from logic_consistency.harness_ext.publish.allowlist import public_path
    from logic_consistency.leaderboard.board.ingest import BootstrapSettings
    from logic_consistency.leaderboard.board.migrate import needs_upgrade
    from logic_consistency.leaderboard.run.nightly import commit

    boot = BootstrapSettings(n_resamples=200)
    old = make_document("night", [hand_row()], [], night="2026-01-01", bootstrap=boot)
    old["schema_version"] = version
    old["rows"][0]["provenance"]["results_file"] = HOME_PATH
    assert needs_upgrade(old) and upgrade(old)["rows"][0]["provenance"]["results_file"] == public_path(HOME_PATH)
    assert old["rows"][0]["provenance"]["results_file"] == HOME_PATH  # the caller's document is not modified
    history = tmp_path / "history" / "2026-01-01.json"
    history.parent.mkdir()
    history.write_text(json.dumps(old), encoding="utf-8")
    board = make_document("leaderboard", [copy.deepcopy(old["rows"][0])], [], night="2026-01-01", bootstrap=boot)
    board["schema_version"] = version
    (tmp_path / "leaderboard.json").write_text(json.dumps(board), encoding="utf-8")
    commit(tmp_path, "2026-01-02", [], [], bootstrap=boot)
    for path in (history, tmp_path / "leaderboard.json"):
        text = path.read_text(encoding="utf-8")
        assert "/home/alice" not in text and f'"{public_path(HOME_PATH)}"' in text, path
        assert not needs_upgrade(json.loads(text))
    assert public_path(HOME_PATH).startswith("local:") and public_path(HOME_PATH).endswith(
        "/results_2026-01-01T03-00-00.json"
    )


def test_a_board_before_3_1_is_published_again_through_today_s_allowlist() -> None:
    from logic_consistency.leaderboard.board.identity import row_id, settings_id

    """Issue 54: every published field of an older board is derived again, rows included: an undeclared option
    (the row keyed again), a path token and a host in ``base_url``, an adapter's home path."""
    row = hand_row("judge")
    row["model"].update(backend="lc-chat", model_args="model=j,base_url=https://x.ngrok-free.app/t/gw-TOKEN-9/v1")
    for entry in row["settings"]["tasks"].values():
        entry["options"]["gateway_note"] = "gw-TOKEN-9"  # an undeclared metadata key an old build recorded
    row["settings_id"] = settings_id(row["settings"])  # as the old build keyed it
    row["row_id"] = row_id("judge", "unpinned", "n/a", row["prompt_set"]["id"], row["settings_id"])
    old = make_document("leaderboard", [row], [], night="2026-01-01")
    old["schema_version"] = "3.0"
    old["rows"][0]["provenance"]["adapter"] = {"path": "/home/alice/adapters/a1", "base_model": "org/base"}
    new = upgrade(old)
    validate(new)
    text = json.dumps(new)
    assert "gw-TOKEN" not in text and "ngrok" not in text and "/home/alice" not in text
    (upgraded,) = new["rows"]
    assert upgraded["model"]["model_args"] == "model=j,base_url=private:judge"
    assert upgraded["provenance"]["adapter"]["path"].startswith("local:")
    assert upgraded["provenance"]["adapter"]["base_model"] == "org/base"  # a hub id, as it is
    assert upgraded["settings_id"] != old["rows"][0]["settings_id"] and upgraded["row_id"] != old["rows"][0]["row_id"]
    assert [board["settings_id"] for board in new["boards"]] == [upgraded["settings_id"]]
    assert new["schema_version"] == SCHEMA_VERSION and upgrade(new) is new  # once upgraded, left alone
