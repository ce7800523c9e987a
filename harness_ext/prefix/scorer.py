"""``lc-hf``: lm-eval's ``hf`` model with log-likelihood scoring that computes each shared prefix once.

The pairwise prompts repeat long text (chat header, instructions, article, option A), and ``HFLM``
runs one full forward pass per context. This backend keeps everything of ``HFLM`` and replaces only
``_loglikelihood_tokens``: a radix tree over the requests' inputs (``trie.py``) picks the
prefixes worth caching, each prefix's key/value cache is computed once and the requests under it are
scored on their own suffixes, packed side by side into rows under an explicit attention mask
(``batches.py``: :class:`~.batches.PackedRow`). Results equal ``HFLM``'s up to float rounding
(float32: within 1e-4). A model whose cache layers may mutate stored tensors (static, quantised,
hybrid, encoder-decoder) falls back to the ordinary path with one log line: never a silent
approximation. Model arguments: ``prefix_sharing`` (default true), ``min_shared_tokens`` (256),
``max_cached_prefixes`` (8, bounds memory) and ``mixed_generation`` (true: greedy generations whose
stop strings and lengths differ share batches, ``generation.py``; false: ``HFLM``'s own batching).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F
from lm_eval.models.huggingface import HFLM
from tqdm import tqdm

from logic_consistency.harness_ext.prefix.backend import LC_HF
from logic_consistency.harness_ext.prefix.batches import (
    CachedRows,
    PackedRow,
    batches,
    longest_first,
    packed_inputs,
    packed_passes,
    right_padded,
    select_rows,
    suffix_leaves,
)
from logic_consistency.harness_ext.prefix.generation import generate_mixed
from logic_consistency.harness_ext.prefix.trie import PrefixGroup, plan_prefix_groups

eval_logger = logging.getLogger(__name__)

#: One ``HFLM`` log-likelihood request: ((context, continuation) or None, context ids, continuation ids).
Request = tuple[Any, list[int], list[int]]


@dataclass
class _Scoring:
    """One scoring call's requests, their model inputs, the answers so far, the rows a pass may hold and
    its progress bar: what every step of the walk down the prefix tree reads or fills in."""

    requests: list[Request]
    inputs: list[list[int]]
    results: list[tuple[float, bool] | None]
    rows_per_batch: int
    pbar: tqdm


class PrefixSharingHFLM(HFLM):  # type: ignore[misc]  # lm-eval ships no type information
    """``HFLM`` whose log-likelihood scoring computes every shared prompt prefix once."""

    #: Cache layer types whose ``update`` rebinds (never mutates) the stored tensors.
    REUSABLE_LAYERS: tuple[str, ...] = ("DynamicLayer", "DynamicSlidingWindowLayer")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs = LC_HF.check(kwargs)  # the declared model arguments (prefix/backend.py), before anything is loaded
        defaults = LC_HF.defaults()
        self.prefix_sharing: bool = kwargs.pop("prefix_sharing", defaults["prefix_sharing"])
        self.min_shared_tokens: int = kwargs.pop("min_shared_tokens", defaults["min_shared_tokens"])
        self.max_cached_prefixes: int = kwargs.pop("max_cached_prefixes", defaults["max_cached_prefixes"])
        self.mixed_generation: bool = kwargs.pop("mixed_generation", defaults["mixed_generation"])
        super().__init__(*args, **kwargs)
        self._fallback_reason: str | None = None
        if self.backend != "causal":
            self._fallback_reason = f"a {self.backend} model has no decoder-only prefix to share"
        # a LoRA adapter (peft=) wraps the model in a PeftModel whose forward takes **kwargs and passes
        # them on: what the pass may be given is what the wrapped model's forward names
        inner = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        parameters = inspect.signature(inner.forward).parameters
        self._keeps_logits = "logits_to_keep" in parameters
        # transformers 5 renames the KV cache's argument and output field to ``cache`` (``past_key_values``
        # still works but warns on every first run); older models name it ``past_key_values``
        self._cache_key = "cache" if "cache" in parameters else "past_key_values"
        # Holes mode batches sibling prefixes of different lengths (padding slots hidden by the
        # attention mask, positions given explicitly). A sliding-window layer counts slots, not
        # positions, so a model with one extends and scores one prefix per forward pass instead.
        self._holes_ok = "position_ids" in parameters and not _has_sliding_window(self.config)
        # Packed scoring (several suffixes of one prefix side by side in one row) hands the model its
        # own 4D attention mask, which the sdpa and eager attention take as given.
        self._packs = self._holes_ok and getattr(inner.config, "_attn_implementation", None) in ("sdpa", "eager")
        duplicated = duplicated_ranks_warning(self.world_size, os.environ)
        if duplicated:
            eval_logger.warning(duplicated)

    # ------------------------------------------------------------------ lm-eval entry point
    # lm-eval hook: overrides a private upstream method; declared in prefix/backend.py (LC_HF.hooks), pinned with lm_eval_hooks.LM_EVAL_HOOKS.
    def _loglikelihood_tokens(
        self,
        requests: list[Request],
        disable_tqdm: bool = False,
        override_bs: int | None = None,
    ) -> list[tuple[float, bool]]:
        if not self._shares_prefixes(requests):
            return self._stock_scores(requests, disable_tqdm, override_bs)
        inputs = [self._model_input(context, continuation) for _, context, continuation in requests]
        keys = [inp[: len(inp) - len(req[2])] for inp, req in zip(inputs, requests, strict=True)]
        rows_per_batch = self._rows_per_batch(override_bs)
        roots, unshared = plan_prefix_groups(
            keys,
            min_shared_tokens=self._threshold(rows_per_batch),
            max_cached_prefixes=self.max_cached_prefixes,
            lone_min_shared_tokens=self.min_shared_tokens,  # the prefix common to all: a pass of its own
        )
        pbar = tqdm(
            total=len(requests),
            disable=(disable_tqdm or (self.rank != 0)),
            desc="Running loglikelihood requests (shared prefixes)",
        )
        work = _Scoring(requests, inputs, [None] * len(requests), rows_per_batch, pbar)
        if not self._score_shared(roots, work):
            unshared = [i for i, value in enumerate(work.results) if value is None]  # the cache proved not reusable
        self._score_unshared(unshared, work, override_bs)
        pbar.close()
        return _complete(work.results)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """``HFLM``'s generations; with ``mixed_generation`` greedy requests whose stop strings and lengths
        differ share batches (:mod:`.generation`)."""

        def stock(chosen: list[Any], quiet: bool) -> list[str]:
            return cast(list[str], HFLM.generate_until(self, chosen, disable_tqdm=quiet))

        if not self.mixed_generation:
            return stock(requests, disable_tqdm)
        return generate_mixed(self, requests, disable_tqdm, stock)

    def _shares_prefixes(self, requests: list[Request]) -> bool:
        """Whether these requests take the prefix-sharing path (said once when the model cannot)."""
        if self.prefix_sharing and self._fallback_reason is not None:
            self._log_fallback_once()
        return bool(self.prefix_sharing and self._fallback_reason is None and requests)

    def _stock_scores(
        self, requests: list[Request], disable_tqdm: bool, override_bs: int | None
    ) -> list[tuple[float, bool]]:
        """``HFLM``'s own scoring of ``requests``."""
        return cast(
            list[tuple[float, bool]],
            super()._loglikelihood_tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs),
        )

    def _score_shared(self, roots: list[PrefixGroup], work: _Scoring) -> bool:
        """Score every request under the planned prefix groups; ``False`` when the model's cache proved
        not reusable (then prefix sharing is off for this model, and what is left is scored the stock way)."""
        try:
            top = [(0, root) for root in roots]  # longest first, as the children below
            for chunk in longest_first(top, work.rows_per_batch, lambda item: item[1].length, holes=self._holes_ok):
                self._score_group(self._extend(None, chunk), work)
        except _CacheNotReusable as reason:
            self._fallback_reason = str(reason)
            self._log_fallback_once()
            return False
        return True

    def _score_unshared(self, unshared: list[int], work: _Scoring, override_bs: int | None) -> None:
        """The requests no cached prefix serves, scored the stock way."""
        if not unshared:
            return
        ordinary = self._stock_scores([work.requests[i] for i in unshared], True, override_bs)
        for i, answer in zip(unshared, ordinary, strict=True):
            work.results[i] = answer
        work.pbar.update(len(unshared))

    # ------------------------------------------------------------------ helpers
    def _model_input(self, context: list[int], continuation: list[int]) -> list[int]:
        """The token ids ``HFLM`` feeds the model for one request (same truncation)."""
        if not context or not continuation:
            raise ValueError("log-likelihood requests need a non-empty context and continuation")
        if len(continuation) > self.max_length:
            raise ValueError(f"continuation of {len(continuation)} tokens exceeds the model's length {self.max_length}")
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

    def _threshold(self, rows_per_batch: int) -> int:
        """Tokens a cached prefix must save. In holes mode sibling prefixes share one forward pass
        (up to ``rows_per_batch`` of them), so each needs only its share of that pass's fixed cost."""
        if self._holes_ok:
            return max(1, self.min_shared_tokens // rows_per_batch)
        return self.min_shared_tokens

    def _log_fallback_once(self) -> None:
        if not getattr(self, "_fallback_logged", False):
            eval_logger.warning(
                f"lc-hf: prefix sharing is off for this model ({self._fallback_reason}); "
                "scoring every request with the ordinary HFLM path"
            )
            self._fallback_logged = True

    def _forward(
        self,
        input_ids: torch.Tensor,
        cache: Any,
        keep: int | None,
        attention: CachedRows | None = None,
        rows: list[int] | None = None,
        lengths: list[int] | None = None,
    ) -> Any:
        """One forward pass continuing ``cache`` (``None``: from scratch), as ``HFLM._model_call``.

        With ``attention`` (holes mode) the batch rows continue cache rows ``rows`` of it: the
        attention mask hides the padding slots those rows carry and ``position_ids`` continue each
        row's own length, so every real token sees exactly the tokens it sees in a full pass.
        """
        kwargs: dict[str, Any] = {"use_cache": True}
        if cache is not None:
            kwargs[self._cache_key] = cache
        if keep is not None and self._keeps_logits:
            kwargs["logits_to_keep"] = keep
        if self._holes_ok and lengths is not None:
            width = input_ids.shape[1]
            fresh = torch.arange(width, device=self.device).unsqueeze(0) < torch.tensor(
                lengths, device=self.device
            ).unsqueeze(1)
            if attention is None or rows is None:
                kwargs["attention_mask"] = fresh.long()
                start = torch.zeros(len(lengths), dtype=torch.long, device=self.device)
            else:
                index = torch.tensor(rows, dtype=torch.long, device=self.device)
                kwargs["attention_mask"] = torch.cat([attention.valid[index], fresh], dim=1).long()
                start = attention.next_position[index]
            kwargs["position_ids"] = start.unsqueeze(1) + torch.arange(width, device=self.device).unsqueeze(0)
        with self._inference():
            return self.model(input_ids, **kwargs)

    @contextlib.contextmanager
    def _inference(self) -> Iterator[None]:
        """No gradients, and ``HFLM``'s autocast where ``mixed_precision_dtype`` is set (as ``_model_call``)."""
        with (
            torch.no_grad(),
            torch.autocast(
                device_type=self.device.type,
                dtype=self.mixed_precision_dtype,
                enabled=self.mixed_precision_dtype is not None,
            ),
        ):
            yield

    def _checked(self, cache: Any) -> Any:
        layers = getattr(cache, "layers", None)
        if layers is None:
            raise _CacheNotReusable(f"its cache {type(cache).__name__} has no per-layer key/value states")
        kinds = {type(layer).__name__ for layer in layers}
        odd = sorted(kinds - set(self.REUSABLE_LAYERS))
        if odd:
            raise _CacheNotReusable(f"its cache has {', '.join(odd)} layers, which update in place")
        return cache

    def _extend(self, parent: CachedRows | None, items: list[tuple[int, PrefixGroup]]) -> CachedRows:
        """Compute the caches of ``items`` (parent row, group) in one forward pass."""
        edges = [group.tokens[(0 if parent is None else parent.groups[row].length) :] for row, group in items]
        rows = [row for row, _ in items]
        ids = right_padded(edges, self.device)
        cache = None if parent is None else select_rows(parent.cache, rows)
        out = self._forward(ids, cache, keep=1, attention=parent, rows=rows, lengths=[len(e) for e in edges])
        self._checked(out[self._cache_key])
        fresh = torch.arange(ids.shape[1], device=self.device).unsqueeze(0) < torch.tensor(
            [len(e) for e in edges], device=self.device
        ).unsqueeze(1)
        if parent is None:
            valid, start = fresh, torch.zeros(len(items), dtype=torch.long, device=self.device)
        else:
            index = torch.tensor(rows, dtype=torch.long, device=self.device)
            valid, start = torch.cat([parent.valid[index], fresh], dim=1), parent.next_position[index]
        lengths = torch.tensor([len(e) for e in edges], dtype=torch.long, device=self.device)
        return CachedRows(out[self._cache_key], valid, start + lengths, [group for _, group in items])

    def _score_group(self, rows: CachedRows, work: _Scoring) -> None:
        """Score every request under the cached prefixes of ``rows``, then descend to their children."""
        leaves = suffix_leaves(rows.groups, work.inputs)
        if self._packs and leaves:
            # A packed row holds at most as many suffix tokens as the longest input; a pass at most
            # ``rows_per_batch`` rows, so no more new tokens than a stock pass of the same batch size.
            capacity = max(len(work.inputs[i]) for members in leaves.values() for i in members)
            packed = [(row, suffix, members) for (row, suffix), members in leaves.items()]
            for passed in packed_passes(packed, capacity, work.rows_per_batch):
                self._score_packed(rows, passed, work)
                work.pbar.update(sum(len(members) for row in passed for _, members in row.segments))
        else:  # a batch continues one cache row only
            ordered = sorted(leaves.items(), key=lambda item: (item[0][0], -len(item[0][1])))
            for batch in batches(ordered, work.rows_per_batch, same_row=True):
                self._score_rows(rows, batch, work)
                work.pbar.update(sum(len(members) for _, members in batch))
        for chunk in self._child_passes(rows, work.rows_per_batch):
            self._score_group(self._extend(rows, chunk), work)

    def _child_passes(self, rows: CachedRows, rows_per_batch: int) -> Iterator[list[tuple[int, PrefixGroup]]]:
        """The child prefixes of ``rows`` as ``(parent row, group)``, in the passes that extend them.

        Longest edges first, as HFLM sorts its requests: siblings in one pass have similar lengths, so
        little of the pass is padding; one child a pass where a sliding window forbids holes.
        """
        children = [(row, child) for row, group in enumerate(rows.groups) for child in group.children]
        edge = {id(child): child.length - rows.groups[row].length for row, child in children}
        return longest_first(children, rows_per_batch, lambda item: edge[id(item[1])], holes=self._holes_ok)

    def _score_packed(self, rows: CachedRows, batch: list[PackedRow], work: _Scoring) -> None:
        """Score the segments of ``batch`` (:class:`.batches.PackedRow`) in one forward pass."""
        cache_rows = [row.cache_row for row in batch]
        ids, offset, seen, scored = packed_inputs(batch, rows.valid[torch.tensor(cache_rows)].cpu())
        longest = {members: max(len(work.requests[i][2]) for i in members) for _, _, members in scored}
        keep = sorted({end - p for _, end, members in scored for p in range(1, longest[members] + 1)})
        column = {position: k for k, position in enumerate(keep)}
        logits = self._forward_packed(
            ids.to(self.device),
            select_rows(rows.cache, cache_rows),
            seen.to(self.device),
            (rows.next_position[torch.tensor(cache_rows)].cpu().unsqueeze(1) + offset).to(self.device),
            keep,
        )
        for b, end, members in scored:
            for i in members:
                length = len(work.requests[i][2])
                if logits.shape[1] == len(keep):
                    positions = [column[p] for p in range(end - length, end)]
                else:  # the model ignored logits_to_keep: every position's logits
                    positions = list(range(end - length, end))
                self._answer(i, logits[b, positions], work)

    def _forward_packed(
        self, ids: torch.Tensor, cache: Any, seen: torch.Tensor, position_ids: torch.Tensor, keep: list[int]
    ) -> torch.Tensor:
        """One forward pass of packed rows: an explicit ``[rows, 1, width, cache + width]`` attention mask
        (additive, in the compute dtype, the form every attention implementation takes as given)."""
        dtype = self.mixed_precision_dtype or self.model.dtype
        mask = torch.zeros(seen.shape, dtype=dtype, device=self.device).masked_fill(~seen, torch.finfo(dtype).min)
        kwargs: dict[str, Any] = {
            "use_cache": True,
            self._cache_key: cache,
            "attention_mask": mask.unsqueeze(1),
            "position_ids": position_ids,
        }
        if self._keeps_logits:
            kwargs["logits_to_keep"] = torch.tensor(keep, dtype=torch.long, device=self.device)
        with self._inference():
            return cast(torch.Tensor, self.model(ids, **kwargs).logits)

    def _answer(self, i: int, scored: torch.Tensor, work: _Scoring) -> None:
        """Request ``i``'s answer from the logits of the positions that predict its continuation."""
        request_str, _, continuation = work.requests[i]
        logprobs = F.log_softmax(scored, dim=-1, dtype=self.softmax_dtype)
        target = torch.tensor(continuation, dtype=torch.long, device=logprobs.device)
        greedy = bool((logprobs.argmax(dim=-1) == target).all())
        answer = (float(logprobs.gather(1, target.unsqueeze(1)).sum()), greedy)
        work.results[i] = answer
        if request_str is not None:
            self.cache_hook.add_partial("loglikelihood", request_str, answer)

    def _score_rows(
        self, rows: CachedRows, batch: list[tuple[tuple[int, tuple[int, ...]], list[int]]], work: _Scoring
    ) -> None:
        """Score ``batch`` (one suffix a row, right-padded) on the cache rows it continues."""
        suffixes = [suffix for (_, suffix), _ in batch]
        cache_rows = [row for (row, _), _ in batch]
        width = max(len(suffix) for suffix in suffixes)
        ids = right_padded(suffixes, self.device)
        first_scored = min(
            len(suffix) - max(len(work.requests[i][2]) for i in members) for ((_, suffix), members) in batch
        )
        logits = self._forward(
            ids,
            select_rows(rows.cache, cache_rows),
            keep=width - first_scored,
            attention=rows,
            rows=cache_rows,
            lengths=[len(suffix) for suffix in suffixes],
        ).logits
        # Logits cover the last ``logits.shape[1]`` positions (all of them if the model ignored keep).
        offset = width - logits.shape[1]
        for row, ((_, suffix), members) in enumerate(batch):
            for i in members:
                end = len(suffix) - offset
                self._answer(i, logits[row, end - len(work.requests[i][2]) : end], work)


def _complete(results: list[tuple[float, bool] | None]) -> list[tuple[float, bool]]:
    """Every request's answer, in request order; a request left unscored is a bug of the plan, never a silent gap."""
    missing = [i for i, value in enumerate(results) if value is None]
    if missing:  # pragma: no cover - a bug in the plan
        raise RuntimeError(f"prefix scorer left {len(missing)} requests unscored (first: {missing[0]})")
    return [value for value in results if value is not None]


def duplicated_ranks_warning(world_size: int, environ: Mapping[str, str]) -> str | None:
    """The warning for a multi-process launch that lm-eval does not split across the processes.

    lm-eval 0.4.13's ``HFLM`` sets up data parallelism only when it sees more than one accelerator
    device (``huggingface.py``: ``elif gpus > 1``). Launched as N processes on CPU
    (``torchrun --nproc_per_node N``; ``accelerate launch --cpu --num_processes N`` starts one), each
    process gets world size 1 and runs the whole evaluation: the same scores, N times the work.

    Returns:
        The warning, or ``None`` when the launch and the backend agree.
    """
    try:
        launched = int(environ.get("WORLD_SIZE") or 1)
    except ValueError:
        return None
    if launched <= 1 or world_size > 1:
        return None
    return (
        f"{launched} processes were launched (WORLD_SIZE={launched}), but lm-eval's hf backend splits the "
        "documents across processes only over several GPUs (or other accelerator devices): every process "
        "will run the whole evaluation. On CPU, run one process."
    )


def _has_sliding_window(config: Any) -> bool:
    """Whether any attention layer is local (sliding or chunked); unknown layouts count as local."""
    text = getattr(config, "get_text_config", lambda: config)()
    layer_types = [str(kind) for kind in (getattr(text, "layer_types", None) or [])]
    if layer_types:
        return any("sliding" in kind or "chunk" in kind for kind in layer_types)
    return bool(getattr(text, "sliding_window", None)) and getattr(text, "use_sliding_window", True) is not False


class _CacheNotReusable(RuntimeError):
    """The model's key/value cache cannot be shared between requests."""
