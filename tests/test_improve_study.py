"""The whole measure -> improve -> re-measure loop at a tiny size on the embedded SmolLM2 (CI): a REPAIR
study on CaTeRS with one document per split and a few steps writes an adapter that plain ``lm_eval
--model hf --model_args pretrained=BASE,peft=ADAPTER`` loads, that changes the model's log-likelihoods and
that is a row of the study's table; the suite's lc-embedded / lc-hf backends score the same adapter
with prefix sharing; the study's training and test instances never overlap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")

from logic_consistency.cli import main  # noqa: E402
from logic_consistency.common import find_files, read_samples  # noqa: E402
from logic_consistency.harness_ext.models.adapter_manifest import is_complete, read_manifest  # noqa: E402
from logic_consistency.harness_ext.models.embedded import resolve  # noqa: E402
from logic_consistency.harness_ext.publish.allowlist import public_path  # noqa: E402
from logic_consistency.tasks.improve_splits import split_docs  # noqa: E402

TASK = "logic_consistency_caters"
METADATA = {"max_items": 4, "ks": [3, 4]}


def loglikelihoods(folder: Path) -> list[float]:
    (samples,) = find_files(folder, "samples_*.jsonl")
    return [float(r[0][0]) for _, s in read_samples(samples) for r in s["resps"]]


#: Credentials planted in the study's environment (issue 39, done when): no file of the study may hold them.
PLANTED = {"OPENAI_API_KEY": "kW3-local-12", "MY_SERVICE_TOKEN": ("sk-" + "Lp9x" * 50)[:200]}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("improve") / "study"
    with pytest.MonkeyPatch.context() as env:
        for name, value in PLANTED.items():
            env.setenv(name, value)
        code = main(
            ["improve", "repair", "--base", "smollm2-135m-instruct", "--out", str(out), "--tasks", TASK, "--limit",
             "1", "--max-steps", "3", "--min-examples", "2", "--rows", "zero_shot,repaired", "--metadata",
             json.dumps(METADATA), "--train-args", "batch_size=4,grad_accum=1,lr=0.002"]
        )  # fmt: skip
    assert code == 0
    return out


@pytest.mark.slow
def test_the_adapter_is_written_loads_in_plain_lm_eval_and_changes_the_log_likelihoods(study: Path) -> None:
    adapter = study / "rows" / "repaired" / "adapter"
    assert is_complete(adapter)
    manifest = read_manifest(adapter)
    assert (manifest["recipe"], manifest["split"], manifest["steps"]) == ("repair", "train", 3)
    assert manifest["data_examples"] > 0 and manifest["train_tokens_per_s"] > 0
    (results,) = find_files(study / "rows" / "repaired" / "test_eval", "results_*.json")
    # the results record the adapter it evaluated, as a local path is published (hash and basename)
    assert json.loads(results.read_text())["config"]["model_args"]["peft"] == public_path(str(adapter))
    before = loglikelihoods(study / "rows" / "zero_shot" / "test_eval")
    after = loglikelihoods(study / "rows" / "repaired" / "test_eval")
    assert len(before) == len(after) > 0 and before != after


@pytest.mark.slow
def test_the_tuned_model_is_a_row_of_the_study_table(study: Path) -> None:
    table = (study / "table.md").read_text()
    assert "| REPAIR-ed |" in table and "| Zero-shot |" in table
    rows = json.loads((study / "table.json").read_text())["rows"]
    assert [r["row"] for r in rows] == ["zero_shot", "repaired"]
    assert rows[1]["metrics"]["human_agreement"]["n"] == 1 and rows[1]["training"]["round"] == "REPAIR-ed"
    assert "REPAIR-ed" in (study / "README.md").read_text()


@pytest.mark.slow
def test_the_suites_backends_score_the_adapter(study: Path) -> None:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM

    adapter = study / "rows" / "repaired" / "adapter"
    # two prompts sharing a long prefix, so lc-embedded's prefix sharing takes part
    prefix = "Which event happened earlier in the story? " * 30
    requests = [
        Instance("loglikelihood", {}, (prefix + ending, " A"), idx) for idx, ending in enumerate(("Answer:", "Reply:"))
    ]

    def scores(model: Any) -> list[float]:
        return [value for value, _ in model.loglikelihood(requests)]

    path = str(resolve("smollm2-135m-instruct"))
    plain = scores(HFLM(pretrained=path, peft=str(adapter), dtype="float32", batch_size=2, device="cpu"))
    shared = scores(
        EmbeddedHFLM(model="smollm2-135m-instruct", peft=str(adapter), min_shared_tokens=1, batch_size=2, device="cpu")
    )
    base = scores(EmbeddedHFLM(model="smollm2-135m-instruct", min_shared_tokens=1, batch_size=2, device="cpu"))
    assert shared == pytest.approx(plain, abs=1e-3)
    assert base != pytest.approx(shared, abs=1e-6)


@pytest.mark.slow
def test_the_study_splits_never_overlap(study: Path) -> None:
    train = {d["instance_id"] for d in split_docs(TASK, METADATA, "train", None)}
    test = {d["instance_id"] for d in split_docs(TASK, METADATA, "test", None)}
    assert train and test and not train & test
    assert json.loads((study / "study.json").read_text())["study"] == "repair"


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(key) for key in value] + [k for inner in value.values() for k in _keys(inner)]
    return [k for inner in value for k in _keys(inner)] if isinstance(value, list) else []


@pytest.mark.slow
def test_no_file_of_the_study_holds_a_planted_key_or_a_redacted_name(study: Path) -> None:
    """Issue 39, done when: the study's folder (adapters, evaluations, request logs, tables) holds no planted
    credential, and no JSON key or metric name of it holds ``[redacted``."""
    files = [path for path in study.rglob("*") if path.is_file()]
    assert any(path.name == "row.json" for path in files) and any(path.name.startswith("results_") for path in files)
    for name, value in PLANTED.items():
        assert [str(p) for p in files if value[:24].encode() in p.read_bytes()] == [], name
    for path in files:
        if path.suffix in (".json", ".jsonl"):
            lines = [path.read_text(encoding="utf-8")] if path.suffix == ".json" else path.read_text().splitlines()
            redacted = [key for line in lines if line.strip() for key in _keys(json.loads(line)) if "[redacted" in key]
            assert redacted == [], f"{path}: {redacted[:5]}"
    assert json.loads((study / "rows" / "repaired" / "row.json").read_text())["identity"]["data_sha256"]
