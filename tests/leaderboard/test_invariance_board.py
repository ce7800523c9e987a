"""A results file of the invariance family's wrapped MMLU tasks joins the board and renders (issue 55, item 6).

One real ``lm_eval --model dummy`` run of ``logic_consistency_invariance`` (two MMLU subjects under ``cyclic``)
on the fixture data, with samples: the ingested row carries the per-question metrics with their bootstrap
intervals, the declared display facts of the family (``tasks/invariance/_metrics_yaml``: pick rates with no
better direction, their ideal 1/k), and the page renders the document.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.page.render import render_html
from logic_consistency.tasks.reports import metric_display

pytestmark = pytest.mark.slow  # one lm_eval child process

ROOT = Path(__file__).resolve().parents[2]
GROUP = "logic_consistency_invariance"
LEAVES = ("logic_consistency_invariance_mmlu_abstract_algebra", "logic_consistency_invariance_mmlu_anatomy")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, env: Callable[..., dict[str, str]]) -> Path:
    out = tmp_path_factory.mktemp("invariance_run")
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    command = [lm_eval, "--model", "dummy", "--tasks", GROUP, "--limit", "3", "--log_samples"]
    done = children.run(
        [*command, "--output_path", str(out)], capture_output=True, text=True, env=env(), timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-4000:]
    (path,) = sorted(out.glob("*/results_*.json"))
    return path


def test_the_wrapped_tasks_join_the_board_and_render(results: Path) -> None:
    boot = BootstrapSettings(n_resamples=200)
    row = ingest_results(results, night="2026-12-05", bootstrap=boot)
    lm_eval_results: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))["results"]
    for task in LEAVES:
        entry = row["tasks"][task]
        assert entry["n_instances"] == 3
        for metric in ("acc_original", "acc_circular", "content_consistency"):
            value = entry["metrics"][metric]
            assert value["score"] == lm_eval_results[task][f"{metric},none"]
            assert value["ci95"] is not None and value["ci95"][0] <= value["score"] <= value["ci95"][1]
    assert GROUP in row["tasks"]
    html = render_html(make_document("leaderboard", [row], night="2026-12-05", bootstrap=boot))
    assert "CircularEval" in html  # the family's declared label reaches the page


def test_pick_rates_are_declared_with_no_better_direction() -> None:
    for label in "ABCD":
        display = metric_display(f"pick_rate_{label}")
        assert display is not None and display["higher_is_better"] is None
        assert "1/k" in display["description"]
    circular = metric_display("acc_circular")
    assert circular is not None and circular["higher_is_better"] is True
