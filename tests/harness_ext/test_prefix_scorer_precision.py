"""In bfloat16 and float16, ``lc-hf`` stays within stock ``hf``'s own batch noise, and no letter flips.

A reduced-precision run is not reproducible to the last bit even with stock ``hf``: the batch size
changes the padded shapes, hence the kernels' blocking, and lm-eval computes ``log_softmax`` in the
model's dtype (``softmax_dtype`` unset), so each log-probability is rounded to that dtype. The bound
is therefore relative: ``lc-hf`` may be at most ``NOISE_MULTIPLE`` times stock's own batch-1 vs
batch-8 spread from stock, plus ``ULPS`` units in the last place of the largest log-probability.
The judge is a seeded tiny random Llama (512-token vocabulary, so it is fast) whose letter margins
are small: some below one rounding step, so flips are possible, and a flip is an error only where
stock's margin exceeds the bound.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch

from logic_consistency.harness_ext.models.embedded import resolve
from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM

VOCAB = 512
LETTERS = (317, 318)  # two token ids standing for the answer letters
#: lc-hf may be this many times stock's own b1-vs-b8 spread away from stock (README, "Which backend").
NOISE_MULTIPLE = 2.0
#: ... plus this many units in the last place of the largest |log-probability| in the dtype.
ULPS = 2.0


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny-llama-precision")
    torch.manual_seed(0)
    # initializer_range 0.2 spreads the logits over a few nats: margins from ~0 to a few nats.
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        num_hidden_layers=2,
        max_position_embeddings=512,
        initializer_range=0.2,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(str(resolve("smollm2-135m-instruct"))).save_pretrained(path)
    return path


def _letter_requests() -> list[tuple[Any, list[int], list[int]]]:
    """Pairwise-shaped prompts: a shared article, option A, option B, the question; both letters each."""
    rng = random.Random(11)
    words = lambda n: [rng.randrange(10, VOCAB) for _ in range(n)]  # noqa: E731
    article, question = words(48), words(6)
    options = [words(8 + 3 * k) for k in range(6)]
    requests = []
    for a, option_a in enumerate(options):
        for b, option_b in enumerate(options):
            if a != b:
                context = article + option_a + option_b + question
                requests += [((f"{a}{b}", str(letter)), context, [letter]) for letter in LETTERS]
    return requests


def _score(lm: PrefixSharingHFLM, requests: list[Any], *, prefix_sharing: bool, batch_size: int) -> list[float]:
    lm.prefix_sharing = prefix_sharing
    lm.batch_size_per_gpu = batch_size
    return [logprob for logprob, _ in lm._loglikelihood_tokens(requests, disable_tqdm=True)]


def _preferences(logprobs: list[float]) -> list[tuple[bool, float]]:
    """Per prompt (requests come in letter pairs): (A preferred, as the suite's >= rule; the margin)."""
    pairs = zip(logprobs[0::2], logprobs[1::2], strict=True)
    return [(first >= second, abs(first - second)) for first, second in pairs]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_lc_hf_stays_within_stocks_own_batch_noise_and_flips_no_clear_letter(folder: Path, dtype: str) -> None:
    lm = PrefixSharingHFLM(
        pretrained=str(folder), device="cpu", batch_size=8, dtype=dtype, min_shared_tokens=8, max_length=128
    )
    assert lm.model.dtype == getattr(torch, dtype)
    requests = _letter_requests()
    shared = _score(lm, requests, prefix_sharing=True, batch_size=8)
    stock8 = _score(lm, requests, prefix_sharing=False, batch_size=8)
    stock1 = _score(lm, requests, prefix_sharing=False, batch_size=1)

    noise = max(abs(x - y) for x, y in zip(stock1, stock8, strict=True))
    ulp = torch.finfo(getattr(torch, dtype)).eps * max(abs(x) for x in stock8)
    bound = NOISE_MULTIPLE * noise + ULPS * ulp
    worst = max(abs(x - y) for x, y in zip(shared, stock8, strict=True))
    assert worst <= bound, (worst, noise, ulp)

    mine, theirs = _preferences(shared), _preferences(stock8)
    clear = [k for k, (_, margin) in enumerate(theirs) if margin > bound]
    assert [k for k in clear if mine[k][0] != theirs[k][0]] == []
    # Not vacuous: the judge has small margins (SmolLM2's are all >= 0.625 nats on the quick start's
    # slice), some within a few rounding steps, and most prompts are clear enough to be checked.
    margins = sorted(margin for _, margin in theirs)
    assert sum(margin < 0.1 for margin in margins) >= 2, margins[:5]
    assert len(clear) >= 20, (len(clear), bound)
    # The prefix path really ran (the prompts share an article worth caching).
    assert len({round(x, 4) for x in shared}) > len(shared) // 4
