"""A cloze task (each option scored as the continuation) is refused in ``fields`` mode and re-posed with
lettered options under ``invariance_mode: mcf``; the cloze fixture reads the MMLU fixture rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.tasks.invariance.fields import FieldsError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "data" / "mmlu" / "mmlu_test.jsonl"
CLOZE = """task: cloze_fixture
dataset_path: json
dataset_kwargs: {{data_files: {{test: {path}}}}}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question.strip()}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: answer
metric_list: [{{metric: acc, aggregation: mean, higher_is_better: true}}]
"""
WRAPPED = """task: {name}
class: !function logic_consistency.tasks.invariance.task.InvarianceTask
base_task: cloze_fixture
metadata: {{transform: cyclic, invariance_mode: {mode}, referring_options: pin}}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cloze.yaml").write_text(CLOZE.format(path=FIXTURE))
    for mode in ("fields", "mcf"):
        (tmp_path / f"w_{mode}.yaml").write_text(WRAPPED.format(name=f"cloze_{mode}", mode=mode))
    return tmp_path


def test_cloze_is_refused_in_fields_mode_naming_mcf(folder: Path) -> None:
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    with pytest.raises(FieldsError, match=r"'cloze_fields': a cloze task .* order-free.*invariance_mode: mcf"):
        manager.load(["cloze_fields"])


def test_mcf_poses_lettered_options_in_every_order(folder: Path) -> None:
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    task = manager.load(["cloze_mcf"])["tasks"]["cloze_mcf"]
    doc = task.eval_docs[0]
    options = doc["choices"]
    ctx = task.fewshot_context(doc, num_fewshot=0)
    assert (
        ctx
        == f"Question: {doc['question'].strip()}\nA. {options[0]}\nB. {options[1]}\nC. {options[2]}\nD. {options[3]}\nAnswer:"
    )
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=("cloze_mcf", 0, 1))
    assert [r.arguments[1] for r in requests[:4]] == [" A", " B", " C", " D"]
    assert f"A. {options[1]}\nB. {options[2]}" in requests[4].arguments[0]
    oracle = [
        (-0.5 if p == order.index(doc["answer"]) else -3.0, False) for order in task.orders(doc) for p in range(4)
    ]
    assert task.process_results(doc, oracle)["acc_circular"] == 1.0
