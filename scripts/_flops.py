"""FLOPs of a decoder-only transformer's forward passes, counted from its config and the tokens each pass
computes, and this machine's fp32 matrix-multiply peak on the model's shapes (for the benchmark scripts).

Counted per real (non-padding) token of a pass: the matrix multiplies of every layer (2 x the layer's
weights: attention projections and MLP), attention (4 x hidden x the keys the token attends to: QK^T
and AV), and the output layer (2 x hidden x vocabulary) for each logit position the pass keeps. Norms,
rotary embeddings, softmax and the padding slots are left out: these are the useful FLOPs, so the share
of the peak is a lower bound of the arithmetic done.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FlopCounter:
    """Counts the useful FLOPs of every forward pass of ``model`` while attached (a forward pre-hook)."""

    model: Any
    flops: float = 0.0
    tokens: int = 0
    passes: int = 0
    _handle: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        text = getattr(self.model.config, "get_text_config", lambda: self.model.config)()
        hidden = int(text.hidden_size)
        heads = int(text.num_attention_heads)
        head_dim = int(getattr(text, "head_dim", None) or hidden // heads)
        kv = int(getattr(text, "num_key_value_heads", None) or heads)
        per_layer = (
            hidden * heads * head_dim * 2 + hidden * kv * head_dim * 2 + 3 * hidden * int(text.intermediate_size)
        )
        self.layers = int(text.num_hidden_layers)
        self.per_token = 2.0 * self.layers * per_layer  # the layers' matrix multiplies
        self.per_key = 4.0 * self.layers * heads * head_dim  # QK^T and AV, per (query, key) pair
        self.per_logit = 2.0 * hidden * int(text.vocab_size)
        self.hidden, self.intermediate, self.vocab = hidden, int(text.intermediate_size), int(text.vocab_size)

    def __enter__(self) -> FlopCounter:
        self._handle = self.model.register_forward_pre_hook(self._count, with_kwargs=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._handle.remove()

    def _count(self, _module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        import torch

        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            return
        rows, width = ids.shape
        mask = kwargs.get("attention_mask")
        if mask is None:  # a plain pass (HFLM's own): every slot is a token, each sees the ones before it
            cache = kwargs.get("past_key_values")
            past = int(cache.get_seq_length()) if cache is not None and hasattr(cache, "get_seq_length") else 0
            fresh = torch.ones(rows, width)
            keys = (past + torch.arange(1, width + 1, dtype=torch.float64)).expand(rows, width)
        elif mask.dim() == 4:  # packed rows (lc-hf): an explicit mask, 0 where a query sees a key
            seen = mask[:, 0] == 0
            fresh = seen[:, :, -width:].diagonal(dim1=1, dim2=2).to(torch.float64)  # padding never sees itself
            keys = seen.sum(dim=2).to(torch.float64)
        else:
            mask = mask.to(torch.float64)
            fresh = mask[:, -width:]
            keys = mask.cumsum(dim=1)[:, -width:]  # the valid keys up to and including each position
        real = float(fresh.sum())
        keep = kwargs.get("logits_to_keep")
        if isinstance(keep, torch.Tensor):  # the positions kept, the same in every row
            logits = rows * int(keep.numel())
        else:
            logits = rows * (min(int(keep), width) if keep else width)
        self.flops += real * self.per_token + float((keys * fresh).sum()) * self.per_key + logits * self.per_logit
        self.tokens += int(real)
        self.passes += 1


def matmul_peak(
    hidden: int, intermediate: int, vocab: int, *, rows: int = 1024, seconds: float = 2.0
) -> dict[str, float]:
    """fp32 GFLOP/s of ``torch.matmul`` on the model's shapes (``rows`` tokens at a time), each the best of
    repeats over about ``seconds``: the attention projection, the MLP's up and down projections, the output
    layer. Runs with torch's current thread count (the scorer's)."""
    import torch

    shapes = {
        "tokens x hidden @ hidden x hidden": (rows, hidden, hidden),
        "tokens x hidden @ hidden x mlp": (rows, hidden, intermediate),
        "tokens x mlp @ mlp x hidden": (rows, intermediate, hidden),
        "tokens x hidden @ hidden x vocab": (rows // 8, hidden, vocab),
    }
    out = {}
    with torch.no_grad():
        for name, (m, k, n) in shapes.items():
            a, b = torch.randn(m, k), torch.randn(k, n)
            torch.matmul(a, b)  # warm-up (allocations, kernel choice)
            best, spent = float("inf"), 0.0
            while spent < seconds / len(shapes):
                started = time.perf_counter()
                torch.matmul(a, b)
                took = time.perf_counter() - started
                best, spent = min(best, took), spent + took
            out[name] = 2.0 * m * k * n / best / 1e9
    return out
