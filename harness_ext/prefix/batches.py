"""How the prefix scorer lays its work out in model passes: cached prefixes as the batch rows of one
key/value cache, right-padded inputs, and batches bounded by size, cache row and padding.

``scorer.py`` walks the prefix tree (``trie.py``) with these: a level of cached
prefixes is a :class:`CachedRows` (one model cache whose batch row ``k`` holds prefix ``k``), a
batch that continues some of those rows reads them through :func:`select_rows` (a view: the stored
prefix is never written), and :func:`batches` / :func:`padding_bounded` / :func:`chunks` cut the
requests and the child prefixes into model passes; :func:`packed_rows` lays the suffixes of one
prefix side by side in one row (each seeing only its prefix and itself: the scorer's mask).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from logic_consistency.harness_ext.prefix.trie import PrefixGroup

__all__ = [
    "PADDING_BUDGET",
    "WIDTH_CANDIDATES",
    "CachedRows",
    "PackedRow",
    "batches",
    "chunks",
    "longest_first",
    "packed_inputs",
    "packed_passes",
    "packed_rows",
    "padding_bounded",
    "right_padded",
    "select_rows",
    "suffix_leaves",
]


@dataclass
class CachedRows:
    """Cached prefixes held as the batch rows of one model cache.

    Attributes:
        cache: The model's cache; batch row ``k`` holds the prefix of ``groups[k]``.
        valid: ``[rows, cache length]``, false at padding slots (holes mode only has any).
        next_position: Per row, the position id of the next token (the prefix's real length).
        groups: The prefix group of each row.
    """

    cache: Any
    valid: torch.Tensor
    next_position: torch.Tensor
    groups: list[PrefixGroup]


def right_padded(sequences: list[Any], device: Any) -> torch.Tensor:
    """Token id sequences as one ``[rows, longest]`` tensor, zero-padded on the right."""
    ids = torch.zeros((len(sequences), max(len(s) for s in sequences)), dtype=torch.long, device=device)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(list(sequence), dtype=torch.long)
    return ids


#: Padding tokens one extension pass may carry before a new pass is cheaper (about a pass's fixed
#: cost in tokens on 2 CPU cores; measured with scripts/bench_scoring.py).
PADDING_BUDGET = 128

#: Row widths :func:`packed_passes` tries (each a packing of the leaves: bounded so that planning stays
#: cheap beside the passes it plans).
WIDTH_CANDIDATES = 32


def padding_bounded(items: list[Any], size: int, length: Any) -> Iterator[list[Any]]:
    """Chunks of at most ``size`` items (sorted longest first) whose padding stays within budget."""
    batch: list[Any] = []
    padding = 0
    for item in items:
        extra = length(batch[0]) - length(item) if batch else 0
        if batch and (len(batch) == size or padding + extra > PADDING_BUDGET):
            yield batch
            batch, padding, extra = [], 0, 0
        batch.append(item)
        padding += extra
    if batch:
        yield batch


def longest_first(items: list[Any], size: int, length: Any, *, holes: bool) -> Iterator[list[Any]]:
    """Prefixes to extend, longest ``length`` first (as HFLM sorts its requests): with ``holes`` in
    :func:`padding_bounded` passes of at most ``size``, so that siblings of one pass have similar lengths;
    without (a sliding window forbids padding slots in a cache), one a pass."""
    ordered = sorted(items, key=lambda item: -length(item))
    return padding_bounded(ordered, size, length) if holes else chunks(ordered, 1)


def batches(items: list[Any], size: int, *, same_row: bool) -> Iterator[list[Any]]:
    """Chunks of ``size``; with ``same_row`` a chunk never mixes cache rows (``item[0][0]``)."""
    batch: list[Any] = []
    for item in items:
        if batch and (len(batch) == size or (same_row and item[0][0] != batch[0][0][0])):
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch


def select_rows(cache: Any, rows: list[int]) -> Any:
    """A cache whose batch row ``k`` is row ``rows[k]`` of ``cache``; the stored prefix is never written.

    Reusable layers rebind ``keys``/``values`` on update (``torch.cat``), so the shallow copy's
    updates leave ``cache`` as it was; it keeps per-layer counters (a sliding layer's length)
    apart. One repeated row is an expanded view (no copy).
    """
    view = copy.copy(cache)
    view.layers = [copy.copy(layer) for layer in cache.layers]
    same = all(row == rows[0] for row in rows)
    index = torch.tensor(rows, dtype=torch.long)
    for layer in view.layers:
        if getattr(layer, "is_initialized", False) and layer.keys is not None and layer.keys.numel():
            if same:
                layer.keys = layer.keys[rows[0] : rows[0] + 1].expand(len(rows), -1, -1, -1)
                layer.values = layer.values[rows[0] : rows[0] + 1].expand(len(rows), -1, -1, -1)
            else:
                layer.keys = layer.keys.index_select(0, index.to(layer.keys.device))
                layer.values = layer.values.index_select(0, index.to(layer.values.device))
    return view


@dataclass(frozen=True)
class PackedRow:
    """Suffixes that continue one cached prefix side by side in one batch row.

    Each suffix (a segment) sees its cached prefix and its own earlier tokens, never another segment
    (the scorer's attention mask), so the prefix is attended once per row rather than copied once per
    suffix, and a pass holds as many suffix tokens as a stock pass holds request tokens.

    Attributes:
        cache_row: The :class:`CachedRows` row every segment continues.
        segments: Per segment, its tokens and the requests scored on them.
    """

    cache_row: int
    segments: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]

    @property
    def width(self) -> int:
        """Tokens in the row (every segment's, side by side)."""
        return sum(len(tokens) for tokens, _ in self.segments)


def packed_rows(leaves: list[tuple[int, tuple[int, ...], list[int]]], capacity: int) -> list[PackedRow]:
    """``(cache row, suffix, requests)`` leaves packed into rows of at most ``capacity`` tokens each.

    First fit, longest suffix first, within each cache row (a suffix longer than ``capacity`` gets a row
    of its own); the rows come out widest first, so a pass of consecutive rows carries little padding.
    """
    if capacity < 1:
        raise ValueError(f"capacity must be >= 1, got {capacity}")
    open_rows: dict[int, list[tuple[list[int], list[tuple[tuple[int, ...], tuple[int, ...]]]]]] = {}
    for cache_row, suffix, members in sorted(leaves, key=lambda leaf: (leaf[0], -len(leaf[1]), leaf[1])):
        rows = open_rows.setdefault(cache_row, [])
        room = next((row for row in rows if row[0][0] + len(suffix) <= capacity), None)
        if room is None:
            room = ([0], [])
            rows.append(room)
        room[0][0] += len(suffix)
        room[1].append((suffix, tuple(members)))
    packed = [PackedRow(row, tuple(segments)) for row, rows in open_rows.items() for _, segments in rows]
    return sorted(packed, key=lambda row: (-row.width, row.cache_row))


def packed_passes(
    leaves: list[tuple[int, tuple[int, ...], list[int]]], capacity: int, rows_per_batch: int
) -> list[list[PackedRow]]:
    """The passes that score ``leaves`` packed (:func:`packed_rows`), at most ``rows_per_batch`` rows each.

    A pass is as wide as its widest row, so rows packed up to ``capacity`` beside narrow ones are mostly
    padding. The row width is chosen among the whole multiples of the suffixes' lengths from the longest
    suffix up to ``capacity`` (at most :data:`WIDTH_CANDIDATES` of them, evenly spread): the one whose passes
    hold the fewest token slots (rows x width), each pass counted with its fixed cost of
    :data:`PADDING_BUDGET` tokens. The width changes float rounding only: each segment sees its own
    prefix and itself whatever row it is in.
    """
    widths = candidate_widths({len(suffix) for _, suffix, _ in leaves}, capacity)
    passes_by_width = (list(chunks(packed_rows(leaves, width), rows_per_batch)) for width in widths)
    # min keeps the first of equally cheap widths: the narrowest
    return min(passes_by_width, key=lambda passes: sum(len(rows) * rows[0].width + PADDING_BUDGET for rows in passes))


def candidate_widths(lengths: set[int], capacity: int) -> list[int]:
    """The packed row widths :func:`packed_passes` tries for suffixes of ``lengths``: the whole multiples of
    each length from the longest suffix up to ``capacity`` (and ``capacity`` itself, or the longest suffix
    where it is longer), ascending, at most :data:`WIDTH_CANDIDATES` of them, evenly spread."""
    longest = max(lengths)
    top = max(capacity, longest)
    widths = sorted({top} | {k * n for n in lengths for k in range(-(-longest // n), top // n + 1)})
    if len(widths) > WIDTH_CANDIDATES:
        widths = [widths[k * (len(widths) - 1) // (WIDTH_CANDIDATES - 1)] for k in range(WIDTH_CANDIDATES)]
    return widths


def packed_inputs(
    batch: list[PackedRow], valid: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[tuple[int, int, tuple[int, ...]]]]:
    """The model inputs of a pass of packed rows, on the CPU.

    Args:
        batch: The pass's rows.
        valid: ``[rows, cache length]``: the real (not padding) cache slots of each row's prefix.

    Returns:
        ``(ids, offset, seen, scored)``: the ``[rows, width]`` token ids (right-padded with 0); each
        token's position within its own segment (the position ids continue the prefix from there); the
        ``[rows, width, cache length + width]`` mask of what each token sees (its prefix's real slots and
        its own segment up to itself; padding sees the prefix only: finite values nobody reads, never a
        row of nothing, which would be NaN); and per segment ``(row, end, requests)``.
    """
    width = max(row.width for row in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    offset = torch.zeros((len(batch), width), dtype=torch.long)
    segment = torch.full((len(batch), width), -1, dtype=torch.long)  # -1: padding
    scored: list[tuple[int, int, tuple[int, ...]]] = []
    for b, row in enumerate(batch):
        start = 0
        for k, (tokens, members) in enumerate(row.segments):
            end = start + len(tokens)
            ids[b, start:end] = torch.tensor(tokens, dtype=torch.long)
            offset[b, start:end] = torch.arange(len(tokens))
            segment[b, start:end] = k
            scored.append((b, end, members))
            start = end
    causal = torch.ones((width, width), dtype=torch.bool).tril()
    own = (segment.unsqueeze(2) == segment.unsqueeze(1)) & causal & (segment >= 0).unsqueeze(2)
    seen = torch.cat([valid.unsqueeze(1).expand(-1, width, -1), own], dim=2)
    return ids, offset, seen, scored


def suffix_leaves(groups: list[PrefixGroup], inputs: list[list[int]]) -> dict[tuple[int, tuple[int, ...]], list[int]]:
    """The requests under the cached prefixes ``groups`` (cache rows, in order), by (cache row, suffix):
    one model row per distinct suffix, which the answer letters of one prompt share."""
    leaves: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    for row, group in enumerate(groups):
        for i in group.requests:
            leaves.setdefault((row, tuple(inputs[i][group.length :])), []).append(i)
    return leaves


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive chunks of ``size`` items (the last may be shorter)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
