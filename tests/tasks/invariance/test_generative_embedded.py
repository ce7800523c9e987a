"""Done when (issue 55): generative self-validation runs on the embedded model, on lm-eval's ``triviaqa`` from
the local copy, and its base metric equals lm-eval's own ``triviaqa`` on the same documents and backend.

One ``lm_eval`` call runs the wrapped task (``tasks/invariance``) beside ``triviaqa`` on the first 3 questions of
the TriviaQA fixture (``tests/fixtures/data/triviaqa``, read through the local-copy hook), on ``lc-embedded``. A
system instruction asks for a name or a number, so the 135M model gives short answers (without it, it ends most
answers at once, and the validation would be undefined on every question).
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
BIN = Path(sys.executable).parent
TASK = "logic_consistency_invariance_triviaqa_self_validate"
VALIDATION = ("gv_consistency", "validator_accuracy", "self_endorsed_wrong")
LIMIT = 3


def _samples(folder: Path, task: str) -> dict[str, dict]:
    files = sorted(folder.glob(f"*/samples_{task}_*.jsonl"))
    assert len(files) == 1, files
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    return {row["doc"]["question"]: row for row in rows}


def test_self_validation_of_triviaqa_on_the_embedded_model(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }
    out = tmp_path / "out"
    lm_eval = shutil.which("lm_eval", path=str(BIN)) or "lm_eval"
    command = [lm_eval, "--model", "lc-embedded", "--model_args", "model=smollm2-135m-instruct", "--batch_size", "8"]
    command += ["--tasks", f"{TASK},triviaqa", "--limit", str(LIMIT), "--output_path", str(out), "--log_samples"]
    command += ["--system_instruction", "Answer with a name or a number.\n\n"]
    run = children.run(command, capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(next(out.glob("*/results_*.json")).read_text())["results"]
    wrapped, base = _samples(out, TASK), _samples(out, "triviaqa")
    assert set(wrapped) == set(base) and len(base) == LIMIT
    for question, row in wrapped.items():
        answer = row["doc"]["stages"]["answer"]
        # the answer stage is the base's own request, and its extracted answer the base's filtered one
        assert answer["prompts"]["main"] == base[question]["arguments"]["gen_args_0"]["arg_0"], question
        assert answer["outputs"]["main"] == base[question]["resps"][0][0], question
        assert answer["parsed"]["answer"] == base[question]["filtered_resps"][0], question
        assert row["exact_match"] == base[question]["exact_match"], question
        for metric in VALIDATION:  # computed, or counted as undefined on this question
            assert (row[metric] is not None) != (row[f"undefined_{metric}"] == 1), (question, metric, row)
        assert row["unparseable"] == int(not answer["parsed"]["answer"].strip())
    assert results[TASK]["exact_match,none"] == results["triviaqa"]["exact_match,remove_whitespace"]
    summary = results[TASK]
    for metric in VALIDATION:
        undefined = summary[f"undefined_{metric},none"]
        defined = sum(row[metric] is not None for row in wrapped.values())
        assert defined + undefined == LIMIT, metric
        if defined:
            assert 0.0 <= summary[f"{metric},none"] <= 1.0, metric
