"""The executor seam of an improve study (harness_ext/training/study.py) with the local executor: units
run here in order, a finished row is not run again, a failing unit names its row and stops the rest,
Ctrl-C passes through; the study driver runs a recipe declared in the test alone. The REPAIR recipe
builds its real training data (CaTeRS ``instance_split: train``, a tiny tokenizer); training and
``lm_eval`` are replaced by recorders, so no model runs."""

from __future__ import annotations

import dataclasses
import functools
import json
import pickle
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from climbs import counting_climbs  # noqa: E402
from study_fakes import finished_adapter  # noqa: E402
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.training.driver import (  # noqa: E402
    PlannedUnit,
    Stages,
    StudyBase,
    StudyPlan,
    StudyRecipe,
    run_study,
)
from logic_consistency.harness_ext.training.recipe_api import PaperValues, Stated, TrainingRecipe  # noqa: E402
from logic_consistency.harness_ext.training.study import Study  # noqa: E402
from logic_consistency.harness_ext.training.study_eval import LmEvalRun  # noqa: E402
from logic_consistency.harness_ext.training.study_executor import StudyUnit, StudyUnitError, run_locally  # noqa: E402
from logic_consistency.harness_ext.training.study_identity import RowMismatch, row_identity  # noqa: E402
from logic_consistency.harness_ext.training.study_options import StudyOptions  # noqa: E402
from logic_consistency.harness_ext.training.trainer import TrainingError, TrainJob  # noqa: E402
from logic_consistency.options import OptionError  # noqa: E402
from logic_consistency.tasks.gv import improve as gv_improve  # noqa: E402
from logic_consistency.tasks.pairwise import improve as repair_improve  # noqa: E402

TASK = "logic_consistency_caters"
METADATA = {"max_items": 4, "ks": [3, 4]}


def _unit(name: str, calls: list[str], fail: BaseException | None = None) -> StudyUnit:
    def work(ran_on: Any) -> list[dict[str, Any]]:
        calls.append(name)
        if fail is not None:
            raise fail
        return [{"row": name, "ran_on": dict(ran_on)}]

    return StudyUnit(name, (name,), work)


def test_the_local_executor_runs_the_units_here_in_order() -> None:
    calls: list[str] = []
    results = run_locally([_unit(name, calls) for name in ("a", "b", "c")])
    assert calls == ["a", "b", "c"] and [rows[0]["row"] for rows in results] == ["a", "b", "c"]
    assert {rows[0]["ran_on"]["executor"] for rows in results} == {"local"}


def test_a_failing_unit_names_its_row_and_the_later_units_do_not_run() -> None:
    calls: list[str] = []
    units = [_unit("zero_shot", calls), _unit("perturbed", calls, TrainingError("3 examples")), _unit("x", calls)]
    with pytest.raises(StudyUnitError, match=r"^perturbed: TrainingError: 3 examples$") as raised:
        run_locally(units)
    assert raised.value.unit == "perturbed" and calls == ["zero_shot", "perturbed"]


def test_ctrl_c_in_a_unit_is_not_turned_into_a_failure() -> None:
    with pytest.raises(KeyboardInterrupt):
        run_locally([_unit("a", [], KeyboardInterrupt())])


