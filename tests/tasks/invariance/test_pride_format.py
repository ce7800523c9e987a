"""``mcf_format: pride`` reproduces the prompts of PriDe's authors (Zheng et al., ICLR 2024) byte for
byte, zero-shot and few-shot, on real MMLU rows (the MMLU fixture, posed through a cloze base over it,
and lm-eval's own ``mmlu_abstract_algebra`` read from it, zero-shot: the copy has no dev split),
every cyclic variant included (a question with "All of the above" excluded, as by default);
a mistyped or misplaced ``mcf_format`` is an error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.options import OptionError
from logic_consistency.tasks.data import DATA_ENV_VAR
from logic_consistency.tasks.invariance.fields import FieldsError

FIXTURE_DATA = Path(__file__).resolve().parents[2] / "fixtures" / "data"
FIXTURE = FIXTURE_DATA / "mmlu" / "mmlu_test.jsonl"
CLOZE = """task: cloze_fixture
dataset_path: json
dataset_kwargs: {{data_files: {{test: {test}, dev: {dev}}}}}
test_split: test
fewshot_split: dev
fewshot_config: {{sampler: first_n}}
output_type: multiple_choice
doc_to_text: "Question: {{{{question.strip()}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: answer
metric_list: [{{metric: acc, aggregation: mean, higher_is_better: true}}]
"""
WRAPPED = """task: {name}
class: !function logic_consistency.tasks.invariance.task.InvarianceTask
base_task: cloze_fixture
metadata: {{transform: cyclic, {options}}}
"""


# ---------------------------------------------------------------- the authors' template (reference)
# Copied from chujiezheng/LLM-MCQ-Bias, code/eval_clm_utils.py at commit
# 2ae2f40c77006f7a00a4675bdfb30151c2406691: prepare_eval (sys_msg, create_user_prompt without a setting,
# prepare_few_shot_samples), prepare_eval_fn_base / prepare_eval_fn_perm (input_text), and
# code/utils.py cycle_options. Left out: `if not bpe_has_space_prefix: input_text += ' '` (the space
# is lm-eval's continuation " A" here) and the CSV reading (the rows are given as dicts).
option_ids = list("ABCD")


def create_user_prompt(question, options):  # type: ignore[no-untyped-def]
    user_prompt = (
        f"Question: {question.strip()}\nOptions:\n"
        + "\n".join([f"{option_id}. {answer}".strip() for option_id, answer in zip(option_ids, options)])
        + "\nAnswer:"
    )
    return user_prompt


def cycle_options(answers):  # type: ignore[no-untyped-def]
    n = len(answers)
    for i in range(n):
        cycled_answers = answers[i:] + answers[:i]
        yield cycled_answers


def authors_inputs(subject, row, dev_rows, num_few_shot):  # type: ignore[no-untyped-def]
    sys_msg = "The following are multiple choice questions about {}."
    sys_msg += " You should directly answer the question by choosing the correct option."
    few_shot_samples = [
        create_user_prompt(x["question"], x["choices"]) + " " + option_ids[x["answer"]] for x in dev_rows
    ]
    input_texts = []
    for cycled_options in cycle_options(row["choices"]):
        input_text = sys_msg.format(subject.replace("_", " ")) + "\n\n"
        if num_few_shot > 0:
            for s in few_shot_samples[:num_few_shot]:
                input_text += s + "\n\n"
        input_text += create_user_prompt(row["question"], cycled_options)
        input_texts.append(input_text)
    return input_texts


# ---------------------------------------------------------------- the suite's prompts
def _folder(tmp_path: Path, rows: list[dict], dev_rows: list[dict]) -> Path:
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps(row) + "\n" for row in dev_rows))
    (tmp_path / "cloze.yaml").write_text(CLOZE.format(test=FIXTURE, dev=dev))
    for name, options in [
        ("cloze_pride", "invariance_mode: mcf, mcf_format: pride"),
        ("cloze_typo", "invariance_mode: mcf, mcf_format: prid"),
        ("cloze_misplaced", "mcf_format: pride"),
    ]:
        (tmp_path / f"{name}.yaml").write_text(WRAPPED.format(name=name, options=options))
    return tmp_path


@pytest.fixture
def rows() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


@pytest.mark.parametrize("shots", [0, 2])
def test_pride_prompts_equal_the_authors_byte_for_byte(shots: int, rows: list[dict], tmp_path: Path) -> None:
    dev_rows = [row for row in rows if row["subject"] == "anatomy"][:shots] or rows[-1:]
    manager = TaskManager(include_path=str(_folder(tmp_path, rows, dev_rows)), include_defaults=False)
    task = manager.load(["cloze_pride"])["tasks"]["cloze_pride"]
    checked = 0
    for doc in task.eval_docs:
        row = next(row for row in rows if row["question"] == doc["question"])
        ctx = task.fewshot_context(doc, num_fewshot=shots)
        requests = task.construct_requests(doc=doc, ctx=ctx, metadata=("cloze_pride", 0, 1))
        prompts = [request.arguments[0] for request in requests[::4]]
        assert prompts == authors_inputs(row["subject"], row, dev_rows, shots)
        assert [request.arguments[1] for request in requests[:4]] == [" A", " B", " C", " D"]
        checked += 1
    assert checked == len(rows) - 1  # the row with "All of the above" is excluded (counted)


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("cloze_typo", OptionError, r"metadata\.mcf_format must be one of \['olmes', 'pride'\].*did you mean 'pride'"),
        ("cloze_misplaced", ValueError, r"metadata\.mcf_format applies to invariance_mode mcf only"),
    ],
)
def test_a_mistyped_or_misplaced_mcf_format_is_named(
    name: str, error: type[Exception], message: str, rows: list[dict], tmp_path: Path
) -> None:
    manager = TaskManager(include_path=str(_folder(tmp_path, rows, rows[-1:])), include_defaults=False)
    with pytest.raises(error, match=message):
        manager.load([name])


LETTERED = """task: {name}
class: !function logic_consistency.tasks.invariance.task.InvarianceTask
base_task: mmlu_abstract_algebra
metadata: {{transform: cyclic, invariance_mode: mcf, mcf_format: {mcf_format}}}
"""


def test_lm_evals_own_mmlu_is_reposed_in_the_authors_format(
    rows: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))  # lm-eval's mmlu_* read the local copy (the fixture)
    for mcf_format in ("pride", "olmes"):
        (tmp_path / f"{mcf_format}.yaml").write_text(LETTERED.format(name=f"mmlu_{mcf_format}", mcf_format=mcf_format))
    manager = TaskManager(include_path=str(tmp_path))
    task = manager.load(["mmlu_pride"])["tasks"]["mmlu_pride"]
    posed = [row for row in rows if row["subject"] == "abstract_algebra"]
    assert [doc["question"] for doc in task.eval_docs] == [row["question"] for row in posed]
    for doc, row in zip(task.eval_docs, posed, strict=True):
        requests = task.construct_requests(doc=doc, ctx=task.fewshot_context(doc, 0), metadata=("mmlu_pride", 0, 1))
        assert [request.arguments[0] for request in requests[::4]] == authors_inputs(row["subject"], row, [], 0)
    with pytest.raises(FieldsError, match=r"already shows its options.*invariance_mode: fields.*mcf_format: pride"):
        manager.load(["mmlu_olmes"])
