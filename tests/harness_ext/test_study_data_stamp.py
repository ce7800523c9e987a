"""A study's finished evaluation is kept only for the test data it read (issue 54): its ``done`` marker
holds the SHA-256 of each data file its ``lm_eval`` run read. The real ``lm_eval`` (the dummy model on
``logic_consistency_summeval``, one document) runs through :func:`run_lm_eval`: the same bytes in another
data folder are kept, another copy of the datasets (one file edited) is evaluated again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from logic_consistency.harness_ext.jobs.processes import default_lm_eval
from logic_consistency.harness_ext.training.data_read import READ_LOG
from logic_consistency.harness_ext.training.study_eval import LmEvalRun, run_lm_eval

pytestmark = pytest.mark.slow  # starts lm_eval

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
TASK = "logic_consistency_summeval"


def _dummy_lm_eval(self: LmEvalRun) -> list[str]:
    """The study's run with lm-eval's dummy model in place of the base (what is read is the point here)."""
    return [default_lm_eval(), "--model", "dummy", "--tasks", self.tasks, "--limit", "1",
            "--output_path", str(self.out), "--log_samples"]  # fmt: skip


def test_another_copy_of_the_datasets_is_evaluated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LmEvalRun, "command", _dummy_lm_eval)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    copies = {name: shutil.copytree(FIXTURE_DATA, tmp_path / name) for name in ("data-a", "data-b", "data-c")}
    edited = copies["data-c"] / "summeval" / "summeval_hub_format.jsonl"
    lines = edited.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = first["text"] + " (another release)"
    edited.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    out = tmp_path / "rows" / "zero_shot" / "test_eval"
    run = LmEvalRun(Path("/m"), TASK, {}, None, out, row_identity={"row": "zero_shot"})

    def evaluate(data: str) -> float:
        monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(copies[data]))
        run_lm_eval(run, label="zero_shot", timeout=600)
        return (out / "done").stat().st_mtime

    made = evaluate("data-a")
    marker = json.loads((out / "done").read_text(encoding="utf-8"))
    assert marker["local_data"] is True and list(marker["data_read"]) == ["summeval/summeval_hub_format.jsonl"]
    assert (out / READ_LOG).read_text(encoding="utf-8").split() == ["summeval/summeval_hub_format.jsonl"]
    assert evaluate("data-a") == made  # the same data: kept
    assert evaluate("data-b") == made  # the same bytes in another folder: kept (content, not path)
    assert evaluate("data-c") != made  # another copy of the datasets: evaluated again
    assert json.loads((out / "done").read_text(encoding="utf-8"))["data_read"] != marker["data_read"]
