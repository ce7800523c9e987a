"""``improve gv --transfer``: every row of the GV study is evaluated on the pairwise and causal families
too (its GV column is its own test evaluation) and the study writes the transfer table. The lm_eval runs
are replaced by sample files and the transfer evaluation by a recorder: no model runs (the real transfer
evaluation runs in tests/test_improve_tables.py)."""

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


def test_every_gv_row_gets_the_other_families_and_the_table_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def evaluate(self: Any, row: str, split: str, adapter: Path | None, tasks: str | None = None) -> list[Path]:
        folder = self.study.row_dir(row) / f"{split}_eval"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "samples_logic_consistency_gv_arithmetic_x.jsonl"
        # an unparseable generator answer (no training pair); the test split's row has a GV value
        sample: dict[str, Any] = {"doc_id": 0, "doc": {"question": "What is 1 + 1?", "stages": {"generator": {}}}}
        sample |= {"gv_consistency": 1.0} if split == "test" else {"unparseable_generator": 1.0}
        path.write_text(json.dumps(sample) + "\n", encoding="utf-8")
        return [path]

    asked: list[tuple[str, list[str], int | None]] = []
    dtypes: list[str] = []

    def transfer(run: Any, families: list[Any], out: Path, *, label: str) -> dict[str, Any]:
        asked.append((label, [f.task for f in families], run.limit))
        dtypes.append(run.dtype)
        cell = {"mean": 0.25, "ci95": [0.0, 0.5], "n": 2}
        return {f.family: {"task": f.task, "metrics": {key: cell for _, key in f.columns}} for f in families}

    monkeypatch.setattr(improve._GVStudy, "evaluate", evaluate)
    monkeypatch.setattr(improve, "evaluate_transfer", transfer)
    monkeypatch.setattr(improve, "evaluation_dtype", lambda settings, manifest: "bfloat16")
    monkeypatch.setattr(improve, "check_disjoint", lambda *args: None)
    options = improve.GVStudyOptions(base=tiny_base(tmp_path / "base"), out=tmp_path / "s", limit=3, rounds=1,
                                     selftrain_rounds=2, transfer=True)  # fmt: skip
    rows = improve.run_gv_study(options)

    # round 0 is evaluated; the rounds that are not trained (one document: too few pairs) have no cells
    assert asked == [("round_0", ["logic_consistency_caters", "logic_consistency_causal_ranking"], 3)]
    assert rows[0]["transfer"]["gv"]["metrics"]["gv_consistency"]["mean"] == 1.0
    written = json.loads((options.out / "transfer.json").read_text())
    assert [f["family"] for f in written["families"]] == ["pairwise", "gv", "causal"]
    table = (options.out / "transfer.md").read_text()
    assert "| base | 25.0 [0.0, 50.0] (n=2) |" in table  # labelled as every other table labels its rows
    assert "| consistency FT round 1 (not trained) | undefined |" in table
    assert "| SelfTrain round 2 (suite's variant: iterated SelfTrain) (not trained) | undefined |" in table
    assert dtypes == ["bfloat16"]  # the dtype the study trains in, as its own evaluations (not lm_eval's float32)
    assert json.loads((options.out / "study.json").read_text())["transfer"] is True
