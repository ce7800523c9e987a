"""Bad-input cases of the files the suite opens (issue 29, item 3): a symbolic link, pipe or folder
where the build lock, the board, a history file or the page goes is refused naming its path, and
nothing is written through it; a symbolic-link loop is one error naming the path in every command
that reads files."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_board import tiny_run
from bad_inputs_support import CaseTable, cli, copy_data

from logic_consistency.common import SymlinkLoopError
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.board.nights import utc_today
from logic_consistency.leaderboard.run.lock import LOCK_NAME, build_lock
from logic_consistency.leaderboard.run.nightly import build
from logic_consistency.outputs import atomic_write_json

CASES = CaseTable()
FAKE = "#!{python}\nfrom pathlib import Path\nPath({mark!r}).write_text('ran')\n"


def _board(tmp: Path) -> Path:
    return atomic_write_json(tmp / "lb" / "leaderboard.json", make_document("leaderboard", night="2026-01-01"))


def _untouched(run: Callable[[Path], Any], *names: str) -> Callable[[Path], Any]:
    """The case, also failing if any file ``names`` (relative to ``tmp``) changed or a model ran."""

    def checked(tmp: Path) -> Any:
        _board(tmp)
        (tmp / "outside.txt").write_text("a file outside the leaderboard folder\n")
        before = {name: (tmp / name).read_bytes() for name in ("lb/leaderboard.json", "outside.txt", *names)}
        try:
            return run(tmp)
        finally:
            changed = [name for name, data in before.items() if (tmp / name).read_bytes() != data]
            assert not changed, f"written through the link: {changed}"
            assert not (tmp / "ran").exists(), "a model ran before the lock was refused"

    return checked


def _build(tmp: Path) -> Any:
    fake, models = tmp / "fake_lm_eval", tmp / "models.yaml"
    fake.write_text(FAKE.format(python=sys.executable, mark=str(tmp / "ran")), encoding="utf-8")
    fake.chmod(0o755)
    models.write_text("models:\n  - {name: m, model: m}\n", encoding="utf-8")
    night = utc_today().isoformat()
    return build(tmp / "lb", model_list=models, night=night, lm_eval=str(fake), progress=False)


def _ingest(tmp: Path) -> Any:
    return cli("leaderboard", "ingest", str(tiny_run(tmp)), "--out", str(tmp / "lb"), "--no-progress")


# ------------------------------------------------------------------------------------ the build lock
def _lock_to_board(tmp: Path) -> Any:  # the audit's case: the build truncated the board and wrote its lock into it
    (tmp / "lb" / LOCK_NAME).symlink_to("leaderboard.json")
    return _build(tmp)


def _lock_outside(tmp: Path) -> Any:
    (tmp / "lb" / LOCK_NAME).symlink_to(tmp / "outside.txt")
    return _ingest(tmp)


def _lock_pipe(tmp: Path) -> Any:
    os.mkfifo(tmp / "lb" / LOCK_NAME)
    return _build(tmp)


def _lock_folder(tmp: Path) -> Any:
    (tmp / "lb" / LOCK_NAME).mkdir()
    with build_lock(tmp / "lb"):
        return None


def _lock_dangling(tmp: Path) -> Any:  # O_CREAT through a dangling link would create the file it names
    (tmp / "lb" / LOCK_NAME).symlink_to(tmp / "created-elsewhere")
    try:
        return _ingest(tmp)
    finally:
        assert not (tmp / "created-elsewhere").exists()


for _name, _run, _expect in [
    ("build: the lock a link to the board", _lock_to_board, ("symbolic link", "'leaderboard.json'")),
    ("ingest: the lock a link outside the folder", _lock_outside, ("symbolic link", "outside.txt")),
    ("ingest: the lock a dangling link", _lock_dangling, ("symbolic link", "created-elsewhere")),
    ("build: the lock a named pipe", _lock_pipe, ("named pipe",)),
    ("build_lock: the lock a folder", _lock_folder, ("a folder",)),
]:
    CASES.add(_name, _untouched(_run), LOCK_NAME, "refusing to use the build lock", *_expect, error=ValueError)


# ------------------------------------------------------------------------------------ board, history, page
def _board_link(tmp: Path) -> Any:
    board = tmp / "lb" / "leaderboard.json"
    board.rename(tmp / "real.json")
    board.symlink_to(tmp / "real.json")
    return _ingest(tmp)


def _history_link(tmp: Path) -> Any:
    history = tmp / "lb" / "history" / f"{utc_today().isoformat()}.json"
    history.parent.mkdir()
    history.symlink_to(tmp / "outside.txt")
    return _ingest(tmp)


def _page_link(tmp: Path) -> Any:
    (tmp / "lb" / "index.html").symlink_to(tmp / "outside.txt")
    return cli("leaderboard", "render", str(tmp / "lb"))


for _name, _run, _file in [
    ("ingest: the board a symbolic link", _board_link, "leaderboard.json"),
    ("ingest: tonight's history file a link outside", _history_link, ".json"),
    ("render: the page a link outside the folder", _page_link, "index.html"),
]:
    CASES.add(_name, _untouched(_run), "--out", _file, "symbolic link", "never written through links", error=ValueError)


# ------------------------------------------------------------------------------------ symbolic-link loops
def _loop(tmp: Path, name: str = "loop.json") -> Path:
    """``name`` -> ``name.back`` -> ``name``."""
    (tmp / name).symlink_to(tmp / f"{name}.back")
    (tmp / f"{name}.back").symlink_to(tmp / name)
    return tmp / name


def _loop_in_folder(tmp: Path) -> Any:
    (tmp / "runs").mkdir()
    _loop(tmp / "runs", "results_2026-01-01T00-00-00.000000.json")
    return cli("leaderboard", "ingest", str(tmp / "runs"), "--out", str(tmp / "lb"))


def _loop_in_data(tmp: Path) -> Any:
    file = copy_data(tmp) / "summeval" / "summeval_hub_format.jsonl"
    file.unlink()
    file.symlink_to(file)
    return cli("plan", "--tasks", "logic_consistency_pairwise", "--limit", "2")


_SAMPLES = "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
_COMMANDS: list[tuple[str, str, Callable[[Path, Path], tuple[str, ...]]]] = [
    (
        "leaderboard ingest",
        "loop.json",
        lambda tmp, loop: ("leaderboard", "ingest", str(loop), "--out", str(tmp / "lb")),
    ),
    ("leaderboard render", "loop.json", lambda tmp, loop: ("leaderboard", "render", str(loop))),
    ("leaderboard validate", "loop.json", lambda tmp, loop: ("leaderboard", "validate", str(loop))),
    ("leaderboard build --models", "m.yaml", lambda tmp, loop: ("leaderboard", "build", "--models", str(loop))),
    ("check-task", "task.yaml", lambda tmp, loop: ("check-task", str(loop))),
    ("repair", "prefs.jsonl", lambda tmp, loop: ("repair", str(loop), "--out", str(tmp / "o"))),
    ("export-gv", _SAMPLES, lambda tmp, loop: ("export-gv", str(loop), "--out", str(tmp / "o"))),
    ("correlate", "results.json", lambda tmp, loop: ("correlate", str(loop))),
    ("causal-confusion", _SAMPLES, lambda tmp, loop: ("causal-confusion", str(loop), "--out", str(tmp / "o"))),
]
for _name, _file, _argv in _COMMANDS:
    CASES.add(
        f"{_name}: a symbolic-link loop",
        lambda tmp, f=_file, a=_argv: cli(*a(tmp, _loop(tmp, f))),
        _file,
        "a symbolic link loop",
        error=SymlinkLoopError,
    )
CASES.add(
    "leaderboard ingest: a loop in a folder",
    _loop_in_folder,
    "results_2026",
    "a symbolic link loop",
    error=SymlinkLoopError,
)
CASES.add(
    "plan: a loop in the data folder",
    _loop_in_data,
    "summeval_hub_format.jsonl",
    "a symbolic link loop",
    error=SymlinkLoopError,
)
