"""Done when (issue 55): a wrapped MMLU subject runs on the embedded model offline, and its original-order
accuracy equals lm-eval's own ``mmlu_<subject>`` ``acc`` on the same documents and backend (``hf`` and
``lc-hf``), in one ``lm_eval`` call with the wrapped tasks from an ``--include_path`` folder.

The data are the MMLU fixture (``tests/fixtures/data/mmlu``: real test rows, one with "All of the above"),
read through the local-copy hook; the comparison is per document, by question text, from both tasks'
samples, and over the whole set (the wrapped task's mean equals the base's mean over the same questions).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval with the embedded model

ROOT = Path(__file__).resolve().parents[3]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
BIN = Path(sys.executable).parent
SUBJECTS = ("abstract_algebra", "anatomy")
WRAPPED = """task: my_{subject}_cyclic
class: !function logic_consistency.tasks.invariance.task.InvarianceTask
base_task: mmlu_{subject}
metadata: {{transform: cyclic, version: 1.0}}
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }


@pytest.fixture(scope="module")
def model_path() -> str:
    command = [shutil.which("logic-consistency", path=str(BIN)) or "logic-consistency", "model-path"]
    run = children.run([*command, "smollm2-135m-instruct"], capture_output=True, text=True, env=_env(), timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def _samples(folder: Path, task: str) -> dict[str, dict]:
    files = sorted(folder.glob(f"*/samples_{task}_*.jsonl"))
    assert len(files) == 1, files
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    return {row["doc"]["question"]: row for row in rows}


@pytest.mark.parametrize("backend", ["hf", "lc-hf"])
def test_original_order_accuracy_equals_the_base_acc(backend: str, model_path: str, tmp_path: Path) -> None:
    include = tmp_path / "my_tasks"
    include.mkdir()
    for subject in SUBJECTS:
        (include / f"my_{subject}_cyclic.yaml").write_text(WRAPPED.format(subject=subject))
    tasks = [f"my_{subject}_cyclic" for subject in SUBJECTS] + [f"mmlu_{subject}" for subject in SUBJECTS]
    out = tmp_path / "out"
    lm_eval = shutil.which("lm_eval", path=str(BIN)) or "lm_eval"
    command = [lm_eval, "--model", backend, "--model_args", f"pretrained={model_path}", "--batch_size", "8"]
    command += ["--tasks", ",".join(tasks), "--include_path", str(include), "--limit", "4"]
    command += ["--output_path", str(out), "--log_samples"]
    run = children.run(command, capture_output=True, text=True, env=_env(), timeout=900, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(next(out.glob("*/results_*.json")).read_text())["results"]
    for subject in SUBJECTS:
        wrapped, base = _samples(out, f"my_{subject}_cyclic"), _samples(out, f"mmlu_{subject}")
        shared = sorted(set(wrapped) & set(base))
        assert len(shared) >= 3, (subject, list(wrapped), list(base))  # "All of the above" excluded in anatomy
        for question in shared:
            assert wrapped[question]["acc_original"] == base[question]["acc"], (subject, question)
            # variant 0 is the base's own four requests: the same prompts and continuations
            base_args = [base[question]["arguments"][f"gen_args_{i}"] for i in range(4)]
            assert [wrapped[question]["arguments"][f"gen_args_{i}"] for i in range(4)] == base_args
        if set(wrapped) == set(base):
            assert results[f"my_{subject}_cyclic"]["acc_original,none"] == results[f"mmlu_{subject}"]["acc,none"]
        # every variant was asked: 4 rotations x 4 letters per question
        assert all(len(row["resps"]) == 16 for row in wrapped.values())


def test_negation_and_self_validation_run_on_the_embedded_model(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lm_eval = shutil.which("lm_eval", path=str(BIN)) or "lm_eval"
    task = "logic_consistency_invariance_mmlu_abstract_algebra"
    command = [lm_eval, "--model", "lc-embedded", "--model_args", "model=smollm2-135m-instruct", "--batch_size", "8"]
    command += ["--tasks", task, "--limit", "2", "--output_path", str(out), "--log_samples"]
    command += ["--metadata", json.dumps({"ask_incorrect": True, "self_validate": True})]
    run = children.run(command, capture_output=True, text=True, env=_env(), timeout=900, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(next(out.glob("*/results_*.json")).read_text())["results"][task]
    for metric in ("negation_contradiction", "negation_accuracy", "gv_consistency", "validator_accuracy"):
        assert 0.0 <= results[f"{metric},none"] <= 1.0, metric
    rows = _samples(out, task)
    # 4 rotations, the same 4 negated (4 letters each), and Yes / No for each of the 4 options
    assert all(len(row["resps"]) == 16 + 16 + 8 for row in rows.values())