class Recorder:
    """A local executor that records the units it is given; the fake trainer fails the row ``failing``."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.failing: str | None = None

    def __call__(self, units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]:
        self.calls.append([unit.name for unit in units])
        # a Ray task's argument: each unit survives plain pickling (module-level functions, plain data)
        assert [unit.rows for unit in pickle.loads(pickle.dumps(list(units)))] == [unit.rows for unit in units]
        return run_locally(units)

    def train(self, job: TrainJob) -> dict[str, Any]:
        assert job.examples, job.label
        if job.label == self.failing:
            raise TrainingError(f"{job.label}: loss became nan at step 1")
        return finished_adapter(job)

    @staticmethod
    def evaluate(run: LmEvalRun, *, label: str) -> list[Path]:
        run.out.mkdir(parents=True)
        path = run.out / f"samples_{TASK}_x.jsonl"
        path.write_text(json.dumps({"doc_id": 0, "human_agreement": 1.0, "s_comm": 0.5}) + "\n", encoding="utf-8")
        return [path]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    # the real train documents, loaded once (lm_eval's task index takes seconds); overlap: test_study.py's
    real = repair_improve._train_task
    load = functools.cache(lambda limit: real(TASK, METADATA, limit))
    monkeypatch.setattr(repair_improve, "_train_task", lambda task, metadata, limit: load(limit))
    monkeypatch.setattr(repair_improve, "check_disjoint", lambda *args: None)
    monkeypatch.setattr(repair_improve, "train_adapter", recorder.train)
    monkeypatch.setattr(repair_improve, "run_lm_eval", recorder.evaluate)
    return recorder


def test_the_repair_rows_are_units_in_order_resumed_and_a_failure_names_its_row(
    tmp_path: Path, recorder: Recorder
) -> None:
    options = repair_improve.RepairStudyOptions(
        base=tiny_base(tmp_path / "base"), out=tmp_path / "s", tasks=TASK, limit=2, min_examples=1, metadata=METADATA
    )
    recorder.failing = "REPAIR-ed"
    with pytest.raises(StudyUnitError, match=r"^repaired: TrainingError: REPAIR-ed: loss became nan at step 1$"):
        repair_improve.run_repair_study(options, recorder)
    assert recorder.calls == [["zero_shot", "perturbed", "repaired", "repaired_neg"]]
    finished = sorted(p.parent.name for p in (options.out / "rows").glob("*/row.json"))
    assert finished == ["perturbed", "zero_shot"] and not (options.out / "table.md").exists()

    recorder.failing = None  # the rerun submits only the rows not finished
    rows = repair_improve.run_repair_study(options, recorder)
    assert recorder.calls[1] == ["repaired", "repaired_neg"]
    assert [r["row"] for r in rows] == ["zero_shot", "perturbed", "repaired", "repaired_neg"]
    assert all(r["ran_on"]["executor"] == "local" for r in rows)
    assert rows[0]["metrics"]["human_agreement"] == {"mean": 1.0, "ci95": [1.0, 1.0], "n": 1}
    assert "| REPAIR-ed + Neg. |" in (options.out / "table.md").read_text()

    assert [r["row"] for r in repair_improve.run_repair_study(options, recorder)] == [r["row"] for r in rows]
    assert len(recorder.calls) == 2  # a finished study runs nothing and writes its table again


def test_gv_runs_round_0_first_then_one_unit_per_chain_and_skips_finished_chains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluated: list[tuple[str, str]] = []

    def evaluate(self: Any, row: str, split: str, adapter: Path | None) -> list[Path]:
        evaluated.append((row, split))
        folder = self.study.row_dir(row) / f"{split}_eval"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "done").write_text("done\n", encoding="utf-8")
        # an unparseable generator answer (what SmolLM2-135M writes): no training pair
        sample = {"doc_id": 0, "doc": {"question": "What is 1 + 1?", "stages": {"generator": {}}}}
        (folder / "samples_x.jsonl").write_text(json.dumps(sample) + "\n", encoding="utf-8")
        return [folder / "samples_x.jsonl"]

    monkeypatch.setattr(gv_improve._GVStudy, "evaluate", evaluate)
    monkeypatch.setattr(gv_improve, "check_disjoint", lambda *args: None)
    # the rows finished by hand below carry no identity: the check of kept rows is test_improve_identity.py's
    monkeypatch.setattr(gv_improve, "verify_kept", lambda *args, **kwargs: [])
    options = gv_improve.GVStudyOptions(
        base=tiny_base(tmp_path / "base"), out=tmp_path / "s", limit=2, rounds=2, selftrain_rounds=2
    )
    recorder = Recorder()
    rows = gv_improve.run_gv_study(options, recorder)
    assert recorder.calls == [["round_0"], ["consistency FT", "SelfTrain"]]
    assert evaluated[:2] == [("round_0", "test"), ("round_0", "train")]  # once, before either chain
    assert [r["row"] for r in rows] == ["round_0", "gv_round_1", "gv_round_2", "selftrain_round_1", "selftrain_round_2"]
    assert rows[0]["ran_on"]["executor"] == "local"

    study = Study(options.out, {})
    for row in rows[3:]:  # SelfTrain finished: only the consistency FT chain (not trained: no pairs) runs again
        study.finish(row["row"], {**row, "not_trained": None})
    gv_improve.run_gv_study(options, recorder)
    assert recorder.calls[2:] == [["consistency FT"]]


def test_a_repair_row_records_its_identity_and_another_rows_adapter_is_refused_or_rebuilt(
    tmp_path: Path, recorder: Recorder
) -> None:
    options = repair_improve.RepairStudyOptions(
        base=tiny_base(tmp_path / "base"), out=tmp_path / "s", tasks=TASK, limit=2, min_examples=1, metadata=METADATA,
        rows=("zero_shot", "perturbed", "repaired"),
    )  # fmt: skip
    rows = {r["row"]: r for r in repair_improve.run_repair_study(options, recorder)}
    assert rows["repaired"]["identity"]["data_sha256"] == rows["repaired"]["training"]["data_sha256"]
    assert rows["repaired"]["identity"]["flip"] == 0.1 and rows["zero_shot"]["identity"]["chat_template"] is True
    folder = options.out / "rows"
    shutil.rmtree(folder / "repaired" / "adapter")
    shutil.copytree(folder / "perturbed" / "adapter", folder / "repaired" / "adapter")
    with pytest.raises(RowMismatch, match=r"row repaired .*adapter round: kept 'Perturbed', now 'REPAIR-ed'"):
        repair_improve.run_repair_study(options, recorder)
    repair_improve.run_repair_study(dataclasses.replace(options, rebuild_mismatched=True), recorder)
    assert recorder.calls[-1] == ["repaired"]
    assert json.loads((folder / "repaired" / "row.json").read_text())["training"]["round"] == "REPAIR-ed"


#: A third recipe's training, declared here only: its own paper's values (a made-up paper, "Echo et al."),
#: none of the two papers' (every value differs from REPAIR's and GV's), and its trainer.
ECHO_TRAINING = TrainingRecipe(
    "echo",
    PaperValues(
        lr=3e-4, epochs=4, weight_decay=0.05, r=8, alpha=24, batch=2, accumulation=3, scheduler="constant", warmup=0.1
    ),  # fmt: skip
    stated=(
        Stated("lr", 3e-4, "Echo et al. §4", "a learning rate of 3e-4"),
        Stated("epochs", 4, "Echo et al. §4", "4 epochs"),
    ),
    trainer="sft",
)


@dataclasses.dataclass(frozen=True)
class _EchoOptions(StudyOptions):
    """A third recipe's options: its own training (:data:`ECHO_TRAINING`)."""

    recipe: ClassVar[str] = "echo"
    training: ClassVar[TrainingRecipe] = ECHO_TRAINING


