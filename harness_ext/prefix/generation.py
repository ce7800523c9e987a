"""``lc-hf``'s greedy generations in batches that mix stop strings and lengths (``mixed_generation``, default on).

lm-eval's ``HFLM.generate_until`` batches only requests whose ``gen_kwargs`` are equal (its ``Collator``
groups by them), so a run whose tasks each have their own ``until`` and ``max_gen_toks`` (every GV
task's first stage in one call) decodes one small batch per task, whatever ``--batch_size`` says.
Here greedy requests whose generation settings differ only in ``until`` and ``max_gen_toks`` share
batches, sorted as ``HFLM`` sorts a group (longest context first). A batch decodes up to its largest
``max_gen_toks`` and ends once every row has met one of its own stop strings (or the end-of-text
token) or its own length; each row is then cut to its own ``max_gen_toks`` tokens and at its own stop
strings, as ``HFLM`` cuts a row. Greedy decoding picks a row's tokens from its own context: its text
depends on its batch mates only through the float rounding any other batch brings (``--batch_size`` too).
On ``HFLM``'s own path: sampling, ``max_length``, ``batch_size=auto``, a thinking-token or non-causal model,
a context ``HFLM`` would truncate (longer than the model's length minus its group's largest ``max_gen_toks``),
and an empty stop string (``HFLM`` ends such a row after one token; ``until=`` is refused: ``models/args.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text
from tqdm import tqdm
from transformers import StoppingCriteria, StoppingCriteriaList

__all__ = ["GreedyRow", "MixedStops", "generate_mixed"]

#: ``HFLM.generate_until`` (the stock path for the requests kept off the mixed batches).
StockGenerate = Callable[[list[Any], bool], list[str]]


@dataclass(frozen=True)
class GreedyRow:
    """One greedy request: where it is in the call, its context, its own stop strings and length."""

    index: int
    context: str
    gen_kwargs: dict[str, Any]
    until: list[str]
    max_gen_toks: int
    length: int


def generate_mixed(lm: Any, requests: Sequence[Any], disable_tqdm: bool, stock: StockGenerate) -> list[str]:
    """Every request's generation: greedy ones in mixed batches, the others by ``stock``, in request order."""
    groups, alone = _plan(lm, requests)
    results: dict[int, str] = {}
    if alone:
        results.update(zip(alone, stock([requests[i] for i in alone], disable_tqdm), strict=True))
    pbar = tqdm(total=len(requests) - len(alone), disable=disable_tqdm or lm.rank != 0,
                desc="Running generate_until requests (mixed stops and lengths)")  # fmt: skip
    for settings, rows in groups:
        for chunk in _batches(rows, max(1, int(lm.batch_size))):
            for row, text in zip(chunk, _generate_batch(lm, chunk, dict(settings)), strict=True):
                results[row.index] = text
                lm.cache_hook.add_partial("generate_until", (row.context, row.gen_kwargs), text)
            pbar.update(len(chunk))
    pbar.close()
    if len(results) != len(requests):  # pragma: no cover - a bug of the plan
        raise RuntimeError(f"mixed generation left {len(requests) - len(results)} requests without an answer")
    return [results[i] for i in range(len(requests))]


def _batches(rows: list[GreedyRow], size: int) -> list[list[GreedyRow]]:
    """``rows`` in ``HFLM``'s order within a group (longest context first), ``size`` at a time."""
    ordered = sorted(rows, key=lambda row: (-row.length, row.context))
    return [ordered[start : start + size] for start in range(0, len(ordered), size)]


def _plan(lm: Any, requests: Sequence[Any]) -> tuple[list[tuple[dict[str, Any], list[GreedyRow]]], list[int]]:
    """Greedy rows grouped by their settings other than ``until`` / ``max_gen_toks``; the others' indices."""
    if lm.backend != "causal" or str(lm.batch_size).startswith("auto") or lm.think_end_token is not None:
        return [], list(range(len(requests)))
    eos = lm.tok_decode(lm.eot_token_id, skip_special_tokens=False)
    groups: dict[str, tuple[dict[str, Any], list[GreedyRow]]] = {}
    alone: list[int] = []
    for index, request in enumerate(requests):
        greedy = _greedy_row(lm, index, request, eos)
        if greedy is None:
            alone.append(index)
        else:
            groups.setdefault(repr(sorted(greedy[0].items())), (greedy[0], []))[1].append(greedy[1])
    planned = [_fitting(lm, settings, rows, alone) for settings, rows in groups.values()]
    return [(settings, rows) for settings, rows in planned if rows], sorted(alone)


