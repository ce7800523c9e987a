"""Crash safety: a writer killed mid-write, or a build interrupted mid-run, leaves the old board intact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results
from logic_consistency.leaderboard.board.schema import load_document
from logic_consistency.leaderboard.run.lock import BuildLockedError, build_lock
from logic_consistency.leaderboard.run.nightly import commit
from logic_consistency.outputs import atomic_write, atomic_write_json, remove_stale_temporaries

BOOT = BootstrapSettings(n_resamples=300)

# Runs commit() for a second night, but the writer of leaderboard.json (the second file written)
# stops after its first bytes, reports, and waits to be killed.
KILLED_WRITER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from logic_consistency import outputs
    from logic_consistency.leaderboard.run import nightly
    from logic_consistency.leaderboard.board.ingest import BootstrapSettings

    out, row_file = Path(sys.argv[1]), Path(sys.argv[2])
    original = outputs.json_chunks
    calls = []

    def stalling(document, **kwargs):
        calls.append(1)
        for chunk in original(document, **kwargs):
            if len(calls) == 2:
                yield chunk[:100]
                print("WRITING", flush=True)
                time.sleep(600)
            yield chunk

    outputs.json_chunks = stalling
    row = json.loads(row_file.read_text())
    nightly.commit(out, "2026-04-02", [row], [], bootstrap=BootstrapSettings(n_resamples=300))
    print("FINISHED", flush=True)
    """
)


def test_atomic_write_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.json"
    atomic_write_json(target, {"a": [1, 2, 3], "name": "<b>é</b>"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": [1, 2, 3], "name": "<b>é</b>"}
    atomic_write(target, [b"new ", b"content"])
    assert target.read_bytes() == b"new content"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_bytes(b"old")

    def chunks() -> Any:
        yield b"half of the new"
        raise RuntimeError("crash while serialising")

    with pytest.raises(RuntimeError, match="crash while serialising"):
        atomic_write(target, chunks())
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


@pytest.mark.slow
def test_sigkill_while_writing_the_leaderboard_keeps_the_old_one(
    tmp_path: Path, run_copy: Callable[..., Path], env: Callable[..., dict[str, str]]
) -> None:
    out = tmp_path / "board"
    first = ingest_results(run_copy(), name="model", night="2026-04-01", bootstrap=BOOT)
    commit(out, "2026-04-01", [first], [], bootstrap=BOOT)
    old_bytes = (out / "leaderboard.json").read_bytes()
    second = ingest_results(
        run_copy(lambda r: r.__setitem__("date", r["date"] + 86400)), name="model", night="2026-04-02", bootstrap=BOOT
    )
    row_file = tmp_path / "row.json"
    row_file.write_text(json.dumps(second), encoding="utf-8")
    writer = children.start(
        [sys.executable, "-c", KILLED_WRITER, str(out), str(row_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert writer.stdout is not None
        line = writer.stdout.readline()
        assert line.strip() == "WRITING", writer.stderr.read() if writer.stderr else ""
        partial = list(out.glob(".leaderboard.json.*.tmp"))
        # caught mid-write: the temporary file exists and holds at most the first 100 bytes
        assert len(partial) == 1 and partial[0].stat().st_size <= 100
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    assert (out / "leaderboard.json").read_bytes() == old_bytes
    board = load_document(out / "leaderboard.json")
    assert [row["night"] for row in board["rows"]] == ["2026-04-01"]
    # the history file, written before the board, is complete (atomic too)
    assert load_document(out / "history" / "2026-04-02.json")["rows"][0]["night"] == "2026-04-02"
    # the next build cleans the dead writer's temporary file up and succeeds
    assert remove_stale_temporaries(out) == partial
    merged = commit(out, "2026-04-02", [second], [], bootstrap=BOOT)
    assert [row["night"] for row in merged["rows"]] == ["2026-04-02"]
    assert not list(out.glob(".*.tmp"))


def test_the_build_lock_excludes_a_second_build(tmp_path: Path) -> None:
    with build_lock(tmp_path), pytest.raises(BuildLockedError, match="another leaderboard build is running"):
        with build_lock(tmp_path):
            pass
    with build_lock(tmp_path):  # released
        pass


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_ctrl_c_during_a_build_leaves_the_previous_leaderboard(
    tmp_path: Path, run_copy: Callable[..., Path], env: Callable[..., dict[str, str]]
) -> None:
    out = tmp_path / "board"
    commit(
        out,
        "2026-04-01",
        [ingest_results(run_copy(), name="dummy", night="2026-04-01", bootstrap=BOOT)],
        [],
        bootstrap=BOOT,
    )
    old_bytes = (out / "leaderboard.json").read_bytes()
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: dummy, model: dummy}\n", encoding="utf-8")
    exe = Path(sys.executable).parent / "logic-consistency"
    build = children.start(
        [
            str(exe),
            "leaderboard",
            "build",
            "--models",
            str(models),
            "--out",
            str(out),
            "--night",
            "2026-04-02",
            "--tasks",
            "logic_consistency_pairwise",
            "--limit",
            "2",
            "--n-resamples",
            "1000",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    run_dir = out / "runs" / "2026-04-02"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _processes_mentioning(str(run_dir) + "/"):
            assert build.poll() is None, build.communicate()
            time.sleep(0.2)
        assert _processes_mentioning(str(run_dir) + "/"), "lm_eval never started"
        time.sleep(1.0)
        build.send_signal(signal.SIGINT)
        _, stderr = build.communicate(timeout=60)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    assert build.returncode == 130, stderr[-3000:]
    assert "interrupted; the previous leaderboard is unchanged" in stderr
    assert (out / "leaderboard.json").read_bytes() == old_bytes
    assert not (out / "history" / "2026-04-02.json").exists()
    assert _processes_mentioning(str(run_dir) + "/") == []  # the lm_eval run was stopped too
    assert os.listdir(out / "history") == ["2026-04-01.json"]
