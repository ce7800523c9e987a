"""On both embedded models, ``lc-hf`` gives stock ``HFLM``'s answers for a small real run.

Every log-likelihood request of a small run (pairwise judgements; the GV validator and CTP effect
sentences of the documents whose earlier generation stage, run for real on the model, parsed) is
scored by the stock path and by the prefix-sharing path of one model object: log-probabilities agree
within 1e-4 (float32, CPU), ``is_greedy`` agrees, and so does every pairwise judgement (which letter
is more likely). The embedded models' generations rarely parse on the fixture, and a blocked
document's placeholder is answered without a model call, so multi-token continuations on the real
pairwise prompts are added to make sure some are scored.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext.prefix.capture import as_instances, capture_loglikelihood_requests

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"

SLICES: list[tuple[str, dict[str, Any], int]] = [
    ("logic_consistency_summeval", {"max_items": 4, "ks": [3, 4]}, 1),
    ("logic_consistency_gv_arithmetic", {"n_docs": 4}, 2),
    ("logic_consistency_causal_ctp_so", {}, 1),
]


@pytest.fixture(autouse=True)
def _fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2-135m-instruct", "gemma-3-270m"])
def test_real_requests_score_as_with_stock_hflm(model: str) -> None:
    from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM

    lm = EmbeddedHFLM(model=model, batch_size=4, device="cpu")
    chat = lm.tokenizer.chat_template is not None
    pairs: list[tuple[str, str]] = []
    for task, metadata, limit in SLICES:
        captured = capture_loglikelihood_requests(
            lm, tasks=[task], limit=limit, metadata=metadata, apply_chat_template=chat
        )
        # the pairwise slice has no earlier stage: it always asks; the two-stage slices ask only
        # for documents whose generation parsed
        assert captured or task != SLICES[0][0], task
        pairs += captured
    contexts = sorted({context for context, continuation in pairs if continuation.strip() in ("A", "B")})
    pairs += [(context, " A, because it reads more clearly.") for context in contexts[:6]]
    lm.prefix_sharing = False
    stock = lm.loglikelihood(as_instances(pairs), disable_tqdm=True)
    lm.prefix_sharing = True
    shared = lm.loglikelihood(as_instances(pairs), disable_tqdm=True)
    worst = max(abs(a[0] - b[0]) for a, b in zip(shared, stock, strict=True))
    assert worst <= 1e-4, worst
    assert [a[1] for a in shared] == [b[1] for b in stock]
    # multi-token continuations (the CTP effect sentences) are among the requests
    assert any(len(lm.tok_encode(continuation)) > 3 for _, continuation in pairs)
    letters: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for (context, continuation), a, b in zip(pairs, shared, stock, strict=True):
        letters[context][continuation] = (a[0], b[0])
    judged = 0
    for options in letters.values():
        if len(options) == 2:
            (x_new, x_old), (y_new, y_old) = options.values()
            assert (x_new > y_new) == (x_old > y_old)
            judged += 1
    assert judged >= 12  # 4 items: 12 ordered pairs x 2 variants, both letters each
    assert os.environ["LOGIC_CONSISTENCY_DATA"] == str(FIXTURE_DATA)
