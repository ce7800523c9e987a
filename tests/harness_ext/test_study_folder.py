"""A study folder that cannot be mixed or raced (issue 46 item 5), without a model: one lock per
``--out`` (a second ``improve`` refused naming the first's PID; a dead holder's lock taken over, said
so); an evaluation renamed into place with its stamp, kept only for the same row identity; the base's
chat template in every row's identity; ``row.json``'s hashes of its results and its adapter's weights,
verified by a rerun."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import children
import pytest

from logic_consistency.cli import app
from logic_consistency.harness_ext.training import study as study_module
from logic_consistency.harness_ext.training import study_executor
from logic_consistency.harness_ext.training.study import Study
from logic_consistency.harness_ext.training.study_eval import LmEvalRun, run_lm_eval
from logic_consistency.harness_ext.training.study_identity import (
    RowMismatch,
    base_identity,
    hash_mismatches,
    row_identity,
)
from logic_consistency.harness_ext.training.study_lock import LOCK_NAME, StudyLockedError, study_lock


def test_a_second_improve_on_one_folder_is_refused_naming_the_first_pid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    with study_lock(out, command=["logic-consistency", "improve", "repair", "--out", str(out)]):
        record = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))
        assert record["command"].startswith("logic-consistency improve repair")
        status = app.main(["improve", "repair", "--base", str(tmp_path / "no-base"), "--out", str(out)])
        err = capsys.readouterr().err
        assert status == 2, err
        assert f"another improve study is running on this folder (pid {record['pid']} on host" in err, err
        assert "logic-consistency improve repair --out" in err and "Traceback" not in err
        with pytest.raises(StudyLockedError, match=f"pid {record['pid']}"), study_lock(out):
            pass
    assert json.loads((out / LOCK_NAME).read_text(encoding="utf-8") or "{}") == {}  # a clean exit names no one
    with study_lock(out):  # free again
        Study(out, {"study": "repair"}).open()  # the lock file is no stranger's file in the folder


def test_the_lock_of_a_dead_study_is_taken_over_and_said_so(tmp_path: Path) -> None:
    gone = children.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(gone.stdout)
    folder, lock = tmp_path / "s", tmp_path / "s" / LOCK_NAME
    folder.mkdir()
    lock.touch()  # the record names this folder and this lock file (device, inode)
    identity = {
        "folder": [folder.stat().st_dev, folder.stat().st_ino],
        "lock": [lock.stat().st_dev, lock.stat().st_ino],
    }
    lock.write_text(json.dumps({"pid": pid, "host": "h", "command": "improve gv", **identity}))
    warnings: list[str] = []
    with study_lock(folder, warn=warnings.append):
        pass
    assert len(warnings) == 1 and f"taking over the lock of a study that is gone (pid {pid}" in warnings[0]
    # a copy of the folder holds the record too, but it is not the copy's: it names no study of the copy
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / LOCK_NAME).write_text(json.dumps({"pid": pid, "host": "h", "command": "improve gv", **identity}))
    with study_lock(copy, warn=warnings.append):
        pass
    assert len(warnings) == 2 and "its record is not this folder's" in warnings[1] and str(pid) not in warnings[1]


#: A running study's holder: ``improve``'s lock of ``--out``, held until the file ``go`` appears.
HOLDER = """import sys, time
from pathlib import Path
from logic_consistency.harness_ext.training.study_lock import study_lock
out, ready, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
with study_lock(out, command=["logic-consistency", "improve", "repair", "--out", str(out)]):
    ready.touch()
    while not go.exists():
        time.sleep(0.05)
"""


def test_a_second_improve_is_refused_after_the_lock_file_was_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first holder also holds the folder's own lock: removing ``.improve.lock`` lets no second study in."""
    out, ready, go = tmp_path / "study", tmp_path / "ready", tmp_path / "go"
    holder = children.start([sys.executable, "-c", HOLDER, str(out), str(ready), str(go)])
    try:
        for _ in range(600):
            if ready.exists() or holder.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the first study never took its lock"
        (out / LOCK_NAME).unlink()
        status = app.main(["improve", "repair", "--base", str(tmp_path / "no-base"), "--out", str(out)])
        err = capsys.readouterr().err
        assert status == 2, err
        assert "another improve study is running on this folder (its lock file was removed or replaced" in err, err
        assert not (out / LOCK_NAME).exists() and "Traceback" not in err  # refused before anything was written
    finally:
        go.touch()
        holder.wait(timeout=60)
    assert holder.returncode == 0
    with study_lock(out):  # free once the first has gone
        pass


