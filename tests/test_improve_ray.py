"""``logic-consistency improve repair --executor ray`` on a real Ray cluster on this machine (a head and
one worker, one CPU each, no GPU), at the CI size of tests/test_improve_study.py but on the tiny random
model of tests/tiny_model.py (the embedded SmolLM2's own study is tests/test_improve_study.py's): one
document per split, one optimizer step, the zero-shot and REPAIR-ed rows. Each row is one Ray task:
its ``row.json`` names the Ray node and task that ran it, and the study's table has a local run's layout.
A failing row, or Ctrl-C, cancels the other rows' tasks."""

from __future__ import annotations

import _thread
import functools
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
ray = pytest.importorskip("ray")  # the test extra installs it

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.cli import main  # noqa: E402
from logic_consistency.harness_ext.jobs.ray_session import NAMESPACE  # noqa: E402
from logic_consistency.harness_ext.training.study_executor import (  # noqa: E402
    StudyUnit,
    StudyUnitError,
    study_executor,
)
from logic_consistency.harness_ext.training.trainer import TrainingError  # noqa: E402
from logic_consistency.tasks.pairwise.improve import ROWS, columns  # noqa: E402

pytestmark = pytest.mark.slow
TASK = "logic_consistency_caters"
METADATA = {"max_items": 4, "ks": [3, 4]}
#: What every row of a study records, whichever executor ran it.
ROW_KEYS = {"row", "label", "adapter", "metrics", "training", "flipped_labels", "method", "ran_on", "identity"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and one worker node, one CPU each; the study's driver joins it by its address."""
    from ray.cluster_utils import Cluster

    saved = dict(os.environ)
    # the data is the environment's, as tests/test_improve_study.py's (the fixture CaTeRS has too few stories)
    os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    worker = nodes.add_node(num_cpus=1)
    nodes.wait_for_nodes()
    head = nodes.head_node
    assert head is not None
    try:
        yield {"address": nodes.address, "nodes": {head.node_id, worker.node_id}}
    finally:
        nodes.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def test_a_repair_study_runs_each_row_as_a_ray_task(cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "study"
    base = tiny_base(tmp_path / "base")
    argv = ["improve", "repair", "--base", str(base), "--out", str(out), "--tasks", TASK,
            "--limit", "1", "--max-steps", "1", "--min-examples", "2", "--rows", "zero_shot,repaired",
            "--metadata", json.dumps(METADATA), "--train-args", "batch_size=4,grad_accum=1,lr=0.002",
            "--executor", "ray", "--ray-address", cluster["address"], "--gpus-per-row", "0"]  # fmt: skip
    assert main(argv) == 0
    assert not ray.is_initialized()  # the Ray it connected to for the study is let go

    rows = json.loads((out / "table.json").read_text())["rows"]
    assert [r["row"] for r in rows] == ["zero_shot", "repaired"]
    ran_on = [r["ran_on"] for r in rows]
    assert all(where["executor"] == "ray" and where["node"] in cluster["nodes"] for where in ran_on), ran_on
    assert ran_on[0]["task"] and ran_on[1]["task"] and ran_on[0]["task"] != ran_on[1]["task"]
    for r in rows:  # each unit wrote its own row.json, the same summary the driver's table holds
        written = json.loads((out / "rows" / r["row"] / "row.json").read_text())
        assert set(written.pop("hashes")) == {"results", "adapter", "row"} and written == r  # the summary, its hashes
        trained = {"answer_letters"} if r["row"] != "zero_shot" else set()  # a trained row's answers per letter
        assert set(r) == ROW_KEYS | trained and set(r["metrics"]) == {key for _, key in columns(METADATA)}
        assert r["metrics"]["human_agreement"]["n"] == 1
    assert rows[1]["training"]["steps"] == 1 and (out / "rows" / "repaired" / "adapter").is_dir()

    labels = dict(ROWS)
    table = (out / "table.md").read_text().splitlines()
    assert table[0] == "| row | " + " | ".join(label for label, _ in columns(METADATA)) + " |"
    assert [line.split(" | ")[0] for line in table[2:]] == [f"| {labels['zero_shot']}", f"| {labels['repaired']}"]

    # a rerun resumes: every row is finished, so no Ray task is submitted and the rows are the same
    assert main(argv) == 0
    assert json.loads((out / "table.json").read_text())["rows"] == rows


def _wait_for(path: Path, seconds: float = 120.0) -> int:
    deadline = time.monotonic() + seconds
    while not path.is_file() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.2)
    return int(path.read_text())


def _long_row(pid_file: Path, ran_on: Any) -> list[dict[str, Any]]:
    """A row that would run for minutes (its process id in ``pid_file``)."""
    pid_file.write_text(str(os.getpid()))
    time.sleep(300)
    return []


def _failing_row(pid_file: Path, ran_on: Any) -> list[dict[str, Any]]:
    """A row that fails once the long one runs."""
    _wait_for(pid_file)
    raise TrainingError("REPAIR-ed: loss became nan at step 1")


def _gone(pid: int, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.5)
    return False


@pytest.mark.parametrize("stop", ["a failing row", "ctrl-c"])
def test_a_failing_row_or_ctrl_c_cancels_the_other_rows_tasks(cluster: Any, tmp_path: Path, stop: str) -> None:
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    pid_file = tmp_path / "pid"
    units = [StudyUnit("perturbed", ("perturbed",), functools.partial(_long_row, pid_file))]
    if stop == "a failing row":
        units.append(StudyUnit("repaired", ("repaired",), functools.partial(_failing_row, pid_file)))
        expected: Any = pytest.raises(StudyUnitError, match=r"^repaired: TrainingError: REPAIR-ed: loss became nan")
    else:

        def ctrl_c() -> None:  # once the long row runs
            _wait_for(pid_file)
            _thread.interrupt_main()

        threading.Thread(target=ctrl_c, daemon=True).start()
        expected = pytest.raises(KeyboardInterrupt)
    # the driver stays connected (a Ray the executor did not start is not shut down): only the
    # executor's cancel can end the long row's task, not the end of the driver's Ray job
    ray.init(address=cluster["address"], namespace=NAMESPACE, log_to_driver=False)
    try:
        with expected:
            study_executor("ray", gpus_per_row=0)(units)
        assert ray.is_initialized()
        assert _gone(int(pid_file.read_text())), "the long row's task was not cancelled"
    finally:
        ray.shutdown()
