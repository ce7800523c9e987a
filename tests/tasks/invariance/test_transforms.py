"""The option orders of each transform, referring options, and the fields and labels of a base prompt."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from logic_consistency.tasks.invariance.fields import FieldsError, detect_fields, permuted_doc, relabel_text
from logic_consistency.tasks.invariance.transforms import pinned, referring_positions, variant_orders

PROMPT = "Q?\nA. red\nB. green\nC. blue\nD. black\nAnswer:"


def _orders(transform: str, k: int = 4, gold: int = 2, **options: Any) -> list[tuple[int, ...]]:
    return variant_orders(transform, k, gold=gold, **{"max_variants": 24, "seed": 7, "question": 3, **options})


def test_every_transform_starts_with_the_original_order() -> None:
    for transform in ("cyclic", "permutations", "swap_gold", "reverse", "random", "ids"):
        assert _orders(transform)[0] == (0, 1, 2, 3), transform


def test_cyclic_and_swap_gold_show_every_option_and_the_gold_at_every_position() -> None:
    rotations = _orders("cyclic")
    assert all(sorted(order[p] for order in rotations) == [0, 1, 2, 3] for p in range(4))
    swaps = _orders("swap_gold", gold=2)
    assert sorted(order.index(2) for order in swaps) == [0, 1, 2, 3]
    assert all(sum(order[p] != p for p in range(4)) in (0, 2) for order in swaps)  # one swap each


def test_permutations_and_random() -> None:
    assert len(set(_orders("permutations"))) == math.factorial(4)
    with pytest.raises(ValueError, match=r"120 variants, over max_variants=24.*random"):
        _orders("permutations", k=5)
    seeded = _orders("random", k=6, max_variants=10)
    assert len(set(seeded)) == 10 and seeded == _orders("random", k=6, max_variants=10)
    assert seeded != _orders("random", k=6, max_variants=10, question=4)


def test_referring_options_are_found_and_pinned() -> None:
    options = ["Paris", "Rome", "Both A and B", "All of the above", "None of these", "Canada and Mexico"]
    assert referring_positions(options) == [2, 3, 4]
    orders = pinned(_orders("cyclic", k=3), [3], 4)
    assert orders == [(0, 1, 2, 3), (1, 2, 0, 3), (2, 0, 1, 3)]


def _task(doc: dict[str, Any], choices: list[str], text: str) -> Any:
    return SimpleNamespace(
        config=SimpleNamespace(task="t"),
        doc_to_choice=lambda d: choices,
        doc_to_text=lambda d: text,
        doc_to_target=lambda d: d["label"],
    )


def test_lettered_fields_are_detected_and_permuted() -> None:
    doc = {"question": "Q?", "options": ["red", "green", "blue", "black"], "label": 1, "id": 1}
    fields = detect_fields(_task(doc, list("ABCD"), PROMPT), [doc], mode="fields")
    assert (fields.options, fields.answer, fields.n_options) == ("options", "label", 4)
    shown = permuted_doc(doc, (1, 2, 3, 0), fields)
    assert shown["options"] == ["green", "blue", "black", "red"] and shown["label"] == 0


def test_cloze_task_is_refused_naming_mcf() -> None:
    doc = {"question": "The sky is", "choices": ["blue today", "made of cheese"], "label": 0}
    with pytest.raises(FieldsError, match=r"cloze task.*order-free.*invariance_mode: mcf"):
        detect_fields(_task(doc, doc["choices"], "The sky is"), [doc], mode="fields")


def test_labels_are_replaced_before_each_option() -> None:
    relabelled = relabel_text(PROMPT, ["red", "green", "blue", "black"], "ABCD", "1234", where="t")
    assert relabelled == "Q?\n1. red\n2. green\n3. blue\n4. black\nAnswer:"
    with pytest.raises(FieldsError, match="label 'A' not found before option 0"):
        relabel_text("red green blue black", ["red", "green", "blue", "black"], "ABCD", "1234", where="t")
