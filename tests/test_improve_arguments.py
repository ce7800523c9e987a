"""``improve``'s arguments are checked once, in the recipe's declaration, and a study folder's links are named
before anything is rewritten (issue 54 items 6 and 7, issue 57 item 5).

``improve gv`` takes the GV family's tasks only (read from its YAMLs), every arithmetic variant trains Li et
al. App. F's 3 epochs (``logic_consistency_gv_arithmetic_generate`` too, not 6), a REPAIR task is refused in
one line by the real command, and a row that is a symbolic link is named before ``study.json`` is rewritten
or any row removed. The one-line refusals of ``--pooled`` with one task, a task given twice, an App. H task
and a trailing comma are ``tests/bad_input_training.py``'s. The studies here run through the command line
in this process, their lm_eval runs replaced by sample files and their trainer by a finished manifest.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import children  # noqa: E402
from bad_inputs_support import cli  # noqa: E402
from study_fakes import finished_adapter  # noqa: E402
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.training.study import StudyFolderError  # noqa: E402
from logic_consistency.tasks.gv import improve  # noqa: E402
from logic_consistency.tasks.gv.improve_chains import ARITHMETIC_TASKS  # noqa: E402
from logic_consistency.tasks.gv.improve_tasks import gv_tasks  # noqa: E402
from logic_consistency.tasks.gv.validator_sets import APP_H  # noqa: E402


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_base(tmp_path_factory.mktemp("tiny") / "base")


@pytest.fixture
def trained(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The study's lm_eval runs replaced by sample files of prompt/answer pairs, its trainer by one that leaves
    a finished adapter; the training jobs asked for, in order."""
    jobs: list[Any] = []

    def evaluate(self: Any, row: str, split: str, adapter: Path | None, tasks: str | None = None) -> list[Path]:
        folder = self.study.row_dir(row) / f"{split}_eval"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"samples_{tasks or self.options.tasks}_2026-01-01T00-00-00.jsonl"
        if not (folder / "done").is_file():
            pairs = [{"prompt": f"Q{i} of {row}?", "answer": str(i)} for i in range(4)]
            path.write_text("".join(json.dumps(pair) + "\n" for pair in pairs), encoding="utf-8")
            (folder / "done").write_text("done\n", encoding="utf-8")
        return [path]

    def pairs(self: Any, samples: list[Path], *, consistent_only: bool) -> list[tuple[str, str, bool]]:
        lines = [json.loads(line) for path in samples for line in path.read_text(encoding="utf-8").splitlines()]
        return [(line["prompt"] + ("" if consistent_only else " (all)"), line["answer"], False) for line in lines]

    def train(job: Any) -> dict[str, Any]:
        jobs.append(job)
        return finished_adapter(job)

    monkeypatch.setattr(improve._GVStudy, "evaluate", evaluate)
    monkeypatch.setattr(improve._GVStudy, "training_pairs", pairs)
    monkeypatch.setattr(improve, "train_adapter", train)
    monkeypatch.setattr(improve, "check_disjoint", lambda *args: None)
    return jobs


def _improve_gv(base: Path, out: Path, *flags: str) -> Any:
    return cli("improve", "gv", "--base", str(base), "--out", str(out), "--limit", "4", "--rounds", "1",
               "--min-examples", "2", *flags)  # fmt: skip


@pytest.mark.parametrize(
    ("task", "epochs"),
    [("logic_consistency_gv_arithmetic_generate", 3.0), ("logic_consistency_gv_plan_arithmetic_generate", 6.0)],
)
def test_every_arithmetic_variant_trains_app_fs_three_epochs(
    base: Path, tmp_path: Path, trained: list[Any], task: str, epochs: float
) -> None:
    """Li et al. App. F: 3 epochs for arithmetic ("an abundance of training data"), 6 for the other tasks."""
    assert _improve_gv(base, tmp_path / "s", "--tasks", task) == 0
    assert [job.label.split(" (")[0] for job in trained] == ["consistency FT round 1", "SelfTrain round 1"]
    assert {job.settings.epochs for job in trained} == {epochs}
    study = json.loads((tmp_path / "s" / "study.json").read_text(encoding="utf-8"))
    assert study["tasks"] == task and study["hyperparameters"]["epochs"] == epochs


def test_the_arithmetic_variants_and_app_h_tasks_are_the_families_declared_ones() -> None:
    """Every task of ``_arithmetic_yaml`` a study may train is one of App. F's 3-epoch tasks; every
    ``*_app_h`` task the GV YAMLs declare is App. H's (:data:`~...validator_sets.APP_H`) and no study's."""
    family = gv_tasks()
    assert family.including("_arithmetic_yaml") == ARITHMETIC_TASKS
    app_h = {name for name in family.tasks if name not in family.study_tasks}
    assert app_h == set(APP_H)
    assert "logic_consistency_gv_arithmetic_cot" in family.study_tasks and "logic_consistency_gv" in family.groups


@pytest.mark.slow
def test_a_repair_task_is_refused_in_one_line_by_the_command(tmp_path: Path) -> None:
    """Issue 57 item 5: ``improve gv --tasks logic_consistency_summeval`` is one line and status 2, before the
    base is read or the study's folder made."""
    done = children.run(
        [sys.executable, "-m", "logic_consistency.cli", "improve", "gv", "--base", str(tmp_path / "no-base"),
         "--out", str(tmp_path / "s"), "--tasks", "logic_consistency_summeval"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--tasks logic_consistency_summeval: not a task of the GV family" in lines[0]
    assert "improve repair's" in lines[0] and not (tmp_path / "s").exists()


def test_a_linked_row_is_named_before_study_json_is_rewritten(base: Path, tmp_path: Path, trained: list[Any]) -> None:
    """Issue 54 item 7: a row that is a symbolic link, rebuilt (``--rebuild-mismatched``), was removed with
    ``OSError: Cannot call rmtree on a symbolic link`` after ``study.json`` had been rewritten."""
    out = tmp_path / "s"
    assert _improve_gv(base, out) == 0
    row = out / "rows" / "gv_round_1"
    elsewhere = tmp_path / "elsewhere" / "gv_round_1"
    shutil.move(row, elsewhere)
    row.symlink_to(elsewhere, target_is_directory=True)
    study = (out / "study.json").read_bytes()
    kept = sorted(path.relative_to(elsewhere) for path in elsewhere.rglob("*"))
    trained.clear()
    with pytest.raises(StudyFolderError) as refused:
        _improve_gv(base, out, "--no-chat-template", "--rebuild-mismatched")
    assert str(refused.value).startswith(f"--out {out}: rows/gv_round_1 is a symbolic link (to '{elsewhere}')")
    assert (out / "study.json").read_bytes() == study and trained == []
    assert sorted(path.relative_to(elsewhere) for path in elsewhere.rglob("*")) == kept and row.is_symlink()
