"""``lc-hf``'s ``mixed_generation`` (on by default): greedy requests whose stop strings and lengths differ share
batches, and every row's text equals lm-eval's own per-settings batching (``HFLM.generate_until``) on the same
object; ``mixed_generation=false`` is lm-eval's own batching.

The tiny random Llama of ``tests/tiny_model.py`` (a 300-token byte-level vocabulary), in process.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import CORPUS, tiny_base  # noqa: E402

from logic_consistency.harness_ext.prefix import generation  # noqa: E402
from logic_consistency.harness_ext.prefix.backend import HF_ARGS  # noqa: E402
from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM  # noqa: E402

BATCH = 4
#: Four tasks' settings: each its own stop strings and length (as the GV tasks' first stages differ).
SETTINGS: list[dict[str, Any]] = [
    {"until": ["\n"], "max_gen_toks": 6, "do_sample": False},
    {"until": ["e", "||"], "max_gen_toks": 10, "do_sample": False},
    {"until": [" ", "A"], "max_gen_toks": 16, "do_sample": False},
    {"until": ["0"], "max_gen_toks": 3, "temperature": 0.0},
]


def requests(settings: list[dict[str, Any]], per_setting: int = 3) -> list[Instance]:
    contexts = [text[: 20 + 13 * i] for i, text in enumerate(CORPUS * 3)]
    made: list[Instance] = []
    for n in range(per_setting):
        for k, kwargs in enumerate(settings):
            context = contexts[(n * len(settings) + k) % len(contexts)]
            made.append(Instance("generate_until", {}, (context, dict(kwargs)), len(made)))
    return made


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> PrefixSharingHFLM:
    base = tiny_base(tmp_path_factory.mktemp("tiny"))
    return PrefixSharingHFLM(pretrained=str(base), device="cpu", batch_size=BATCH, dtype="float32")  # the default


def counted(lm: PrefixSharingHFLM, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows of every ``model.generate`` call from now on."""
    rows: list[int] = []
    real = lm.model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        rows.append(int(kwargs["input_ids"].shape[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(lm.model, "generate", generate)
    return rows


def test_by_default_mixed_batches_fill_and_give_each_row_the_text_of_per_settings_batches(
    lm: PrefixSharingHFLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert lm.mixed_generation is True  # the declared default, as lc-hf and lc-embedded are built
    asked = requests(SETTINGS)
    rows = counted(lm, monkeypatch)
    stock = HFLM.generate_until(lm, asked, disable_tqdm=True)  # lm-eval's own: one batch per settings
    stock_rows, rows[:] = list(rows), []
    mixed = lm.generate_until(asked, disable_tqdm=True)
    assert mixed == stock
    assert stock_rows == [3] * len(SETTINGS)
    assert rows == [BATCH] * math.ceil(len(asked) / BATCH)
    # the cuts were exercised: some rows stopped at a stop string, some ran to their own length
    lengths = [len(lm.tok_encode(text)) for text in stock]
    assert any(n < SETTINGS[i % len(SETTINGS)]["max_gen_toks"] for i, n in enumerate(lengths))
    assert len(set(stock)) > 1


def test_mixed_generation_false_is_hflms_own_batching(lm: PrefixSharingHFLM, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = requests(SETTINGS)
    rows = counted(lm, monkeypatch)
    monkeypatch.setattr(lm, "mixed_generation", False)
    assert lm.generate_until(asked, disable_tqdm=True) == HFLM.generate_until(lm, asked, disable_tqdm=True)
    assert rows == [3] * len(SETTINGS) * 2  # one batch per settings, both times


def test_on_by_default_and_sampling_or_a_long_context_keeps_hflms_path(lm: PrefixSharingHFLM) -> None:
    assert {arg.name: arg.default for arg in HF_ARGS.declared}["mixed_generation"] is True
    sampled = {"until": ["\n"], "max_gen_toks": 4, "do_sample": True, "temperature": 0.7}
    long_context = "x " * (lm.max_length - 8)
    asked = [
        *requests(SETTINGS[:2], per_setting=1),
        Instance("generate_until", {}, ("Q: What is 7 - 2? A:", sampled), 2),
        Instance("generate_until", {}, (long_context, SETTINGS[0]), 3),
    ]
    groups, alone = generation._plan(lm, asked)
    assert alone == [2, 3]
    assert [[row.index for row in rows] for _, rows in groups] == [[0, 1]]


def test_the_cache_hook_gets_each_answer_under_its_own_settings(lm: PrefixSharingHFLM) -> None:
    seen: list[tuple[str, Any, Any]] = []

    class Hook:
        def add_partial(self, attr: str, request: Any, answer: Any) -> None:
            seen.append((attr, request, answer))

    asked = requests(SETTINGS, per_setting=1)
    original, lm.cache_hook = lm.cache_hook, Hook()
    try:
        answers = lm.generate_until(asked, disable_tqdm=True)
    finally:
        lm.cache_hook = original
    assert sorted(seen, key=repr) == sorted(
        [("generate_until", r.args, a) for r, a in zip(asked, answers, strict=True)], key=repr
    )