def _fitting(
    lm: Any, settings: dict[str, Any], rows: list[GreedyRow], alone: list[int]
) -> tuple[dict[str, Any], list[GreedyRow]]:
    """The rows of a group whose context no batch of it truncates; the others' indices go to ``alone``
    (``HFLM``'s path, which truncates each context to the model's length minus its group's ``max_gen_toks``)."""
    room = lm.max_length - max(row.max_gen_toks for row in rows)
    alone += [row.index for row in rows if row.length > room]
    return settings, [row for row in rows if row.length <= room]


def _greedy_row(lm: Any, index: int, request: Any, eos: str) -> tuple[dict[str, Any], GreedyRow] | None:
    """A greedy request's other settings and its row (``HFLM``'s normalisation), or ``None`` (sampling, ``max_length``)."""
    context, gen_kwargs = request.args
    kwargs = normalize_gen_kwargs(gen_kwargs, lm.max_gen_toks)
    until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
    max_gen_toks = int(kwargs.pop("max_gen_toks"))
    if kwargs.get("do_sample") or kwargs.get("temperature", 0.0) != 0.0 or "max_length" in kwargs or "" in until:
        return None  # an empty stop string: HFLM's criterion ends the row after one token, so HFLM's own path
    return kwargs, GreedyRow(index, context, gen_kwargs, until, max_gen_toks, len(lm.tok_encode(context)))


class MixedStops(StoppingCriteria):
    """Ends the batch once every row has met one of its stop strings, the end-of-text token or its length."""

    def __init__(self, lm: Any, rows: Sequence[GreedyRow], start: int) -> None:
        self.lm, self.rows, self.start = lm, list(rows), start
        self.done = [False] * len(rows)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        generated = input_ids[:, self.start :]
        for i, row in enumerate(self.rows):
            if not self.done[i]:
                self.done[i] = self._row_done(row, generated[i])
        return torch.full((input_ids.shape[0],), all(self.done), dtype=torch.bool, device=input_ids.device)

    def _row_done(self, row: GreedyRow, tokens: torch.Tensor) -> bool:
        ids = tokens.tolist()
        if len(ids) >= row.max_gen_toks or self.lm.eot_token_id in ids:
            return True
        text = self.lm.tok_decode(ids)
        return any(stop and stop in text for stop in row.until)


def _generate_batch(lm: Any, rows: Sequence[GreedyRow], settings: dict[str, Any]) -> list[str]:
    """One batch of greedy rows, each cut to its own length and stop strings (as ``HFLM`` cuts a row)."""
    longest = max(row.max_gen_toks for row in rows)
    context, attention = lm.tok_batch_encode(
        [row.context for row in rows], left_truncate_len=lm.max_length - longest, truncation=lm.truncation
    )
    context, attention = context.to(lm.device), attention.to(lm.device)
    width = context.shape[1]
    settings.pop("temperature", None)  # greedy: HFLM._model_generate drops it too
    settings["do_sample"] = False
    with torch.autocast(
        device_type=lm.device.type, dtype=lm.mixed_precision_dtype, enabled=lm.mixed_precision_dtype is not None
    ):
        out = lm.model.generate(
            input_ids=context,
            attention_mask=attention,
            max_length=width + longest,
            stopping_criteria=StoppingCriteriaList([MixedStops(lm, rows, width)]),
            pad_token_id=lm.tokenizer.pad_token_id,
            use_cache=True,
            **settings,
        )
    texts = []
    for row, tokens in zip(rows, out.tolist(), strict=True):
        text = lm.tok_decode(tokens[width:][: row.max_gen_toks])
        texts.append(postprocess_generated_text(generation=text, stop=row.until, think_end_token=None))
    return texts
