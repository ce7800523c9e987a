"""Outputs the file system refuses or that are not plain files (``outputs.atomic_write`` / ``check_outputs``).

Real faults where the machine allows them (a tiny or read-only tmpfs needs root and ``mount``; an
immutable file needs ``chattr``), simulated ``errno``s everywhere: symlinks, devices and pipes
refused, modes kept, and a full, read-only or immutable output gives one line
naming the path (exit status 3), in ``leaderboard build`` before any model runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.cli import OUTPUT_ERROR_STATUS, main
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.run.nightly import build
from logic_consistency.outputs import OutputError, atomic_write, atomic_write_json, check_outputs, check_writable


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "lb" / "leaderboard.json"
    atomic_write_json(path, make_document("leaderboard", night="2026-01-01"))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@contextlib.contextmanager
def _tmpfs(folder: Path, options: str) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount")
    mounted = children.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        children.run(["umount", "-l", str(folder)], check=False)


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[Path]:
    if shutil.which("chattr") is None or os.geteuid() != 0:
        pytest.skip("chattr +i needs root and chattr")
    done = children.run(["chattr", "+i", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"chattr +i not supported here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        children.run(["chattr", "-i", str(path)], check=False)


# ----------------------------------------------------------------------------- what is written over


def test_a_symlink_is_refused_and_its_target_untouched(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "www" / "page.html"
    target.parent.mkdir()
    target.write_text("<!DOCTYPE html><p>old</p>")
    link = tmp_path / "index.html"
    link.symlink_to(target)
    assert main(["leaderboard", "render", str(board), "--out", str(link)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(link) in err and "symbolic link" in err and "--out" in err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "<!DOCTYPE html><p>old</p>"
    # a folder above the output may be a link: the page is written into the folder it names
    (tmp_path / "site").symlink_to(target.parent, target_is_directory=True)
    assert main(["leaderboard", "render", str(board), "--out", str(tmp_path / "site" / "new.html")]) == 0
    assert (target.parent / "new.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("kind", ["character device", "named pipe"])
def test_devices_and_pipes_are_refused(
    kind: str, board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "named pipe":
        out = tmp_path / "fifo.html"
        os.mkfifo(out)
        check = stat.S_ISFIFO
    else:
        out, check = Path("/dev/null"), stat.S_ISCHR
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(out))
    assert status == 2 and str(out) in err and kind in err and "not a regular file" in _one_line(err)
    assert check(out.stat().st_mode)
    with pytest.raises(ValueError, match=f"refusing to write {out}: it is a {kind}"):
        atomic_write(out, [b"x"])  # the writer refuses too, without opening (a pipe would block)
    assert check(out.stat().st_mode)


def test_an_existing_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    atomic_write(page, [b"<html>1</html>"])
    page.chmod(0o640)
    atomic_write(page, [b"<html>2</html>"])
    assert stat.S_IMODE(page.stat().st_mode) == 0o640 and page.read_bytes() == b"<html>2</html>"
    page.chmod(0o604)
    atomic_write_json(page, {"a": 1})
    assert stat.S_IMODE(page.stat().st_mode) == 0o604
    old = os.umask(0o027)
    try:
        fresh = atomic_write(tmp_path / "fresh.json", [b"{}"])
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


# ----------------------------------------------------------------------------- refusals of the file system


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "disk is full"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "immutable"),
    ],
)
@pytest.mark.parametrize("step", ["replace", "fsync"])
def test_a_refused_write_names_the_path_and_keeps_the_old_file(
    code: int, words: str, step: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report.json"
    out.write_text('{"old": true}')

    def refuse(*_: object, **__: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, step, refuse)
    with pytest.raises(OutputError, match=f"cannot write {out}: .*{words}") as raised:
        atomic_write_json(out, {"new": True})
    assert raised.value.errno == code and isinstance(raised.value, ValueError)
    monkeypatch.undo()
    assert out.read_text() == '{"old": true}' and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_write_protected_file_is_found_before_the_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report.json"
    out.write_text("{}")
    real_open = os.open

    def denied(path: object, flags: int, *args: object) -> int:
        if str(path) == str(out) and flags & os.O_WRONLY:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(OutputError, match=f"cannot write {out}: permission denied"):
        check_outputs([(out, "json")], [])


@pytest.mark.slow
def test_a_full_disk(board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _tmpfs(tmp_path / "small", "size=256k") as small:
        page = small / "index.html"
        assert main(["leaderboard", "render", str(board), "--out", str(page)]) == 0
        before = page.read_bytes()
        free = shutil.disk_usage(small).free
        (small / "filler").write_bytes(bytes(max(free - 8192, 0)))
        # the probe finds it before any work ...
        status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(page))
        assert status == OUTPUT_ERROR_STATUS
        assert (
            _one_line(err)
            == f"logic-consistency: error: cannot write {page}: no space left on the device (the disk is full)"
        )
        # ... and the writer when the disk fills up meanwhile: the old page stays, no temporary file is left
        with pytest.raises(OutputError, match=f"cannot write {page}: no space left"):
            atomic_write(page, [bytes(64 * 1024)])
        assert page.read_bytes() == before
        assert sorted(p.name for p in small.iterdir()) == ["filler", "index.html"]


@pytest.mark.slow
def test_a_read_only_file_system(board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _tmpfs(tmp_path / "ro", "size=1m") as folder:
        page = folder / "index.html"
        assert main(["leaderboard", "render", str(board), "--out", str(page)]) == 0
        children.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(page))
        assert status == OUTPUT_ERROR_STATUS
        assert _one_line(err) == f"logic-consistency: error: cannot write {page}: read-only file system"
        status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(folder / "new" / "page.html"))
        assert status == OUTPUT_ERROR_STATUS and "read-only file system" in _one_line(err)


@pytest.mark.slow
def test_an_immutable_page(board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "index.html"
    assert main(["leaderboard", "render", str(board), "--out", str(page)]) == 0
    before = page.read_bytes()
    with _immutable(page):
        status, err = _run(capsys, "leaderboard", "render", str(board), "--out", str(page))
        assert status == OUTPUT_ERROR_STATUS
        assert f"cannot write {page}: operation not permitted (an immutable" in _one_line(err)
        assert page.read_bytes() == before


# ----------------------------------------------------------------------------- the nightly build

MARK_RUN = """\
#!{python}
from pathlib import Path
Path({mark!r}).write_text("ran")
"""


def _fake(tmp_path: Path) -> tuple[Path, Path, Path]:
    mark = tmp_path / "a-model-ran"
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(MARK_RUN.format(python=sys.executable, mark=str(mark)), encoding="utf-8")
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: m, model: dummy}\n", encoding="utf-8")
    return fake, models, mark


@pytest.mark.slow
def test_an_unwritable_board_stops_the_build_before_any_model_runs(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, models, mark = _fake(tmp_path)
    before = board.read_bytes()
    with _immutable(board):
        status, err = _run(
            capsys,
            "leaderboard",
            "build",
            "--models",
            str(models),
            "--out",
            str(board.parent),
            "--lm-eval",
            str(fake),
            "--night",
            "2026-01-02",
            "--no-progress",
        )
    assert status == OUTPUT_ERROR_STATUS and status != 1
    assert f"cannot write {board}: operation not permitted" in _one_line(err)
    assert not mark.exists() and board.read_bytes() == before


@pytest.mark.slow
def test_an_unwritable_runs_folder_stops_the_build_before_any_model_runs(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, models, mark = _fake(tmp_path)
    (board.parent / "runs").mkdir()
    with _immutable(board.parent / "runs"):
        status, err = _run(
            capsys,
            "leaderboard",
            "build",
            "--models",
            str(models),
            "--out",
            str(board.parent),
            "--lm-eval",
            str(fake),
            "--night",
            "2026-01-02",
            "--no-progress",
        )
    assert status == OUTPUT_ERROR_STATUS and f"cannot write {board.parent / 'runs'}" in _one_line(err)
    assert not mark.exists()


def test_a_disk_that_fills_during_the_build_keeps_the_runs(
    board: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, models, mark = _fake(tmp_path)
    before = board.read_bytes()

    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: full() if mark.exists() else real_fsync(fd))
    with pytest.raises(OutputError, match=r"cannot write .*history/2026-01-02\.json: no space left.*runs are kept in "):
        build(
            board.parent, model_list=models, night="2026-01-02", lm_eval=str(fake), progress=False, log=lambda _: None
        )
    assert mark.exists() and board.read_bytes() == before


def test_a_build_with_no_enabled_model_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: a, model: hf, enabled: false}\n  - {name: b, model: hf, enabled: false}\n")
    status, err = _run(
        capsys, "leaderboard", "build", "--models", str(models), "--out", str(tmp_path / "lb"), "--no-progress"
    )
    assert status == 2 and f"{models}: no enabled model" in _one_line(err)
    assert not (tmp_path / "lb").exists()


def test_check_writable_of_a_folder_to_be(tmp_path: Path) -> None:
    check_writable(tmp_path / "runs" / "2026-01-01", folder=True)
    assert list(tmp_path.iterdir()) == []  # nothing created, the probe removed


def test_an_output_ending_in_a_slash_names_a_folder(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = _run(capsys, "leaderboard", "render", str(board), "--out", f"{tmp_path / 'pages'}/")
    assert status == 2 and "it names a folder" in _one_line(err)
    assert not (tmp_path / "pages").exists()  # not a file named "pages"


def test_a_cache_folder_that_is_a_file_is_refused_before_any_model_runs(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, models, mark = _fake(tmp_path)
    status, err = _run(
        capsys,
        "leaderboard",
        "build",
        "--models",
        str(models),
        "--out",
        str(tmp_path / "lb2"),
        "--cache-dir",
        str(board),
        "--lm-eval",
        str(fake),
        "--night",
        "2026-01-02",
        "--no-progress",
    )
    assert status == 2 and f"cannot write into {board}: it is a file, not a folder" in _one_line(err)
    assert not mark.exists()
