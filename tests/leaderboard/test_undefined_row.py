"""A run in which every metric is undefined (lm-eval leaves a NaN aggregate out of its results) is a
failure on the board, not a success; ``leaderboard ingest`` refuses such a file.

The run is a real ``lm_eval --model dummy`` run of one small task, whose results file is then edited
the way lm-eval writes it when every reading was undefined: the metrics gone, the counts kept."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings, is_count
from logic_consistency.leaderboard.board.results import metric_keys
from logic_consistency.leaderboard.run.nightly import build, ingest_into
from logic_consistency.leaderboard.run.runner import no_metric_defined

pytestmark = pytest.mark.slow  # starts lm_eval or the CLI in every test (the full tier)

BOOT = BootstrapSettings(n_resamples=300)
ROOT = Path(__file__).resolve().parents[2]
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"


@pytest.fixture(scope="module")
def undefined_run(tmp_path_factory: pytest.TempPathFactory, env: Callable[..., dict[str, str]]) -> Path:
    """The folder of a one-task dummy run whose results file lists no metric, only counts."""
    out = tmp_path_factory.mktemp("undefined_run")
    run = children.run(
        [LM_EVAL, "--model", "dummy", "--tasks", "logic_consistency_pairwise", "--limit", "2"]
        + ["--metadata", json.dumps({"max_items": 5}), "--output_path", str(out), "--log_samples"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=900,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    (results_path,) = sorted(out.glob("*/results_*.json"))
    results = json.loads(results_path.read_text(encoding="utf-8"))
    for entry in results["results"].values():
        for key, metric, filter_name in metric_keys(entry):
            if not is_count(metric):
                del entry[key]
                entry.pop(f"{metric}_stderr,{filter_name}", None)
    assert any(metric_keys(entry) for entry in results["results"].values()), "the counts are kept"
    results_path.write_text(json.dumps(results), encoding="utf-8")
    return results_path.parent


COPY_RUN = """\
#!{python}
import shutil, sys
from pathlib import Path

args = sys.argv[1:]
shutil.copytree({run!r}, Path(args[args.index("--output_path") + 1]) / "dummy", dirs_exist_ok=True)
"""


def test_a_run_without_any_defined_metric_is_a_failure(tmp_path: Path, undefined_run: Path) -> None:
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(COPY_RUN.format(python=sys.executable, run=str(undefined_run)), encoding="utf-8")
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: judge, model: dummy, tasks: logic_consistency_pairwise}\n", encoding="utf-8")
    result = build(
        tmp_path / "board",
        model_list=models,
        night="2026-01-01",
        lm_eval=str(fake),
        bootstrap=BOOT,
        progress=False,
        log=lambda _: None,
    )
    assert result.document["rows"] == []
    (failure,) = result.document["failures"]
    assert failure["name"] == "judge" and failure["error"]["code"] == "no_metric"


def test_ingest_refuses_a_results_file_without_any_defined_metric(tmp_path: Path, undefined_run: Path) -> None:
    copy = shutil.copytree(undefined_run, tmp_path / "run")
    with pytest.raises(ValueError, match=r"results_.*\.json: field 'results': no metric is defined in any task"):
        ingest_into(tmp_path / "board", [copy], night="2026-01-01", bootstrap=BOOT)
    assert not (tmp_path / "board" / "leaderboard.json").exists()


def test_a_row_with_one_defined_metric_is_not_undefined() -> None:
    metric = {"score": 0.5, "ci95": None, "n": 1, "higher_is_better": True, "lm_eval_stderr": None}
    row = {"tasks": {"t": {"metrics": {}, "counts": {"unparseable": {"total": 3, "n": 3}}}, "g": {"metrics": {}}}}
    assert no_metric_defined(row)
    row["tasks"]["g"]["metrics"] = {"s_comm": metric}
    assert not no_metric_defined(row)
