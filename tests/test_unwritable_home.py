"""An unwritable HOME (``HOME=/proc``: nothing can be created there, not even by root).

The suite writes under HOME in two places, both only when asked to: the embedded models' converted
copies (``$LOGIC_CONSISTENCY_CACHE``, else ``$XDG_CACHE_HOME/logic_consistency``, else
``~/.cache/logic_consistency``) and the Hugging Face ``datasets`` cache of downloaded data
(``$HF_DATASETS_CACHE``, else ``$HF_HOME/datasets``, else ``~/.cache/huggingface/datasets``).
Either failure is one line naming the folder and the variable to set. A run on local data
(``LOGIC_CONSISTENCY_DATA``) needs no writable HOME at all. (matplotlib, used by
``causal-confusion``, falls back to a temporary folder by itself and names ``MPLCONFIGDIR``.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

BIN = Path(sys.executable).parent
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
UNSET = ("XDG_CACHE_HOME", "LOGIC_CONSISTENCY_CACHE", "HF_HOME", "HF_DATASETS_CACHE", "LOGIC_CONSISTENCY_DATA")


def _run(*argv: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in UNSET}
    environment.update(HOME="/proc", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", **env)
    return children.run(argv, capture_output=True, text=True, cwd=cwd, env=environment, timeout=600)


def test_model_path_names_the_cache_and_its_variable_in_one_line(tmp_path: Path) -> None:
    done = _run(str(BIN / "logic-consistency"), "model-path", "smollm2-135m-instruct", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "/proc/.cache/logic_consistency/models" in lines[0] and "set LOGIC_CONSISTENCY_CACHE" in lines[0]


def test_lm_eval_names_the_datasets_cache_and_its_variables(tmp_path: Path) -> None:
    done = _run(
        str(BIN / "lm_eval"), "--model", "dummy", "--tasks", "logic_consistency_noveleval", "--limit", "1", cwd=tmp_path
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "OutputError: Hugging Face datasets cache: cannot write /proc/.cache/huggingface/datasets" in last, (
        done.stderr[-3000:]
    )
    assert "set HF_HOME (or HF_DATASETS_CACHE) to a writable folder, or LOGIC_CONSISTENCY_DATA" in last
    assert done.stderr.count("Traceback") == 1


def test_a_run_on_local_data_needs_no_writable_home(tmp_path: Path) -> None:
    done = _run(
        str(BIN / "lm_eval"),
        "--model",
        "dummy",
        "--tasks",
        "logic_consistency_noveleval",
        "--limit",
        "1",
        "--metadata",
        '{"max_items": 3, "ks": [3], "pairs_runs": 0}',
        "--output_path",
        str(tmp_path / "out"),
        cwd=tmp_path,
        LOGIC_CONSISTENCY_DATA=str(FIXTURE_DATA),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((tmp_path / "out").rglob("results_*.json"))
