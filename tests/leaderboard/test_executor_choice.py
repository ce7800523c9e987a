"""``--executor``: the local one needs no Ray; a missing Ray is one clear error with the install line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from .conftest import lm_eval_env
from .shard_support import hash_lm_eval, model_list

pytestmark = pytest.mark.slow  # starts lm_eval or the CLI in every test (the full tier)

#: Runs the command line with ``import ray`` failing as if Ray were not installed.
WITHOUT_RAY = """
import importlib.abc, sys

class NoRay(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoRay())
from logic_consistency.cli import main

status = main(sys.argv[1:])
assert "ray" not in sys.modules
sys.exit(status)
"""


def _without_ray(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", WITHOUT_RAY, "leaderboard", "build", *args]
    return children.run(command, capture_output=True, text=True, env=lm_eval_env(), timeout=600)


def test_missing_ray_is_one_clear_error_with_the_install_line(tmp_path: Path) -> None:
    run = _without_ray("--models", str(model_list(tmp_path)), "--out", str(tmp_path / "out"), "--executor", "ray")
    assert run.returncode == 2, run.stderr[-2000:]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("logic-consistency: error: --executor ray needs Ray")
    # the install line that works today (from a clone), and what a published release will allow
    assert "from a clone: pip install -e '.[ray]'" in line
    assert line.endswith('(a published release: pip install "logic-consistency[ray]")')
    assert not (tmp_path / "out").exists()


def test_the_local_executor_runs_without_ray(tmp_path: Path) -> None:
    models = model_list(tmp_path, tasks=["logic_consistency_summeval"], limit=1)
    out = tmp_path / "out"
    run = _without_ray("--models", str(models), "--out", str(out), "--lm-eval", hash_lm_eval(tmp_path), "--no-progress")
    assert run.returncode == 0, run.stderr[-3000:]
    assert (out / "leaderboard.json").is_file()


def test_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    run = _without_ray("--models", str(model_list(tmp_path)), "--out", str(tmp_path / "o"), "--ray-address", "auto")
    assert run.returncode == 2
    assert run.stderr.strip() == "logic-consistency: error: --ray-address needs --executor ray"
