"""docs/running.md's "From Python" block runs as printed (lm-eval's dummy model, the fixture data)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"


def test_the_simple_evaluate_block_runs_and_prints_two_rates(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python") :]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    env = {**os.environ, "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = children.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    s_comm, human_agreement = (float(word) for word in done.stdout.split()[-2:])
    assert 0.0 <= s_comm <= 1.0 and 0.0 <= human_agreement <= 1.0
