"""No command writes over its own input or over a file of another kind (``outputs.check_outputs``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_consistency.cli import main
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.outputs import atomic_write_json, check_outputs


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "lb" / "leaderboard.json"
    atomic_write_json(path, make_document("leaderboard", night="2026-01-01"))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().err


def test_render_refuses_to_write_over_its_board(board: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = board.read_bytes()
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(board))
    assert status == 2
    assert "refusing to write" in err and str(board) in err and "--out" in err
    assert board.read_bytes() == before


def test_render_sees_through_symlinks_and_dotdot(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(board)
    before = board.read_bytes()
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(link))
    assert status == 2 and "over the input" in err
    status, err = _run(
        capsys, "leaderboard", "render", str(board), "--out", str(board.parent / ".." / "lb" / board.name)
    )
    assert status == 2 and "over the input" in err
    assert board.read_bytes() == before


def test_render_refuses_an_existing_file_of_another_kind(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(other))
    assert status == 2 and str(other) in err and "not JSON, HTML or PNG" in err
    assert other.read_text() == "my notes\n"
    json_file = tmp_path / "data.json"
    json_file.write_text("{}")
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(json_file))
    assert status == 2 and "a json file, not the html file" in err
    folder = tmp_path / "folder"
    folder.mkdir()
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(folder))
    assert status == 2 and "it is a folder" in err


def test_render_replaces_its_own_earlier_page(board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "index.html"
    assert main(["leaderboard", "render", str(board), "--out", str(page)]) == 0
    assert main(["leaderboard", "render", str(board), "--out", str(page)]) == 0
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_build_html_may_not_be_the_board(board: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = board.read_bytes()
    status, err = _run(
        capsys,
        "leaderboard",
        "build",
        "--out",
        str(board.parent),
        "--html",
        str(board),
        "--night",
        "2026-01-01",
        "--no-progress",
    )
    assert status == 2 and "--html" in err and "over the input" in err
    assert board.read_bytes() == before


def test_ingest_refuses_the_board_as_a_results_file(board: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = board.read_bytes()
    status, err = _run(capsys, "leaderboard", "ingest", str(board), "--out", str(board.parent), "--no-progress")
    assert status == 2 and "over the input" in err and str(board) in err
    assert board.read_bytes() == before


def test_out_folder_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "samples_logic_consistency_gv_arithmetic_2026-01-01T00-00-00.000000.jsonl"
    samples.write_text("")
    status, err = _run(capsys, "export-gv", str(samples), "--out", str(samples))
    assert status == 2 and "is a file, not a folder" in err
    assert samples.read_text() == ""


@pytest.mark.parametrize("command", ["export-gv", "causal-confusion"])
def test_samples_commands_refuse_to_overwrite_an_input(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == "export-gv":
        name = "gv_pairs_consistent.jsonl"
    else:
        name = "confusion_logic_consistency_causal_rank.json"
    victim = tmp_path / name
    victim.write_text("")
    renamed = tmp_path / "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
    renamed.symlink_to(victim)
    source = victim if command == "export-gv" else renamed
    status, err = _run(capsys, command, str(source), "--out", str(tmp_path))
    assert status == 2 and "over the input" in err, err
    assert victim.read_text() == ""


def test_repair_refuses_to_overwrite_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "repaired.jsonl"
    source.write_text(json.dumps({"instance": "a", "first": "x", "second": "y", "label": 1}) + "\n")
    before = source.read_text()
    status, err = _run(capsys, "repair", str(source), "--out", str(tmp_path))
    assert status == 2 and "over the input" in err and "repaired.jsonl" in err
    assert source.read_text() == before


def test_check_outputs_accepts_new_and_empty_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_text("")
    check_outputs([(tmp_path / "new" / "a.json", "json"), (empty, "html")], [tmp_path / "input.json"])
    with pytest.raises(ValueError, match="kind must be one of"):
        check_outputs([(tmp_path / "a", "csv")], [])


def test_temporary_files_are_new_names_in_the_target_folder_never_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: every temporary file (a write's, the build lock taken over) is created with
    ``O_CREAT | O_EXCL | O_NOFOLLOW`` next to its target, so no existing file or link is opened."""
    import os

    from logic_consistency.leaderboard.run import lock

    opened: list[tuple[str, int]] = []
    real_open = os.open

    def recording(path: str, flags: int, *args: object, **kwargs: object) -> int:
        opened.append((str(path), flags))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", recording)
    atomic_write_json(tmp_path / "out" / "board.json", {"a": 1})
    folder = tmp_path / "lb"
    folder.mkdir()
    handle = lock._take_over(folder, folder / lock.LOCK_NAME)  # what a build taking a stale lock over does
    handle.close()
    temporaries = [(path, flags) for path, flags in opened if path.endswith(".tmp")]
    assert {str(Path(path).parent) for path, _ in temporaries} == {str(tmp_path / "out"), str(folder)}
    wanted = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    assert len(temporaries) == 2 and all(flags & wanted == wanted for _, flags in temporaries), temporaries
    assert (folder / lock.LOCK_NAME).is_file() and not (folder / lock.LOCK_NAME).is_symlink()
