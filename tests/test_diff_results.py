"""scripts/diff_results.py: the check that a faster quick start gives the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "diff_results.py"


def _write(path: Path, results: dict[str, Any], n_samples: dict[str, Any] | None = None) -> Path:
    n = {"t": {"original": 3, "effective": 3}} if n_samples is None else n_samples
    path.write_text(json.dumps({"results": results, "n-samples": n, "config": {"x": 1}}), encoding="utf-8")
    return path


def _run(*args: Path) -> subprocess.CompletedProcess[str]:
    return children.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_identical_scores_pass_and_nan_equals_nan(tmp_path: Path) -> None:
    scores = {"t": {"alias": "t", "s_comm,none": 0.5, "s_comm_stderr,none": float("nan")}}
    result = _run(_write(tmp_path / "a.json", scores), _write(tmp_path / "b.json", scores))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 values compared, 0 differ" in result.stdout  # 3 scores + 2 n-samples counts


def test_a_changed_missing_or_extra_value_fails_and_is_named(tmp_path: Path) -> None:
    before = _write(tmp_path / "a.json", {"t": {"s_comm,none": 0.5, "s_neg,none": 1.0}})
    after = _write(
        tmp_path / "b.json", {"t": {"s_comm,none": 0.5000001, "h,none": 0.1}}, {"t": {"original": 3, "effective": 2}}
    )
    result = _run(before, after)
    assert result.returncode == 1
    assert "results/t/s_comm,none: 0.5 -> 0.5000001" in result.stdout
    assert "results/t/s_neg,none: only in before" in result.stdout
    assert "results/t/h,none: only in after" in result.stdout
    assert "n-samples/t/effective: 3 -> 2" in result.stdout
    assert "t: version None -> None" in result.stdout and "5 values compared, 4 differ (1 equal)" in result.stdout


def test_a_file_without_a_results_section_is_named(tmp_path: Path) -> None:
    good = _write(tmp_path / "a.json", {"t": {"s,none": 1.0}})
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"config": {}}), encoding="utf-8")
    result = _run(good, bad)
    assert result.returncode == 2
    assert f"{bad}: no 'results' or 'n-samples' section" in result.stderr
