"""Export of consistency fine-tuning pairs from sample logs written by a real lm-eval run."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gv_fake_models as fakes  # loaded by tests/tasks/gv/conftest.py
import pytest
from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

from logic_consistency.cli.export_gv import add_cli
from logic_consistency.tasks.data import DATA_ENV_VAR
from logic_consistency.tasks.gv.export import export_pairs

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
TASKS = ["logic_consistency_gv_arithmetic", "logic_consistency_gv_triviaqa", "logic_consistency_gv_style_transfer"]


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Sample logs of one run: arithmetic inconsistent, one TriviaQA answer unparseable, style consistent."""

    def generate(prompt: str) -> str:
        return " Mars" if "Red Planet" in prompt else fakes.oracle_generate(prompt)

    honest, liar = fakes.oracle_score(honest=True), fakes.oracle_score(honest=False)

    def score(context: str, continuation: str) -> float:
        return (liar if context.startswith("Verify whether") else honest)(context, continuation)

    out = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ENV_VAR, str(FIXTURES / "data"))
        manager = TaskManager(include_path=str(ROOT / "tasks" / "gv"), include_defaults=False, metadata={"n_docs": 5})
        results = simple_evaluate(
            model=fakes.ScriptedLM(generate, score), tasks=TASKS, task_manager=manager, log_samples=True
        )
    samples = results.pop("samples")
    tracker = EvaluationTracker(output_path=str(out))
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    yield out


def sample_files(folder: Path) -> list[Path]:
    files = sorted(folder.rglob("samples_*.jsonl"))
    assert len(files) == len(TASKS)
    return files


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_consistent_only_keeps_the_consistent_pairs(samples_dir: Path, tmp_path: Path) -> None:
    result = export_pairs(sample_files(samples_dir), tmp_path, consistent_only=True)
    assert result.path == tmp_path / "gv_pairs_consistent.jsonl"
    records = read_jsonl(result.path)
    # arithmetic: 5 inconsistent; TriviaQA: 3 consistent + 1 unparseable; style transfer: 5 consistent
    assert (result.documents, result.incomplete, result.exported, result.pairs) == (14, 1, 8, 16)
    assert len(records) == 16 and all(record["consistent"] for record in records)
    assert {record["task"] for record in records} == {
        "logic_consistency_gv_triviaqa",
        "logic_consistency_gv_style_transfer",
    }
    assert [record["role"] for record in records] == ["generator", "validator"] * 8
    for generator, validator in zip(records[::2], records[1::2]):
        assert generator["doc_id"] == validator["doc_id"] and generator["r"] == validator["r"]
        assert validator["response"] == ("A" if validator["r"] == 1 else "B")  # consistent: v == r
    trivia = next(r for r in records if r["task"] == "logic_consistency_gv_triviaqa" and r["role"] == "generator")
    assert trivia["prompt"].startswith("Generate one correct answer and one misleading answer (delimited by ||)")
    assert trivia["prompt"].endswith("\nAnswer:") and trivia["response"].endswith("|| Wrongtown")
    validator = next(r for r in records if r["task"] == "logic_consistency_gv_triviaqa" and r["role"] == "validator")
    assert validator["prompt"].startswith("Answer the following multiple choice question:")
    assert validator["prompt"].endswith("Answer (A or B):")


def test_all_pairs_keep_inconsistent_ones_but_not_unparseable(samples_dir: Path, tmp_path: Path) -> None:
    result = export_pairs(sample_files(samples_dir), tmp_path, consistent_only=False)
    records = read_jsonl(tmp_path / "gv_pairs_all.jsonl")
    assert (result.exported, result.pairs, len(records)) == (13, 26, 26)
    arithmetic = [r for r in records if r["gv_task"] == "arithmetic"]
    assert len(arithmetic) == 10 and not any(r["consistent"] for r in arithmetic)
    for record in arithmetic[1::2]:  # the lying validator says the opposite of r
        assert record["response"] == ("False" if record["r"] == 1 else "True")
    assert not any("Red Planet" in r["prompt"] for r in records)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gv_pairs_all.jsonl"]  # no temporary file left


def test_cli_writes_both_files(samples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="logic-consistency")
    add_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export-gv", str(samples_dir), "--out", str(tmp_path / "pairs")])
    assert args.run(args) == 0
    assert sorted(p.name for p in (tmp_path / "pairs").iterdir()) == ["gv_pairs_all.jsonl", "gv_pairs_consistent.jsonl"]
    printed = capsys.readouterr().out
    assert "16 pairs from 8 of 14 documents" in printed and "26 pairs from 13 of 14" in printed


def test_rejects_files_that_are_not_gv_samples(tmp_path: Path) -> None:
    broken = tmp_path / "samples_other_2024-01-01T00-00-00.000000.jsonl"
    broken.write_text(json.dumps({"doc": {"question": "q"}, "acc": 1.0}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{broken.name} line 1: not a generator-validator sample"):
        export_pairs([broken], tmp_path / "out", consistent_only=True)
    broken.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: not valid JSON"):
        export_pairs([broken], tmp_path / "out", consistent_only=False)
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        export_pairs([tmp_path / "missing.jsonl"], tmp_path / "out", consistent_only=True)
