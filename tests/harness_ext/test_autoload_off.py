"""docs/backends.md's table of what runs with ``LOGIC_CONSISTENCY_AUTOLOAD=0`` is what happens:
the backends it lists are (or are not) registered, its "runs" tasks run on lm-eval's dummy model
with ``--include_path``, and a task of each kind it lists as needing the hook stops with the error
that names the task and the hook."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.autoload import tasks_dir

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
OFF = {
    **os.environ,
    "LOGIC_CONSISTENCY_AUTOLOAD": "0",
    "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA),
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
}


def _table_row(label: str) -> tuple[list[str], list[str]]:
    """The names in the "runs" and "needs the hook" cells of the page's row ``label``."""
    text = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")
    (line,) = [row for row in text.splitlines() if row.startswith(f"| {label} |")]
    cells = line.strip("|").split("|")
    return re.findall(r"`([\w-]+)`", cells[1]), re.findall(r"`([\w-]+)`", cells[2])


def _lm_eval(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lm_eval", "--model", "dummy", "--include_path", str(tasks_dir()), *args]
    return children.run(command, capture_output=True, text=True, env=OFF, timeout=900)


def test_the_backends_registered_without_the_hook() -> None:
    runs, needs = _table_row("backends")
    assert runs and needs
    probe = (
        "import json, sys, lm_eval.models\n"
        "from lm_eval.api.registry import model_registry\n"
        "print(json.dumps({name: name in model_registry for name in sys.argv[1:]}))"
    )
    done = children.run(
        [sys.executable, "-c", probe, *runs, *needs], capture_output=True, text=True, env=OFF, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    registered = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(registered[name] for name in runs), registered
    assert not any(registered[name] for name in needs), registered


def test_the_tasks_that_run_without_the_hook(tmp_path: Path) -> None:
    runs, _ = _table_row("tasks")
    run = _lm_eval("--tasks", ",".join(runs), "--limit", "1", "--metadata", '{"max_items": 5}')
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize(
    ("task", "group"),
    [
        ("logic_consistency_gv_arithmetic", "logic_consistency_gv"),  # multi-stage
        ("logic_consistency_summeval_pairs", "logic_consistency_pairwise_pairs"),  # PairS merge rounds
        ("logic_consistency_summeval_cot_sc", "logic_consistency_pairwise_cot_sc"),  # self-agreement samples
    ],
)
def test_a_task_of_each_kind_that_needs_the_hook_says_so(task: str, group: str) -> None:
    assert group in _table_row("tasks")[1]
    run = _lm_eval("--tasks", task, "--limit", "1", "--metadata", '{"max_items": 5}')
    assert run.returncode != 0
    assert f"task {task!r}" in run.stderr and "needs the model object" in run.stderr, run.stderr[-2000:]
