"""``generator_shots``: the suite's fixed demonstrations before Table 13's arithmetic generator prompt.

The default (0) leaves documents and prompt byte-identical to the paper's zero-shot prompt; k shots put
the first k demonstrations, each an answered copy of the verbatim prompt, before it. The demonstrations
are right (and their incorrect answers wrong) and in the question forms the task draws.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.options import OptionError, declared_options
from logic_consistency.tasks.gv import arithmetic

TABLE_13 = "Write a correct and an incorrect answer (delimited by ||) to the question:\nQ: {q}\nA:"


def task_docs(**metadata: Any) -> list[dict[str, Any]]:
    task = "logic_consistency_gv_arithmetic"
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return list(manager.load(task)["tasks"][task].test_docs())


def test_default_is_table_13_zero_shot_byte_for_byte() -> None:
    docs = arithmetic.load(n_docs=5, seed=3)["test"].to_list()
    assert docs == arithmetic.load(n_docs=5, seed=3, generator_shots=0)["test"].to_list()
    for doc in docs:
        assert "generator_shots" not in doc  # today's documents (and lm-eval's doc hashes) are unchanged
        assert arithmetic.generator_prompts(doc)["main"] == TABLE_13.format(q=doc["question"])


def test_two_shots_put_the_demonstrations_before_the_verbatim_prompt() -> None:
    plain = arithmetic.load(n_docs=3, seed=3)["test"].to_list()
    shot = arithmetic.load(n_docs=3, seed=3, generator_shots=2)["test"].to_list()
    demos = (
        "Write a correct and an incorrect answer (delimited by ||) to the question:\nQ: What is 12 + 7?\nA: 19 || 21\n\n"
        "Write a correct and an incorrect answer (delimited by ||) to the question:\nQ: What is 45 minus 3?\nA: 42 || 38\n\n"
    )
    for before, doc in zip(plain, shot, strict=True):
        assert {**before, "generator_shots": 2} == doc  # the same questions and r
        assert arithmetic.generator_prompts(doc)["main"] == demos + TABLE_13.format(q=doc["question"])
    three = arithmetic.generator_prompts({**shot[0], "generator_shots": 3})["main"]
    assert (
        three.count("\nA:") == 4 and three.startswith(demos) and three.endswith(TABLE_13.format(q=shot[0]["question"]))
    )


def test_the_option_reaches_the_task_through_metadata() -> None:
    docs = task_docs(n_docs=2, generator_shots=1)
    assert {doc["generator_shots"] for doc in docs} == {1}
    assert "generator_shots" not in task_docs(n_docs=2)[0]
    with pytest.raises(OptionError, match=r"logic_consistency_gv_arithmetic.*generator_shots must be at most"):
        task_docs(n_docs=2, generator_shots=4)


@pytest.mark.parametrize("bad", [-1, 99, "2", 2.0, True, None])
def test_bad_values_are_errors_naming_the_option(bad: Any) -> None:
    with pytest.raises(OptionError, match="generator_shots"):
        arithmetic.load(n_docs=2, generator_shots=bad)
    with pytest.raises(OptionError, match="generator_shots"):
        arithmetic.load_cot(n_docs=2, generator_shots=bad)


def test_declared_bound_is_the_number_of_demonstrations() -> None:
    declared = declared_options()["generator_shots"]
    assert (declared.minimum, declared.maximum, declared.default) == (0, len(arithmetic.GENERATOR_EXAMPLES), 0)


def test_demonstrations_are_right_and_in_the_drawn_forms() -> None:
    forms = [form for op in arithmetic.TABLE_13_OPERATIONS for form in arithmetic.FORMS_BY_OPERATION[op]]
    for question, correct, incorrect in arithmetic.GENERATOR_EXAMPLES:
        matches = [
            result(int(m["a"]), int(m["b"]))
            for template, result in forms
            if (
                m := re.fullmatch(
                    re.escape(template).replace(r"\{a\}", r"(?P<a>\d+)").replace(r"\{b\}", r"(?P<b>\d+)"), question
                )
            )
        ]
        assert len(matches) == 1, question
        assert int(correct) == matches[0] != int(incorrect), question


@pytest.mark.parametrize(
    "output",
    [
        " 66784 || 961",
        "A: 66784 || 961",
        " 66784 || 961\n\nWrite a correct and an incorrect answer (delimited by ||) to the question:",
        " 66784 || 961\n\nWrite a correct and an incorrect answer (delimited by ||) to the question:\nQ: What is 5 + 1?\nA: 6 || 7",
    ],
)
def test_the_parser_reads_what_a_model_writes_after_the_demonstrations(output: str) -> None:
    doc = {"question": "What is 65823 + 961?", "r": -1, "generator_shots": 2}
    assert arithmetic.parse_generator(doc, {"main": output}) == {"correct": "66784", "incorrect": "961", "shown": "961"}
