"""docs/adding-a-task.md cannot drift: its external-folder example runs as printed from a temporary
folder outside the repository (on lm-eval's ``dummy`` model), and its table of the suite's YAML keys
is the keys the task classes declare (``EXTRA_KEYS``, and the fields of a multi-stage ``Stage``)."""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.task.base import PromptedTask
from logic_consistency.harness_ext.task.multistage import MultiStageTask, Stage
from logic_consistency.tasks.invariance import task as invariance_task  # noqa: F401  (registers subclasses)
from logic_consistency.tasks.pairwise import pairs_task, self_agreement_task, task  # noqa: F401  (registers subclasses)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_check import shell_blocks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "adding-a-task.md"
SECTION = "## A task in a folder of your own"


def _section(heading: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def _first_bash_block(text: str) -> str:
    return next("\n".join(lines) for _, language, lines in shell_blocks(text) if language == "bash")


def _table_keys(text: str, header: str) -> set[str]:
    """The first column's code names of the Markdown table that starts with ``header``."""
    table = text[text.index(header) :].split("\n\n", 1)[0]
    return {re.findall(r"`(\w+)`", line.split("|")[1])[0] for line in table.splitlines()[2:]}


@pytest.mark.slow
def test_the_external_folder_example_runs_outside_the_repository(tmp_path: Path) -> None:
    assert not tmp_path.resolve().is_relative_to(ROOT)
    script = _first_bash_block(_section(SECTION))
    env = {
        **os.environ,
        # the console scripts of this interpreter's environment, as after an install
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    done = children.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # check-task names the task and its documents; the dummy run wrote lm-eval's results file
    assert "logic_consistency_mydata" in done.stdout
    (results_file,) = glob.glob(str(tmp_path / "results" / "**" / "results_*.json"), recursive=True)
    results = json.loads(Path(results_file).read_text(encoding="utf-8"))["results"]["logic_consistency_mydata"]
    for metric in ("s_tran_3,none", "s_comm,none", "s_neg,none", "human_agreement,none"):
        assert 0.0 <= results[metric] <= 1.0, metric
    # one YAML file and the data: no Python loader
    assert sorted(p.name for p in (tmp_path / "mytasks").iterdir()) == ["mydata.jsonl", "mydata.yaml"]
    # the include was written through tasks-dir as an absolute path to the installed suite
    yaml_text = (tmp_path / "mytasks" / "mydata.yaml").read_text(encoding="utf-8")
    include = yaml_text.splitlines()[0].removeprefix("include: ")
    assert Path(include).is_absolute() and Path(include).is_file(), include


def _subclasses(cls: type) -> set[type]:
    return {sub for direct in cls.__subclasses__() for sub in {direct, *_subclasses(direct)}}


def test_the_yaml_key_reference_is_the_declared_keys() -> None:
    text = _section("## The suite's YAML keys")
    declared = {key for cls in _subclasses(PromptedTask) for key in cls.EXTRA_KEYS}
    assert _table_keys(text, "| key | task class |") == declared
    assert set(MultiStageTask.EXTRA_KEYS) <= declared
    stage_keys = {f.name for f in dataclasses.fields(Stage) if f.metadata.get("yaml_key", True)}
    assert _table_keys(text, "| stage key |") == stage_keys
