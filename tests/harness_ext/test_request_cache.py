"""A corrupt ``--use_cache`` file is named in one line, with the fix, in ``lm_eval`` runs and in
leaderboard builds; a suite option given in ``--model_args`` is recorded in the row."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from logic_consistency.harness_ext.request_cache import MARKER, check_request_cache
from logic_consistency.leaderboard.nightly import build
from logic_consistency.leaderboard.provenance import task_config
from logic_consistency.leaderboard.results import RunOutput

LM_EVAL = str(Path(sys.executable).parent / "lm_eval")


def test_plain_lm_eval_names_the_corrupt_cache_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "cache_rank0.db").write_text("not a database " * 50)
    done = subprocess.run(
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
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert MARKER in last and str(tmp_path / "cache_rank0.db") in last and "delete it" in last, done.stderr[-2000:]
    assert done.stderr.count("Traceback") == 1


def test_a_valid_or_missing_cache_passes(tmp_path: Path) -> None:
    check_request_cache(tmp_path / "absent_rank0.db")
    import sqlite3

    with sqlite3.connect(tmp_path / "ok_rank0.db") as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
    connection.close()
    check_request_cache(tmp_path / "ok_rank0.db")


def test_a_build_reports_the_cache_line_not_the_exit_status(tmp_path: Path) -> None:
    fake = tmp_path / "fake_lm_eval"
    line = f"logic_consistency.harness_ext.request_cache.{MARKER}--use_cache: c_rank0.db is not a readable SQLite request cache"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\nprint('Traceback (most recent call last):', file=sys.stderr)\n"
        f"print({line!r}, file=sys.stderr)\nsys.exit(1)\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy}\n", encoding="utf-8")
    result = build(
        tmp_path / "board", model_list=models, night="2026-01-01", lm_eval=str(fake), progress=False, log=lambda _: None
    )
    message = result.document["failures"][0]["error"]["message"]
    assert message.startswith("--use_cache: c_rank0.db is not a readable SQLite request cache"), message


def test_a_seed_given_in_model_args_is_the_seed_the_row_records(tmp_path: Path) -> None:
    results = {
        "config": {"model_args": "pretrained=x,seed=5"},
        "configs": {"t": {"task": "t", "metadata": {"seed": 5, "pretrained": "x", "version": 1.0}}},
    }
    run = RunOutput(tmp_path / "results.json", results, {}, {})
    assert task_config(run, "t")["metadata"] == {"seed": 5, "version": 1.0}