def _echo(study: Study, rows: tuple[str, ...], ran_on: Any) -> list[dict[str, Any]]:
    summaries = []
    for row in rows:
        study.row_dir(row).mkdir(parents=True, exist_ok=True)
        summaries.append({"row": row, "identity": row_identity(study.identity, row), "ran_on": dict(ran_on)})
        study.finish(row, summaries[-1])
    return summaries


def _echo_stages(study: Study) -> Stages:
    """Two stages (one row, then a unit of two rows), a report of the rows' names: no model, no lm_eval."""
    first = StudyUnit("a", ("a",), functools.partial(_echo, study, ("a",)))
    rows = yield [PlannedUnit(first, [("a", row_identity(study.identity, "a"))])]
    rows += yield [PlannedUnit(StudyUnit("bc", ("b", "c"), functools.partial(_echo, study, ("b", "c"))))]
    (study.out / "rows.json").write_text(json.dumps([row["row"] for row in rows]), encoding="utf-8")
    (study.out / "table.md").write_text(" ".join(row["row"] for row in rows) + "\n", encoding="utf-8")
    (study.out / "README.md").write_text("echo\n", encoding="utf-8")


def _echo_plan(options: _EchoOptions, base: StudyBase) -> StudyPlan:
    identity = {"study": "echo", "base": base.label, "hyperparameters": base.settings.as_dict()}
    return StudyPlan(identity, _echo_stages, trains=False)


ECHO = StudyRecipe("echo", "a recipe declared here only", _EchoOptions, _echo_plan)


