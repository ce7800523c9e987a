"""A radix tree over token sequences, and the plan of which shared prefixes are worth caching.

Without torch, for the prefix-sharing scorer (``prefix_scorer.py``): a compressed trie over each
request's *shareable key* (its input before the first scored token). A node is cached when at
least two distinct keys pass through it and caching saves at least ``min_shared_tokens`` token
computations, ``(members - 1) * edge_length`` from the nearest cached ancestor: a forward pass has a
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


def plan_prefix_groups(
    keys: Sequence[Sequence[int]],
    *,
    min_shared_tokens: int = 256,
    max_cached_prefixes: int = 8,
) -> tuple[list[PrefixGroup], list[int]]:
    """Group requests under the shared prefixes worth caching.

    Args:
        keys: Per request, the tokens that may come from a cached prefix (for a causal LM: its
            input up to, not including, the first position whose logits are scored).
        min_shared_tokens: Cache a node only when it saves at least this many token computations,
            ``(members - 1) * edge_length``.
        max_cached_prefixes: Longest chain of nested cached prefixes (how many are alive at once).

    Returns:
        ``(roots, unshared)``: the top-level cached prefixes (each a tree of :class:`PrefixGroup`)
        and the indices of requests under no cached prefix.

    Raises:
        ValueError: ``min_shared_tokens`` < 1 or ``max_cached_prefixes`` < 1.
    """
    if isinstance(min_shared_tokens, bool) or not isinstance(min_shared_tokens, int) or min_shared_tokens < 1:
        raise ValueError(f"min_shared_tokens must be an integer >= 1, got {min_shared_tokens!r}")
    if isinstance(max_cached_prefixes, bool) or not isinstance(max_cached_prefixes, int) or max_cached_prefixes < 1:
        raise ValueError(f"max_cached_prefixes must be an integer >= 1, got {max_cached_prefixes!r}")
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

    def visit(node: _Node, cached: PrefixGroup | None, chain: int) -> None:
        base = cached.length if cached is not None else 0
        saving = (len(node.members) - 1) * (node.end - base)
        here = cached
        if len(node.members) >= 2 and node.end > base and saving >= min_shared_tokens and chain < max_cached_prefixes:
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
