"""A GV round whose filtered set is too small is a row that says so (naming the round and its counts)
and is never trained; the rounds that would train on its adapter's data say so too; the report marks
them, and a rerun tries them again. The lm_eval runs are replaced by sample files: no model runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.tasks.gv import improve  # noqa: E402


def _samples(folder: Path, n: int) -> list[Path]:
    """``n`` documents whose generator answers were unparseable (what SmolLM2-135M writes)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples_logic_consistency_gv_arithmetic_x.jsonl"
    # an unparseable generator answer: the stage is logged, no gv_consistency (as the task logs it)
    row = {"doc": {"question": "What is 1 + 1?", "stages": {"generator": {}}}, "unparseable_generator": 1.0}
    path.write_text("".join(json.dumps({**row, "doc_id": i}) + "\n" for i in range(n)), encoding="utf-8")
    return [path]


def test_a_round_with_too_few_pairs_is_said_and_not_trained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def evaluate(self: Any, row: str, split: str, adapter: Path | None) -> list[Path]:
        assert adapter is None, "no round may train, so no adapter is ever evaluated"
        return _samples(self.study.row_dir(row) / f"{split}_eval", 5)

    def no_training(job: Any) -> Any:
        raise AssertionError(f"trained {job.label} on {len(job.examples)} examples")

    monkeypatch.setattr(improve._GVStudy, "evaluate", evaluate)
    monkeypatch.setattr(improve, "train_adapter", no_training)
    monkeypatch.setattr(improve, "check_disjoint", lambda *args: None)
    options = improve.GVStudyOptions(base=tiny_base(tmp_path / "base"), out=tmp_path / "s", limit=5, rounds=2)
    rows = improve.run_gv_study(options)

    assert [r["row"] for r in rows] == ["round_0", "gv_round_1", "gv_round_2", "selftrain_round_1", "selftrain_round_2"]
    assert rows[1]["not_trained"] == (
        "consistency FT round 1: not trained (0 GV-consistent pairs from 5 train documents: 0 examples, fewer "
        "than --min-examples 8)"
    )
    assert rows[2]["not_trained"] == (
        "consistency FT round 2: not trained (its data would come from gv_round_1, which was not trained)"
    )
    assert rows[3]["not_trained"].startswith("SelfTrain round 1: not trained (0 complete pairs from 5 train")
    assert all(r["adapter"] is None and r["training"] is None for r in rows)
    assert "consistency FT round 1: not trained (0 GV-consistent pairs" in capsys.readouterr().err
    table = (options.out / "table.md").read_text()
    assert "| gv_round_1 (not trained) | undefined |" in table
    assert (
        "- SelfTrain round 2: not trained (its data would come from selftrain_round_1"
        in (options.out / "README.md").read_text()
    )
    assert (options.out / "pareto.png").is_file()
    # only the base row is finished: a rerun with more documents or a lower --min-examples tries again
    assert sorted(p.parent.name for p in (options.out / "rows").glob("*/row.json")) == ["round_0"]