def _empty_base(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def test_a_third_recipe_runs_on_the_driver_alone_and_a_rerun_hands_the_executor_nothing(tmp_path: Path) -> None:
    base = _empty_base(tmp_path / "base")
    options = _EchoOptions(base=base, out=tmp_path / "s", tasks="echo")  # --tasks names at least one task
    recorder = Recorder()
    rows = run_study(ECHO, options, recorder)
    assert recorder.calls == [["a"], ["bc"]] and [r["row"] for r in rows] == ["a", "b", "c"]
    assert json.loads((options.out / "rows.json").read_text(encoding="utf-8")) == ["a", "b", "c"]
    study = json.loads((options.out / "study.json").read_text(encoding="utf-8"))
    assert study == {"study": "echo", "base": str(base), "hyperparameters": ECHO_TRAINING.settings({}).as_dict()}
    assert [r["row"] for r in run_study(ECHO, options, recorder)] == ["a", "b", "c"]
    assert len(recorder.calls) == 2  # every row kept: nothing runs, the report is written again


def test_a_third_recipe_with_its_own_paper_runs_through_improve_with_no_edit_to_training_or_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``logic-consistency improve echo``: found beside the families' recipes (as a family's module would
    declare it), its flags, its paper's values as the defaults of its ``--train-args`` (one overridden),
    its trainer, and ``logic-consistency options`` lists its declaration."""
    from logic_consistency.cli import improve as cli_improve
    from logic_consistency.cli import options as cli_options
    from logic_consistency.cli.app import main
    from logic_consistency.tasks.improve_recipes import recipes

    found = {**recipes(), ECHO.name: ECHO}
    monkeypatch.setattr(cli_improve, "recipes", lambda: found)
    monkeypatch.setattr(cli_options, "recipes", lambda: found)
    base, out = _empty_base(tmp_path / "base"), tmp_path / "s"
    argv = ["improve", "echo", "--base", str(base), "--out", str(out), "--tasks", "echo", "--train-args", "lora_r=4"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("a b c\n3 rows")
    hyperparameters = json.loads((out / "study.json").read_text(encoding="utf-8"))["hyperparameters"]
    paper = ECHO_TRAINING.paper
    assert (hyperparameters["lr"], hyperparameters["epochs"], hyperparameters["weight_decay"]) == (3e-4, 4, 0.05)
    assert (hyperparameters["lora_alpha"], hyperparameters["batch_size"], hyperparameters["grad_accum"]) == (
        paper.alpha,
        paper.batch,
        paper.accumulation,
    )
    assert (hyperparameters["scheduler"], hyperparameters["lora_r"]) == ("constant", 4)  # lora_r: --train-args
    listed = {
        arg.name: arg.default for where, arg in cli_options.declarations() if where == "improve echo --train-args"
    }
    assert (listed["lr"], listed["epochs"], listed["lora_r"]) == (3e-4, 4.0, 8)  # logic-consistency options
    with pytest.raises(OptionError, match="improve echo --train-args.*'lora_rank'"):
        ECHO_TRAINING.settings({"lora_rank": 8})
    with pytest.raises(ValueError, match="trainer 'dpo' is not one of \\['sft'\\]"):
        dataclasses.replace(ECHO_TRAINING, trainer="dpo")


def test_a_repair_walk_from_the_driver_enters_the_recipes_code_at_three_points_at_most(
    tmp_path: Path, recorder: Recorder
) -> None:
    """A study and its rerun (every row kept) as ``improve repair`` runs them (the local executor, behind
    the recorder: run_locally itself would refuse a machine with several GPUs): the driver enters the
    recipe's code at its plan, its stages and its units' work only (tests/climbs.py;
    scripts/walk_climbs.py measures the walk with the task loading inside it too)."""
    options = repair_improve.RepairStudyOptions(
        base=tiny_base(tmp_path / "base"), out=tmp_path / "s", tasks=TASK, limit=2, min_examples=1, metadata=METADATA
    )
    repair_improve._train_task(TASK, METADATA, 2)  # lm_eval's task index, loaded once outside the walk
    with counting_climbs() as climbs:
        rows = run_study(repair_improve.RECIPE, options, recorder)
        kept = run_study(repair_improve.RECIPE, options, recorder)
    names = ["zero_shot", "perturbed", "repaired", "repaired_neg"]
    assert [r["row"] for r in kept] == [r["row"] for r in rows] == names and (options.out / "table.md").is_file()
    assert climbs.callees == {
        "tasks/pairwise/improve.py _plan",
        "tasks/pairwise/improve.py _stages",
        "tasks/pairwise/improve.py _run_row",
    }, climbs.report()
    assert len(climbs.entry_points) == 3, climbs.report()
