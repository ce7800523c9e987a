"""A radix tree over token sequences, and the plan of which shared prefixes are worth caching.

Without torch, for the prefix-sharing scorer (``prefix_scorer.py``): a compressed trie over each
request's *shareable key* (its input before the first scored token). A node is cached when at
least two distinct keys pass through it and caching saves at least ``min_shared_tokens`` token
computations, ``(rows - 1) * edge_length`` from the nearest cached ancestor (``rows``: the model rows
that would carry the edge otherwise, a cached descendant counting once): a forward pass has a
fixed cost besides its tokens, so a short run shared by few rows costs more than it saves. The chain
of cached ancestors is at most ``max_cached_prefixes`` long (the prefix caches alive at once);
requests under no cached node take the ordinary path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class PrefixGroup:
    """A cached prefix and what is scored under it.

    Attributes:
        length: Number of leading tokens the cache covers.
        tokens: Those tokens (the shared prefix), from any member's key.
        requests: Indices of the requests whose nearest cached prefix is this one.
        children: Cached prefixes that extend this one.
        members: Number of distinct keys under this prefix (itself and all descendants).
    """

    length: int
    tokens: tuple[int, ...]
    requests: list[int] = field(default_factory=list)
    children: list[PrefixGroup] = field(default_factory=list)
    members: int = 0

    def walk(self) -> list[PrefixGroup]:
        """This group and every descendant, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


@dataclass
class _Node:
    end: int
    members: list[int]
    ends_here: list[int]
    children: list[_Node]


def _build(keys: Sequence[tuple[int, ...]], order: list[int], depth: int) -> _Node:
    """Radix-tree node for ``order`` (indices sorted by key), all sharing ``key[:depth]``."""
    first, last = keys[order[0]], keys[order[-1]]
    # In lexicographic order the prefix common to all keys is the one common to the first and last.
    end = depth + len(os.path.commonprefix([first[depth:], last[depth:]]))
    ends_here = [i for i in order if len(keys[i]) == end]
    rest = [i for i in order if len(keys[i]) > end]
    children: list[_Node] = []
    start = 0
    while start < len(rest):
        token = keys[rest[start]][end]
        stop = start
        while stop < len(rest) and keys[rest[stop]][end] == token:
            stop += 1
        children.append(_build(keys, rest[start:stop], end))
        start = stop
    return _Node(end=end, members=order, ends_here=ends_here, children=children)


def _rows(root: _Node, min_shared_tokens: int) -> dict[int, int]:
    """Per node (by ``id``), the model rows that carry its edge when the node itself is not cached.

    A distinct key ending at the node is a row; a child that would be cached on its own (at least two
    keys, saving ``(rows - 1) * edge`` >= ``min_shared_tokens`` from this node's end) is one row; a child
    that would not is its own rows. Counting every key below instead overstates what a short prefix above
    cached children saves (a description common to two subjects' longer prefixes saves one copy, not one
    per question).
    """
    rows: dict[int, int] = {}

    def count(node: _Node) -> int:
        total = len(node.ends_here)
        for child in node.children:
            below = count(child)
            cached = len(child.members) >= 2 and (below - 1) * (child.end - node.end) >= min_shared_tokens
            total += 1 if cached else below
        rows[id(node)] = total
        return total

    count(root)
    return rows


def plan_prefix_groups(
    keys: Sequence[Sequence[int]],
    *,
    min_shared_tokens: int = 256,
    max_cached_prefixes: int = 8,
    lone_min_shared_tokens: int | None = None,
) -> tuple[list[PrefixGroup], list[int]]:
    """Group requests under the shared prefixes worth caching.

    Args:
        keys: Per request, the tokens that may come from a cached prefix (for a causal LM: its
            input up to, not including, the first position whose logits are scored).
        min_shared_tokens: Cache a node only when it saves at least this many token computations,
            ``(rows - 1) * edge_length``: ``rows`` counts the model rows that would carry the edge were
            the node not cached (:func:`_rows`: a cached descendant is one row, not all its keys).
        max_cached_prefixes: Longest chain of nested cached prefixes (how many are alive at once).
        lone_min_shared_tokens: What the prefix common to every key must save to be cached (default
            ``min_shared_tokens``): cached, it is alone in a forward pass of its own.

    Returns:
        ``(roots, unshared)``: the top-level cached prefixes (each a tree of :class:`PrefixGroup`)
        and the indices of requests under no cached prefix.

    Raises:
        ValueError: an option that is not an integer >= 1.
    """
    lone = min_shared_tokens if lone_min_shared_tokens is None else lone_min_shared_tokens
    for name, value in (
        ("min_shared_tokens", min_shared_tokens),
        ("max_cached_prefixes", max_cached_prefixes),
        ("lone_min_shared_tokens", lone),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    # Requests with the same key (the answer letters of one prompt) count once: they share a row.
    by_key: dict[tuple[int, ...], list[int]] = {}
    for index, key in enumerate(keys):
        by_key.setdefault(tuple(key), []).append(index)
    unshared = list(by_key.pop((), []))
    tuples = sorted(by_key)
    order = list(range(len(tuples)))
    if not order:
        return [], unshared
    # The root of the radix tree may carry a non-empty edge (a prefix common to every key).
    root = _build(tuples, order, 0)
    roots: list[PrefixGroup] = []
    rows = _rows(root, min_shared_tokens)

    def visit(node: _Node, cached: PrefixGroup | None, chain: int) -> None:
        base = cached.length if cached is not None else 0
        # at the end of the chain nothing below is cached: every key is a row of its own
        carried = len(node.members) if chain + 1 >= max_cached_prefixes else rows[id(node)]
        saving = (carried - 1) * (node.end - base)
        needed = lone if node is root else min_shared_tokens
        here = cached
        if len(node.members) >= 2 and node.end > base and saving >= needed and chain < max_cached_prefixes:
            here = PrefixGroup(length=node.end, tokens=tuples[node.members[0]][: node.end], members=len(node.members))
            (cached.children if cached is not None else roots).append(here)
            chain += 1
        target = here.requests if here is not None else unshared
        for key_index in node.ends_here:
            target.extend(by_key[tuples[key_index]])
        for child in node.children:
            visit(child, here, chain)

    visit(root, None, 0)
    for group in (g for top in roots for g in top.walk()):
        group.requests.sort()
    unshared.sort()
    return roots, unshared


def distinct_prefix_tokens(keys: Sequence[Sequence[int]]) -> int:
    """Number of distinct (position, prefix) tokens over ``keys``: the size of their trie.

    ``sum(len(k) for k in keys) / distinct_prefix_tokens(keys)`` is the most any prefix cache can
    save: the ceiling of the speed-up of prefix sharing.
    """
    tuples = sorted({tuple(k) for k in keys if k})
    total = 0
    previous: tuple[int, ...] = ()
    for key in tuples:
        total += len(key) - len(os.path.commonprefix([previous, key]))
        previous = key
    return total
