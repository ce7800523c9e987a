"""The study machinery without a model: per-document metrics with bootstrap intervals (undefined
values left out, never 0), the table, a study folder that keeps its finished rows, and the GV report
(Table 3 per task and the average, Table 5, Figure 5 with App. I's correctness, README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.training.study import Study
from logic_consistency.harness_ext.training.study_eval import LmEvalRun
from logic_consistency.harness_ext.training.study_report import metric_summary, table_markdown
from logic_consistency.tasks.gv.improve_report import write_report
from logic_consistency.tasks.gv.improve_tables import task_metrics


def samples(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_metrics_leave_undefined_documents_out_and_carry_intervals(tmp_path: Path) -> None:
    file = samples(tmp_path / "samples_x.jsonl", [{"s": 1.0, "u": None}, {"s": 0.0}, {"s": float("nan")}, {"s": 1}])
    summary = metric_summary([file], ["s", "u"])
    assert summary["s"]["n"] == 3 and abs(summary["s"]["mean"] - 2 / 3) < 1e-12
    low, high = summary["s"]["ci95"]
    assert 0.0 <= low <= 2 / 3 <= high <= 1.0
    assert summary["u"] == {"mean": None, "ci95": None, "n": 0}
    table = table_markdown([("base", summary)], [("S", "s"), ("U", "u")])
    assert "| base | 66.7 [" in table and "| undefined |" in table


def test_a_study_folder_keeps_its_finished_rows(tmp_path: Path) -> None:
    study = Study(tmp_path / "s", {"study": "gv", "base": "m"})
    study.open()
    assert study.finished("round_0") is None
    study.finish("round_0", {"row": "round_0"})
    again = Study(tmp_path / "s", {"study": "gv", "base": "m"})
    again.open()  # the same study: reopened, not refused
    assert {k: v for k, v in (again.finished("round_0") or {}).items() if k != "hashes"} == {"row": "round_0"}


def test_the_evaluation_loads_the_adapter_as_a_user_would(tmp_path: Path) -> None:
    run = LmEvalRun(Path("/m"), "t", {"instance_split": "test"}, 3, tmp_path, adapter=Path("/a"))
    command = run.command()
    assert command[command.index("--model") + 1] == "lc-hf"  # the prefix-sharing hf: same arguments, same scores
    assert command[command.index("--model_args") + 1] == "pretrained=/m,dtype=float32,peft=/a"
    stock = LmEvalRun(Path("/m"), "t", {}, 3, tmp_path, adapter=Path("/a"), backend="hf").command()
    assert stock[stock.index("--model") + 1] == "hf"  # improve --eval-backend hf
    assert stock[stock.index("--model_args") + 1] == "pretrained=/m,dtype=float32,peft=/a"
    assert json.loads(command[command.index("--metadata") + 1]) == {"instance_split": "test"}
    assert "--apply_chat_template" in command and "--log_samples" in command


def test_the_gv_report_writes_table_3_table_5_figure_5_and_readme(tmp_path: Path) -> None:
    # a document without a generator answer has no accuracy and no correctness (left out, never 0)
    docs = [{"gv_consistency": 1, "generator_accuracy": 1, "validator_accuracy": 0},
            {"gv_consistency": 0, "generator_accuracy": 0, "validator_accuracy": 0},
            {"gv_consistency": None, "generator_accuracy": None, "validator_accuracy": None}]  # fmt: skip
    file = samples(tmp_path / "samples_logic_consistency_gv_arithmetic_cot_2026-01-01T00-00-00.jsonl", docs)
    metrics = task_metrics([file])
    cell = metrics["per_task"]["logic_consistency_gv_arithmetic_cot"]
    assert (cell["gv_consistency"]["mean"], cell["gv_consistency"]["n"]) == (0.5, 2)
    assert (cell["correctness"]["mean"], cell["correctness"]["n"]) == (0.25, 2)  # (1+0)/2 and (0+0)/2
    assert metrics["average"]["gv_consistency"]["mean"] == 0.5  # one task: its own score
    training = {"data_examples": 6, "steps": 2, "train_loss": 1.5, "train_tokens_per_s": 40.0, "wall_time_s": 3.0,
                "device": "cpu"}  # fmt: skip
    rows = [
        {"row": "round_0", "chain": "base", "round": 0, "metrics": metrics, "training": None},
        {"row": "gv_round_1", "chain": "consistency FT", "round": 1, "metrics": metrics, "training": training},
        {"row": "selftrain_round_1", "chain": "SelfTrain", "round": 1, "metrics": {}, "training": None,
         "not_trained": "SelfTrain round 1: not trained (0 complete pairs)"},
    ]  # fmt: skip
    identity = {"study": "gv", "base": "m", "tasks": "logic_consistency_gv_arithmetic", "rounds": 1, "limit": 4}
    study = Study(tmp_path / "s", identity)
    study.open()
    write_report(study, rows, identity=dict(study.identity))
    assert (study.out / "pareto.png").read_bytes().startswith(b"\x89PNG")
    table = (study.out / "table.md").read_text()
    assert (
        "| consistency FT round 1 | 50.0 [" in table and "| SelfTrain (not trained) | undefined | undefined |" in table
    )
    assert "| base | 50.0 [0.0, 100.0] (n=2) | 0.0 [0.0, 0.0] (n=2) |" in (study.out / "accuracy.md").read_text()
    readme = (study.out / "README.md").read_text()
    assert "pareto.png" in readme and "suite's variant: Table 13's prompts" in readme


def test_a_rerun_of_an_unfinished_lm_eval_reads_only_its_own_samples(tmp_path: Path, monkeypatch: Any) -> None:
    # lm_eval saves its samples before it prints its table: a try that failed there (seen on a GPU
    # machine missing pytz) left samples that a rerun read beside its own, counting each document twice.
    import sys

    from logic_consistency.harness_ext.training import study_eval as study

    out = tmp_path / "test_eval"
    work = tmp_path / "test_eval.partial"  # where the unfinished try wrote (renamed into place once it ends well)
    (work / "model").mkdir(parents=True)
    samples(work / "model" / "samples_task_2026-01-01.jsonl", [{"doc_id": 0, "s_comm": 0.0}])
    writes = (
        f"import pathlib; pathlib.Path({str(work / 'model' / 'samples_task_2026-01-02.jsonl')!r}).write_text('{{}}\\n')"
    )
    monkeypatch.setattr(LmEvalRun, "command", lambda self: [sys.executable, "-c", writes])
    found = study.run_lm_eval(LmEvalRun(base=Path("/m"), tasks="t", metadata={}, limit=None, out=out), label="row")
    assert [path.name for path in found] == ["samples_task_2026-01-02.jsonl"]
    assert found[0].parent == out / "model" and not work.exists()
    assert (out / "done").is_file()


def test_a_studys_lm_eval_runs_declare_the_suites_tasks_only(tmp_path: Path, monkeypatch: Any) -> None:
    """Every row's (and GV data generation's) ``lm_eval`` is started with ``LOGIC_CONSISTENCY_SUITE_TASKS_ONLY=1``:
    its tasks are the suite's, so lm-eval's built-in task files are not indexed (docs/benchmarks.md)."""
    from logic_consistency.harness_ext.autoload import ENV_SUITE_TASKS_ONLY
    from logic_consistency.harness_ext.jobs.processes import ProcessResult
    from logic_consistency.harness_ext.training import study_eval as study

    seen: list[dict[str, str]] = []

    def run_logged(command: list[str], *, env: dict[str, str], **options: Any) -> ProcessResult:
        seen.append(env)
        return ProcessResult(0, "", False, 0.0)

    monkeypatch.setattr(study, "run_logged", run_logged)
    monkeypatch.setenv("LC_SOME_SETTING", "kept")
    study.run_lm_eval(LmEvalRun(base=Path("/m"), tasks="t", metadata={}, limit=None, out=tmp_path / "e"), label="row")
    (env,) = seen
    assert env[ENV_SUITE_TASKS_ONLY] == "1" and env["LC_SOME_SETTING"] == "kept"
