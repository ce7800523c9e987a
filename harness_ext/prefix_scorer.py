"""``lc-hf``: lm-eval's ``hf`` model with log-likelihood scoring that computes each shared prefix once.

The suite's pairwise prompts repeat long text: every judgement on one SummEval article repeats the chat
header, the instructions and the article, and every judgement with summary *a* as option A repeats
that summary too. lm-eval's ``HFLM`` runs one full forward pass per context (it shares work only
between one-token continuations of the same context). This backend keeps everything of ``HFLM``
(tokenisation, the context/continuation split, left truncation to the model's length, ``--use_cache``,
chat templates, generation) and replaces only ``_loglikelihood_tokens``:

1. each request's model input is built exactly as ``HFLM`` builds it,
   ``(context + continuation)[-(max_length + 1):][:-1]``, and its *shareable key* is the input up to
   the first position whose logits are scored;
2. a radix tree over the keys (``prefix_trie.py``) picks the shared prefixes worth caching
   (article, then option A, then option B, ...);
3. walking that tree depth first, the key/value cache of each cached prefix is computed once (from its
   parent's cache), and the requests under it are scored in batches of ``batch_size`` rows whose
   inputs are only their own suffixes, with the prefix cache expanded across the batch (a view, not a
   copy); rows are right-padded, which a causal mask makes harmless, as in ``HFLM``;
4. requests whose inputs are identical (the two answer letters of one prompt) share one row;
   requests that share nothing worth caching go through ``HFLM``'s ordinary path.

Results are ``(logprob, is_greedy)`` per request in the original order, written to lm-eval's cache
hook as they come. They equal ``HFLM``'s up to float rounding (tested within 1e-4 on both embedded
models, float32 on CPU): the same attention over the same keys, computed in a different grouping.

Caches are reused only when every layer of the model's cache is one whose update never mutates the
stored tensors in place (``DynamicLayer``, and ``DynamicSlidingWindowLayer`` used by Gemma-2/3's
local layers, whose window the cache position keeps exact). Any other cache (static, quantised,
linear-attention/hybrid, encoder-decoder) makes the backend fall back to the ordinary path for the
whole model, with one log line naming the reason. No silent approximation is ever made.

Model arguments on top of ``hf``'s: ``prefix_sharing`` (default true; false = stock ``HFLM``),
``min_shared_tokens`` (default 256: cache a prefix only when it saves at least that many token
computations; see ``prefix_trie.py`` for why a threshold, and ``scripts/bench_scoring.py`` to tune it) and ``max_cached_prefixes`` (default 8: how many nested prefix caches may be alive at
once, which bounds memory). With ``batch_size=auto`` the prefix path uses ``max_batch_size`` rows.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from lm_eval.models.huggingface import HFLM
from tqdm import tqdm

from logic_consistency.harness_ext.prefix_trie import PrefixGroup, plan_prefix_groups

eval_logger = logging.getLogger(__name__)

#: One ``HFLM`` log-likelihood request: ((context, continuation) or None, context ids, continuation ids).
Request = tuple[Any, list[int], list[int]]


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"{name} must be true or false, got {value!r}")


def _as_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}") from None
    if number < 1 or (isinstance(value, float) and value != number):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return number


class PrefixSharingHFLM(HFLM):
    """``HFLM`` whose log-likelihood scoring computes every shared prompt prefix once."""

    #: Cache layer types whose ``update`` rebinds (never mutates) the stored tensors.
    REUSABLE_LAYERS: tuple[str, ...] = ("DynamicLayer", "DynamicSlidingWindowLayer")

    def __init__(
        self,
        *args: Any,
        prefix_sharing: Any = True,
        min_shared_tokens: Any = 256,
        max_cached_prefixes: Any = 8,
        **kwargs: Any,
    ) -> None:
        self.prefix_sharing = _as_bool("prefix_sharing", prefix_sharing)
        self.min_shared_tokens = _as_positive_int("min_shared_tokens", min_shared_tokens)
        self.max_cached_prefixes = _as_positive_int("max_cached_prefixes", max_cached_prefixes)
        super().__init__(*args, **kwargs)
        self._fallback_reason: str | None = None
        if self.backend != "causal":
            self._fallback_reason = f"a {self.backend} model has no decoder-only prefix to share"
        self._keeps_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters

    # ------------------------------------------------------------------ lm-eval entry point
    def _loglikelihood_tokens(
        self,
        requests: list[Request],
        disable_tqdm: bool = False,
        override_bs: int | None = None,
    ) -> list[tuple[float, bool]]:
        if not self.prefix_sharing or self._fallback_reason is not None or not requests:
            if self.prefix_sharing and self._fallback_reason is not None:
                self._log_fallback_once()
            return super()._loglikelihood_tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)

        inputs = [self._model_input(context, continuation) for _, context, continuation in requests]
        keys = [inp[: len(inp) - len(req[2])] for inp, req in zip(inputs, requests, strict=True)]
        roots, unshared = plan_prefix_groups(
            keys, min_shared_tokens=self.min_shared_tokens, max_cached_prefixes=self.max_cached_prefixes
        )
        results: list[tuple[float, bool] | None] = [None] * len(requests)
        pbar = tqdm(
            total=len(requests),
            disable=(disable_tqdm or (self.rank != 0)),
            desc="Running loglikelihood requests (shared prefixes)",
        )
        rows_per_batch = self._rows_per_batch(override_bs)
        try:
            for root in roots:
                if self._fallback_reason is not None:
                    unshared.extend(i for group in root.walk() for i in group.requests)
                    continue
                self._score_group(root, None, requests, inputs, results, rows_per_batch, pbar)
        except _CacheNotReusable as reason:
            self._fallback_reason = str(reason)
            self._log_fallback_once()
            unshared = [i for i, value in enumerate(results) if value is None]
        if unshared:
            ordinary = super()._loglikelihood_tokens(
                [requests[i] for i in unshared], disable_tqdm=True, override_bs=override_bs
            )
            for i, answer in zip(unshared, ordinary, strict=True):
                results[i] = answer
            pbar.update(len(unshared))
        pbar.close()
        missing = [i for i, value in enumerate(results) if value is None]
        if missing:  # pragma: no cover - a bug in the plan, never a silent gap
            raise RuntimeError(f"prefix scorer left {len(missing)} requests unscored (first: {missing[0]})")
        return [value for value in results if value is not None]

    # ------------------------------------------------------------------ helpers
    def _model_input(self, context: list[int], continuation: list[int]) -> list[int]:
        """The token ids ``HFLM`` feeds the model for one request (same truncation)."""
        if not context or not continuation:
            raise ValueError("log-likelihood requests need a non-empty context and continuation")
        if len(continuation) > self.max_length:
            raise ValueError(
                f"continuation of {len(continuation)} tokens exceeds the model's length {self.max_length}"
            )
        total = len(context) + len(continuation)
        if total > self.max_length + 1:
            eval_logger.warning(
                f"Combined length of context ({len(context)}) and continuation ({len(continuation)}) "
                f"exceeds model's maximum length ({self.max_length}). "
                f"Truncating {total - self.max_length + 1} tokens from the left."
            )
        return (context + continuation)[-(self.max_length + 1) :][:-1]

    def _rows_per_batch(self, override_bs: int | None) -> int:
        if override_bs is not None:
            return int(override_bs)
        if str(self.batch_size).startswith("auto"):
            return int(self.max_batch_size)
        return max(1, int(self.batch_size))

    def _log_fallback_once(self) -> None:
        if not getattr(self, "_fallback_logged", False):
            eval_logger.warning(
                f"lc-hf: prefix sharing is off for this model ({self._fallback_reason}); "
                "scoring every request with the ordinary HFLM path"
            )
            self._fallback_logged = True

    def _forward(self, input_ids: torch.Tensor, cache: Any, keep: int | None) -> Any:
        """One forward pass continuing ``cache`` (``None``: from scratch), as ``HFLM._model_call``."""
        kwargs: dict[str, Any] = {"use_cache": True}
        if cache is not None:
            kwargs["past_key_values"] = cache
        if keep is not None and self._keeps_logits:
            kwargs["logits_to_keep"] = keep
        with (
            torch.no_grad(),
            torch.autocast(
                device_type=self.device.type,
                dtype=self.mixed_precision_dtype,
                enabled=self.mixed_precision_dtype is not None,
            ),
        ):
            return self.model(input_ids, **kwargs)

    def _checked(self, cache: Any) -> Any:
        layers = getattr(cache, "layers", None)
        if layers is None:
            raise _CacheNotReusable(f"its cache {type(cache).__name__} has no per-layer key/value states")
        kinds = {type(layer).__name__ for layer in layers}
        odd = sorted(kinds - set(self.REUSABLE_LAYERS))
        if odd:
            raise _CacheNotReusable(f"its cache has {', '.join(odd)} layers, which update in place")
        return cache

    @staticmethod
    def _view(cache: Any, rows: int) -> Any:
        """A copy of ``cache`` that shares its tensors, expanded to ``rows`` batch rows (no copy).

        Reusable layers rebind ``keys``/``values`` on update (``torch.cat``), so the stored prefix is
        never written to; the shallow copy keeps per-layer counters (a sliding layer's length) apart.
        """
        view = copy.copy(cache)
        view.layers = [copy.copy(layer) for layer in cache.layers]
        for layer in view.layers:
            if getattr(layer, "is_initialized", False) and layer.keys is not None and layer.keys.numel():
                layer.keys = layer.keys.expand(rows, -1, -1, -1)
                layer.values = layer.values.expand(rows, -1, -1, -1)
        return view

    def _extend(self, parent: Any, tokens: tuple[int, ...]) -> Any:
        ids = torch.tensor([list(tokens)], dtype=torch.long, device=self.device)
        out = self._forward(ids, None if parent is None else self._view(parent, 1), keep=1)
        return self._checked(out.past_key_values)

    def _score_group(
        self,
        group: PrefixGroup,
        parent: tuple[Any, int] | None,
        requests: list[Request],
        inputs: list[list[int]],
        results: list[tuple[float, bool] | None],
        rows_per_batch: int,
        pbar: tqdm,
    ) -> None:
        start = 0 if parent is None else parent[1]
        cache = self._extend(None if parent is None else parent[0], group.tokens[start:])
        # One row per distinct suffix (the answer letters of one prompt share their input).
        rows: dict[tuple[int, ...], list[int]] = {}
        for i in group.requests:
            rows.setdefault(tuple(inputs[i][group.length :]), []).append(i)
        ordered = sorted(rows.items(), key=lambda item: -len(item[0]))
        for batch in _chunks(ordered, rows_per_batch):
            self._score_rows(cache, batch, requests, results)
            pbar.update(sum(len(members) for _, members in batch))
        for child in group.children:
            self._score_group(child, (cache, group.length), requests, inputs, results, rows_per_batch, pbar)

    def _score_rows(
        self,
        cache: Any,
        batch: list[tuple[tuple[int, ...], list[int]]],
        requests: list[Request],
        results: list[tuple[float, bool] | None],
    ) -> None:
        width = len(batch[0][0])
        ids = torch.zeros((len(batch), width), dtype=torch.long, device=self.device)
        first_scored = width
        for row, (suffix, members) in enumerate(batch):
            ids[row, : len(suffix)] = torch.tensor(suffix, dtype=torch.long)
            longest = max(len(requests[i][2]) for i in members)
            first_scored = min(first_scored, len(suffix) - longest)
        keep = width - first_scored
        logits = self._forward(ids, self._view(cache, len(batch)), keep=keep).logits
        # Logits cover the last ``logits.shape[1]`` positions (all of them if the model ignored keep).
        offset = width - logits.shape[1]
        for row, (suffix, members) in enumerate(batch):
            for i in members:
                request_str, _, continuation = requests[i]
                end = len(suffix) - offset
                scored = logits[row, end - len(continuation) : end]
                logprobs = F.log_softmax(scored, dim=-1, dtype=self.softmax_dtype)
                target = torch.tensor(continuation, dtype=torch.long, device=logprobs.device)
                greedy = bool((logprobs.argmax(dim=-1) == target).all())
                answer = (float(logprobs.gather(1, target.unsqueeze(1)).sum()), greedy)
                results[i] = answer
                if request_str is not None:
                    self.cache_hook.add_partial("loglikelihood", request_str, answer)


class _CacheNotReusable(RuntimeError):
    """The model's key/value cache cannot be shared between requests."""


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
