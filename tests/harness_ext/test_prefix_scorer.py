"""``lc-hf`` (prefix-sharing log-likelihood scoring) equals lm-eval's stock ``HFLM`` scoring.

Tiny random models (a Llama and a Gemma-3 whose local layers have an 8-token sliding window, so
prefixes run past the window) are saved with the embedded model's tokenizer; the same requests are
scored by the stock path (``prefix_sharing=False``) and the prefix-sharing path of one object.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from logic_consistency.harness_ext.models.embedded import resolve
from logic_consistency.harness_ext.prefix import scorer as prefix_scorer
from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM

VOCAB = 49152  # SmolLM2's tokenizer


def _tiny_model(kind: str, folder: Path) -> Path:
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    common = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=512,
    )
    if kind == "llama":
        model = LlamaForCausalLM(LlamaConfig(num_hidden_layers=2, **common))
    else:
        config = Gemma3TextConfig(
            num_hidden_layers=3,
            sliding_window=8,
            layer_types=["sliding_attention", "sliding_attention", "full_attention"],
            **common,
        )
        model = Gemma3ForCausalLM(config)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(resolve("smollm2-135m-instruct"))).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=["llama", "gemma3-sliding"])
def lm(request: Any, tmp_path_factory: pytest.TempPathFactory) -> PrefixSharingHFLM:
    folder = _tiny_model(request.param, tmp_path_factory.mktemp(request.param))
    return PrefixSharingHFLM(
        pretrained=str(folder), device="cpu", batch_size=3, dtype="float32", min_shared_tokens=8, max_length=96
    )


def _requests() -> list[tuple[Any, list[int], list[int]]]:
    """Prompts sharing a long article, then option A; one- and multi-token continuations."""
    rng = random.Random(7)
    words = lambda n: [rng.randrange(10, VOCAB) for _ in range(n)]  # noqa: E731
    article = words(40)
    requests = []
    for a in range(3):
        option_a = words(9 + 4 * a)  # cached option-A prefixes of different lengths share a batch
        for b in range(3):
            context = article + option_a + words(5 + b)
            for continuation in ([101], [102], words(4)):
                requests.append(((f"ctx{a}{b}", str(continuation)), context, continuation))
    requests.append((("lonely", "x"), words(30), [7]))  # shares nothing: ordinary path
    requests.append((("long", "y"), article + words(80), words(3)))  # left-truncated to max_length
    rng.shuffle(requests)
    return requests


def _both(lm: PrefixSharingHFLM, requests: list[Any]) -> tuple[list[Any], list[Any]]:
    lm.prefix_sharing = False
    stock = lm._loglikelihood_tokens(requests, disable_tqdm=True)
    lm.prefix_sharing = True
    return stock, lm._loglikelihood_tokens(requests, disable_tqdm=True)


def _score_spying(lm: PrefixSharingHFLM, method: str, record: Callable[..., Any]) -> None:
    """Score ``_requests()`` the prefix-sharing way with ``lm.<method>`` handing its arguments to ``record`` first."""
    original = getattr(lm, method)

    def spy(*args: Any) -> Any:
        record(*args)
        return original(*args)

    setattr(lm, method, spy)
    try:
        lm.prefix_sharing = True
        lm._loglikelihood_tokens(_requests(), disable_tqdm=True)
    finally:
        delattr(lm, method)


def test_same_logprobs_and_greedy_flags_as_stock_in_request_order(lm: PrefixSharingHFLM) -> None:
    requests = _requests()
    stock, shared = _both(lm, requests)
    assert len(shared) == len(requests)
    for (logprob, greedy), (expected, expected_greedy) in zip(shared, stock, strict=True):
        assert abs(logprob - expected) <= 1e-4
        assert greedy == expected_greedy
    # The comparison is not vacuous: answers differ from request to request.
    assert len({round(logprob, 3) for logprob, _ in shared}) > len(shared) // 2


def test_sibling_prefixes_of_different_lengths_share_batches_only_without_sliding_windows(
    lm: PrefixSharingHFLM,
) -> None:
    gemma = lm.config.model_type.startswith("gemma3")
    assert lm._holes_ok is not gemma
    widths: list[tuple[int, ...]] = []
    _score_spying(lm, "_extend", lambda parent, items: widths.append(tuple(len(g.tokens) for _, g in items)))
    mixed = [w for w in widths if len(set(w)) > 1]
    assert (not mixed) if gemma else mixed, widths


def test_suffixes_of_one_prefix_share_packed_rows_only_without_sliding_windows(lm: PrefixSharingHFLM) -> None:
    gemma = lm.config.model_type.startswith("gemma3")
    assert lm._packs is not gemma
    segments: list[list[int]] = []
    _score_spying(lm, "_score_packed", lambda rows, batch, work: segments.append([len(r.segments) for r in batch]))
    # Without sliding windows each prefix's nine suffixes sit side by side in few rows.
    assert (not segments) if gemma else max(max(row) for row in segments) > 1, segments


def test_packed_rows_under_eager_attention_equal_stock(lm: PrefixSharingHFLM, monkeypatch: pytest.MonkeyPatch) -> None:
    if not lm._packs:
        pytest.skip("no packed rows with sliding windows")
    monkeypatch.setattr(lm.model.config, "_attn_implementation", "eager")  # the additive-mask path
    stock, shared = _both(lm, _requests())
    for (logprob, greedy), (expected, expected_greedy) in zip(shared, stock, strict=True):
        assert abs(logprob - expected) <= 1e-4 and greedy == expected_greedy


def test_cache_hook_receives_every_answer(lm: PrefixSharingHFLM) -> None:
    seen: list[tuple[Any, Any]] = []

    class Hook:
        def add_partial(self, kind: str, request: Any, answer: Any) -> None:
            seen.append((request, answer))

    requests = _requests()
    lm.cache_hook = Hook()
    lm.prefix_sharing = True
    answers = lm._loglikelihood_tokens(requests, disable_tqdm=True)
    assert sorted(map(str, seen)) == sorted(str((r[0], a)) for r, a in zip(requests, answers, strict=True))


@pytest.mark.parametrize("batch_size", [1, 8])
def test_batch_size_does_not_change_answers(lm: PrefixSharingHFLM, batch_size: int) -> None:
    requests = _requests()
    lm.prefix_sharing = True
    reference = lm._loglikelihood_tokens(requests, disable_tqdm=True)
    answers = lm._loglikelihood_tokens(requests, disable_tqdm=True, override_bs=batch_size)
    for (logprob, greedy), (expected, expected_greedy) in zip(answers, reference, strict=True):
        assert abs(logprob - expected) <= 1e-4 and greedy == expected_greedy


def test_unreusable_cache_falls_back_with_one_log_line(
    lm: PrefixSharingHFLM, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    requests = _requests()
    stock, _ = _both(lm, requests)
    monkeypatch.setattr(prefix_scorer.PrefixSharingHFLM, "REUSABLE_LAYERS", ())
    monkeypatch.setattr(lm, "_fallback_reason", None)
    monkeypatch.setattr(lm, "_fallback_logged", False, raising=False)
    with caplog.at_level(logging.WARNING, logger=prefix_scorer.__name__):
        first = lm._loglikelihood_tokens(requests, disable_tqdm=True)
        second = lm._loglikelihood_tokens(requests, disable_tqdm=True)
    lines = [r.message for r in caplog.records if "prefix sharing is off" in r.message]
    assert len(lines) == 1 and "update in place" in lines[0]
    assert first == stock and second == stock


@pytest.mark.parametrize(
    ("option", "value"), [("prefix_sharing", "maybe"), ("min_shared_tokens", 0), ("max_cached_prefixes", "x")]
)
def test_bad_model_args_are_errors_naming_the_option(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=option):
        PrefixSharingHFLM(pretrained="unused", **{option: value})


@pytest.mark.parametrize(
    ("world_size", "environ", "warned"),
    [
        (1, {"WORLD_SIZE": "2"}, True),  # torchrun on CPU: lm-eval gives every process world size 1
        (2, {"WORLD_SIZE": "2"}, False),  # data parallel over two GPUs
        (1, {}, False),
        (1, {"WORLD_SIZE": "1"}, False),
        (1, {"WORLD_SIZE": "two"}, False),
    ],
)
def test_a_launch_that_lm_eval_does_not_split_is_warned(world_size: int, environ: dict[str, str], warned: bool) -> None:
    message = prefix_scorer.duplicated_ranks_warning(world_size, environ)
    assert (message is not None) == warned
    if warned:
        assert "WORLD_SIZE=2" in message and "every process will run the whole evaluation" in message
