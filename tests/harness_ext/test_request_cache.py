"""A corrupt ``--use_cache`` file is named in one line, with the fix, in ``lm_eval`` runs and in
leaderboard builds; a cache locked by another run is called busy, never corrupt (its answers are
kept); an unwritable cache folder is named; a suite option given in ``--model_args`` is recorded in
the row."""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.publish.request_cache import MARKER, RequestCacheError, check_request_cache
from logic_consistency.leaderboard.board.provenance import task_config
from logic_consistency.leaderboard.board.results import RunOutput
from logic_consistency.leaderboard.run.nightly import build

LM_EVAL = str(Path(sys.executable).parent / "lm_eval")


def _lm_eval_with_cache(cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return children.run(
        [
            LM_EVAL,
            "--model",
            "dummy",
            "--tasks",
            "logic_consistency_gv_arithmetic",
            "--limit",
            "1",
            "--metadata",
            '{"n_docs": 2}',
            "--use_cache",
            str(cache),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


@contextlib.contextmanager
def _held_by_another_run(path: Path) -> Iterator[None]:
    """A sound cache file on which a second connection holds an exclusive lock (as a writing run can)."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
        connection.execute("INSERT INTO unnamed VALUES ('k', '\"an answer\"')")
    connection.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_locked_cache_is_busy_not_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "cache_rank0.db"
    with _held_by_another_run(path), pytest.raises(RequestCacheError) as raised:
        check_request_cache(path, timeout=0.1)
    message = str(raised.value)
    assert f"--use_cache: {path} is in use by another run (database is locked)" in message
    assert "wait for that run to finish, or pass another --use_cache" in message
    assert "delete" not in message and "not a readable" not in message
    check_request_cache(path)  # the lock released, the same file is a sound cache again
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT key FROM unnamed").fetchall() == [("k",)]  # nothing was lost
    connection.close()


@pytest.mark.slow
def test_plain_lm_eval_calls_a_locked_cache_busy_in_one_line(tmp_path: Path) -> None:
    with _held_by_another_run(tmp_path / "cache_rank0.db"):
        done = _lm_eval_with_cache(tmp_path / "cache", tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert MARKER in last and "in use by another run" in last and "delete" not in last, done.stderr[-2000:]
    assert done.stderr.count("Traceback") == 1


@pytest.mark.slow
def test_an_unwritable_cache_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(RequestCacheError, match="pass a --use_cache in a writable folder") as raised:
        check_request_cache("/proc/no_such_folder/cache_rank0.db")
    assert "/proc/no_such_folder/cache_rank0.db cannot be created" in str(raised.value)
    done = _lm_eval_with_cache(Path("/proc/no_such_folder/cache"), tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and MARKER in last and "writable folder" in last, done.stderr[-2000:]


def test_a_valid_or_missing_cache_passes(tmp_path: Path) -> None:
    check_request_cache(tmp_path / "absent_rank0.db")
    import sqlite3

    with sqlite3.connect(tmp_path / "ok_rank0.db") as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
    connection.close()
    check_request_cache(tmp_path / "ok_rank0.db")


@pytest.mark.parametrize("raised", [True, False])
def test_a_build_reports_the_cache_error_from_its_record_not_from_a_line(tmp_path: Path, raised: bool) -> None:
    """Issue 54: the suite's own cache error is known from the record the run's process wrote
    (``publish/failure_facts.py``); the same words on stderr (an endpoint's body may hold them) are no fact."""
    fake = tmp_path / "fake_lm_eval"
    message = "--use_cache: c_rank0.db is not a readable SQLite request cache"
    line = f"logic_consistency.harness_ext.publish.request_cache.{MARKER}{message}"
    record = (
        "from logic_consistency.harness_ext.publish.failure_facts import record_failure\n"
        f"record_failure(RequestCacheError({message!r}))\n"
        if raised
        else ""
    )
    fake.write_text(
        f"#!{sys.executable}\nimport sys\nfrom logic_consistency.harness_ext.publish.request_cache import "
        f"RequestCacheError\n{record}print('Traceback (most recent call last):', file=sys.stderr)\n"
        f"print({line!r}, file=sys.stderr)\nsys.exit(1)\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy}\n", encoding="utf-8")
    result = build(
        tmp_path / "board", model_list=models, night="2026-01-01", lm_eval=str(fake), progress=False, log=lambda _: None
    )
    failure = result.document["failures"][0]
    if not raised:  # only the words: an ordinary failure, no class or status guessed from them
        assert (failure["error"]["code"], failure["error"]["error_class"]) == ("lm_eval_failed", None), failure
        return
    assert failure["error"]["code"] == "request_cache", failure  # the board: a code (issue 46); the line: the log
    assert failure["error"]["error_class"] == "RequestCacheError"
    log = (tmp_path / "board" / failure["log_file"]).read_text(encoding="utf-8")
    assert f"failure request_cache: {message}" in log


def test_a_seed_given_in_model_args_is_the_seed_the_row_records(tmp_path: Path) -> None:
    results = {
        "config": {"model_args": "pretrained=x,seed=5"},
        "configs": {"t": {"task": "t", "metadata": {"seed": 5, "pretrained": "x", "version": 1.0}}},
    }
    run = RunOutput(tmp_path / "results.json", results, {}, {})
    assert task_config(run, "t")["metadata"] == {"seed": 5, "version": 1.0}


def test_the_results_record_the_cache_path_without_the_folder_it_lies_in() -> None:
    """Issue 46 (fifth audit): ``config.use_cache`` (a build passes its own cache folder) is published as
    ``local:<SHA-256>/<name>``, never a home folder; a relative path stays as it was given."""
    from logic_consistency.harness_ext.publish.run import publish_results

    home = str(Path.home() / "board" / "cache" / "model-a")
    for given, expected in ((home, r"local:[0-9a-f]{12}/model-a"), ("cache/model-a", r"cache/model-a")):
        results: dict[str, object] = {"config": {"use_cache": given, "model_args": ""}}
        publish_results(results, backend="dummy", model_args="", metadata=None)
        assert re.fullmatch(expected, results["config"]["use_cache"]), results  # type: ignore[index]


class _Touch:
    """Unpickling this (in any process) runs ``touch MARKER``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.slow
def test_plain_lm_eval_refuses_a_planted_pickle_cache_and_runs_no_code(tmp_path: Path) -> None:
    """Issue 46: a --use_cache file whose answer is a pickle (lm-eval's own format, or planted) is named in
    one line, never unpickled: the payload, which would write a marker file, does not run. (It replaces the
    corrupt-file run of this module: a corrupt file takes the same path, and the bad-input table checks its
    message in-process.)"""
    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Touch(marker))
    with sqlite3.connect(tmp_path / "cache_rank0.db") as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
        connection.execute("INSERT INTO unnamed VALUES (?, ?)", ("0" * 64, payload))
    connection.close()
    done = _lm_eval_with_cache(tmp_path / "cache", tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and MARKER in last and "delete it" in last, done.stderr[-2000:]
    assert f"--use_cache: {tmp_path / 'cache_rank0.db'} holds an answer that is not JSON text" in last
    assert done.stderr.count("Traceback") == 1
    assert not marker.exists()