def test_a_dangling_out_link_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    status = app.main(["improve", "gv", "--base", "x", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "--out" in err and "which does not exist" in err and "Traceback" not in err, err


def _fake_lm_eval(monkeypatch: pytest.MonkeyPatch, calls: list[Path], fail: bool = False) -> None:
    def command(self: LmEvalRun) -> list[str]:
        if self.out.name.endswith(".partial"):  # a run, not the stamp's look at the command
            calls.append(self.out)
        target = self.out / "m" / "samples_t_1.jsonl"
        code = (
            f"import pathlib; p = pathlib.Path({str(target)!r}); p.parent.mkdir(exist_ok=True); p.write_text('{{}}\\n')"
        )
        return [sys.executable, "-c", code + ("; raise SystemExit(1)" if fail else ""), "--output_path", "x"]

    monkeypatch.setattr(LmEvalRun, "command", command)


def test_an_evaluation_is_renamed_into_place_and_kept_only_for_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    out = tmp_path / "rows" / "zero_shot" / "test_eval"
    run = LmEvalRun(Path("/m"), "t", {}, None, out, row_identity={"row": "zero_shot", "chat_template_sha256": "a"})
    _fake_lm_eval(monkeypatch, calls, fail=True)
    with pytest.raises(RuntimeError, match="lm_eval failed"):
        run_lm_eval(run, label="zero_shot")
    assert not out.exists(), "a failed evaluation left a folder that looks like one"
    _fake_lm_eval(monkeypatch, calls)
    assert [p.name for p in run_lm_eval(run, label="zero_shot")] == ["samples_t_1.jsonl"]
    assert calls[-1] == out.with_name("test_eval.partial") and (out / "done").is_file()
    run_lm_eval(run, label="zero_shot")
    assert len(calls) == 2, "the same row's finished evaluation was made again"
    other = LmEvalRun(Path("/m"), "t", {}, None, out, row_identity={"row": "zero_shot", "chat_template_sha256": "b"})
    run_lm_eval(other, label="zero_shot")  # a rerun with another chat template: not kept
    assert len(calls) == 3


def test_the_chat_template_is_in_every_rows_identity(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "model.safetensors").write_bytes(b"w")
    (base / "config.json").write_text("{}")  # a base as check_base accepts it
    (base / "tokenizer_config.json").write_text(json.dumps({"chat_template": "<user>{{ m }}"}))
    before = base_identity(base, chat_template=True)
    (base / "tokenizer_config.json").write_text(json.dumps({"chat_template": "<u>{{ m }}"}))
    after = base_identity(base, chat_template=True)
    assert before["chat_template_sha256"] != after["chat_template_sha256"]
    assert base_identity(base, chat_template=False)["chat_template_sha256"] is None
    study = Study(tmp_path / "s", {"study": "gv", **before}, rebuild_mismatched=False)
    study.open()
    study.finish("round_0", {"row": "round_0", "identity": row_identity(study.identity, "round_0")})
    with pytest.raises(RowMismatch, match="row round_0 .*chat_template_sha256"):
        study.kept("round_0", row_identity({"study": "gv", **after}, "round_0"))


def _finished_row(tmp_path: Path) -> tuple[Study, dict[str, object]]:
    study = Study(tmp_path / "s", {"study": "repair"})
    study.open()
    identity = row_identity(study.identity, "perturbed")
    folder = study.row_dir("perturbed")
    (folder / "test_eval" / "m").mkdir(parents=True)
    (folder / "test_eval" / "m" / "samples_t_1.jsonl").write_text('{"s_comm": 1.0}\n')
    (folder / "adapter").mkdir()
    (folder / "adapter" / "adapter_model.safetensors").write_bytes(b"weights")
    study.finish("perturbed", {"row": "perturbed", "metrics": {"s_comm": {"mean": 0.5}}, "identity": identity})
    assert study.kept("perturbed", identity) is not None
    return study, identity


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ("metric", "rows/perturbed/row.json (its measured values were edited)"),
        ("weights", "rows/perturbed/adapter/adapter_model.safetensors sha256"),
        ("samples", "rows/perturbed/test_eval/m/samples_t_1.jsonl sha256"),
    ],
)
def test_an_edited_metric_or_replaced_weights_are_refused_naming_the_file_or_rebuilt(
    edit: str, named: str, tmp_path: Path
) -> None:
    study, identity = _finished_row(tmp_path)
    folder = study.row_dir("perturbed")
    if edit == "metric":
        row = json.loads((folder / "row.json").read_text())
        row["metrics"]["s_comm"]["mean"] = 0.9
        (folder / "row.json").write_text(json.dumps(row))
    elif edit == "weights":
        (folder / "adapter" / "adapter_model.safetensors").write_bytes(b"other weights")
    else:
        (folder / "test_eval" / "m" / "samples_t_1.jsonl").write_text('{"s_comm": 0.0}\n')
    with pytest.raises(RowMismatch, match="--rebuild-mismatched") as raised:
        study.kept("perturbed", identity)
    assert named in str(raised.value)
    rebuilt = Study(study.out, study.identity, rebuild_mismatched=True)
    assert rebuilt.kept("perturbed", identity) is None and not folder.exists()


def test_where_a_row_ran_is_not_what_it_measured(tmp_path: Path) -> None:
    study, identity = _finished_row(tmp_path)
    row = json.loads((study.row_dir("perturbed") / "row.json").read_text())
    assert set(row["hashes"]) == {"results", "adapter", "row"}
    assert study_module.Study(study.out, study.identity).kept("perturbed", identity) is not None


def test_a_kept_rows_merged_weights_are_a_unit_not_the_drivers_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logic_consistency.harness_ext.models.adapter_manifest import MANIFEST
    from logic_consistency.harness_ext.training import merge

    study, identity = _finished_row(tmp_path)
    adapter = study.row_dir("perturbed") / "adapter"
    merged: list[Path] = []

    def fake_merge(folder: Path, out: Path | None = None) -> Path:
        merged.append(folder)
        target = merge.merged_folder(folder)
        target.mkdir(exist_ok=True)
        return target

    monkeypatch.setattr(merge, "merge_adapter", fake_merge)
    row = json.loads((study.row_dir("perturbed") / "row.json").read_text())
    row["training"] = {"steps": 1}
    study.finish("perturbed", {k: v for k, v in row.items() if k != "hashes"})
    assert study.kept("perturbed", identity) is not None and merged == []  # a query merges nothing
    assert study.merge_unit("perturbed") is None  # no finished adapter: nothing to merge
    (adapter / MANIFEST).write_text("{}")  # a finished adapter
    unit = study.merge_unit("perturbed")
    assert unit is not None and unit.rows == ("perturbed",) and merged == []
    (summary,) = study_executor.run_locally([unit])[0]
    assert merged == [adapter] and summary["training"]["merged"] == str(merge.merged_folder(adapter))
    written = json.loads((study.row_dir("perturbed") / "row.json").read_text())  # with its hashes
    assert not hash_mismatches(study.row_dir("perturbed"), written) and "hashes" not in (
        study.finished("perturbed") or {}
    )
    assert study.merge_unit("perturbed") is None  # there now: no unit


def test_a_folder_that_cannot_be_locked_is_said_and_the_lock_file_guards_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some network mounts refuse an ``flock`` of a folder: one warning, and the lock file alone guards it."""
    import errno
    import fcntl

    from logic_consistency.harness_ext.training import study_lock as module

    real = fcntl.flock

    def flock(fd: int, operation: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{fd}"):  # the folder's descriptor (the link /proc shows is followed)
            raise OSError(errno.EBADF, "Bad file descriptor")
        real(fd, operation)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd")
    monkeypatch.setattr(module.fcntl, "flock", flock)
    warnings: list[str] = []
    with study_lock(tmp_path / "s", warn=warnings.append):
        with pytest.raises(StudyLockedError, match="another improve study is running"), study_lock(tmp_path / "s"):
            pass
    assert len(warnings) == 1 and "the folder itself cannot be locked here (Bad file descriptor)" in warnings[0]
