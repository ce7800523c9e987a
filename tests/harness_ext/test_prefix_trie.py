"""The radix-tree plan of the prefix-sharing scorer (pure Python, no model)."""

from __future__ import annotations

import pytest

from logic_consistency.harness_ext.prefix.batches import PADDING_BUDGET, PackedRow, chunks, packed_passes, packed_rows
from logic_consistency.harness_ext.prefix.trie import distinct_prefix_tokens, plan_prefix_groups

ARTICLE = tuple(range(100, 400))  # 300 shared tokens


def _keys() -> list[tuple[int, ...]]:
    """Two letters per prompt; prompts share the article, then option A (60 tokens)."""
    keys = []
    for a in range(3):
        option_a = tuple(range(1000 + 100 * a, 1060 + 100 * a))
        for b in range(4):
            key = ARTICLE + option_a + (5000 + b,)
            keys += [key, key]
    return keys


def test_groups_follow_shared_prefixes_and_cover_every_request_once() -> None:
    keys = _keys()
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=100)
    assert unshared == []
    assert len(roots) == 1 and roots[0].length == len(ARTICLE)
    assert roots[0].members == 12  # distinct keys: the two letters of a prompt count once
    children = roots[0].children
    assert [child.length for child in children] == [360, 360, 360]
    assert all(child.tokens[:300] == ARTICLE for child in children)
    covered = sorted(i for root in roots for group in root.walk() for i in group.requests)
    assert covered == list(range(len(keys)))
    assert roots[0].requests == []  # every request sits under its option-A prefix
    assert children[0].requests == list(range(8))


def test_threshold_keeps_short_or_rarely_shared_runs_uncached() -> None:
    keys = _keys()
    # Option A saves (4 - 1) * 60 = 180 tokens per node: below 200 it is not cached.
    roots, _ = plan_prefix_groups(keys, min_shared_tokens=200)
    assert len(roots) == 1 and roots[0].children == []
    assert roots[0].requests == list(range(len(keys)))
    # Above what the article saves, nothing is cached.
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=10_000)
    assert roots == [] and unshared == list(range(len(keys)))


def test_chain_of_cached_prefixes_is_bounded() -> None:
    roots, _ = plan_prefix_groups(_keys(), min_shared_tokens=1, max_cached_prefixes=1)
    assert len(roots) == 1 and roots[0].children == []


def test_unique_and_empty_keys_are_unshared() -> None:
    keys = [(1, 2, 3), (), (7, 8, 9)]
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=1)
    assert roots == [] and unshared == [0, 1, 2]


def test_a_key_that_is_a_prefix_of_others_is_scored_at_that_prefix() -> None:
    short = tuple(range(50))
    keys = [short, short + (99, 98), short + (97,)]
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=1)
    assert unshared == [] and roots[0].length == 50 and roots[0].requests == [0, 1, 2]


def test_a_short_prefix_above_cached_prefixes_saves_one_copy_per_cached_prefix() -> None:
    """Two subjects' long headers under one short common description (MMLU's "The following are ... about"):
    cached, the description saves one copy (two cached headers below it), not one per question."""
    description = tuple(range(11))
    keys = [
        description + tuple(range(1000 * s, 1000 * s + 200)) + (50_000 + 10 * s + q,) for s in (1, 2) for q in range(4)
    ]
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=32)
    assert unshared == [] and [root.length for root in roots] == [211, 211]
    assert [root.requests for root in roots] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # a common prefix whose one saved copy reaches the threshold is still cached, above its children
    roots, _ = plan_prefix_groups([description * 4 + key[11:] for key in keys], min_shared_tokens=32)
    assert [root.length for root in roots] == [44] and [child.length for child in roots[0].children] == [244, 244]


def test_the_prefix_common_to_every_key_needs_the_lone_threshold() -> None:
    """The prefix every key shares, cached, is a forward pass of its own: it must save ``lone_min_shared_tokens``."""
    keys = [tuple(range(40)) + (100 + k,) for k in range(4)]  # caching the 40 tokens saves 3 * 40 = 120
    assert plan_prefix_groups(keys, min_shared_tokens=32, lone_min_shared_tokens=256) == ([], [0, 1, 2, 3])
    roots, unshared = plan_prefix_groups(keys, min_shared_tokens=32, lone_min_shared_tokens=120)
    assert unshared == [] and roots[0].length == 40 and roots[0].requests == [0, 1, 2, 3]


def test_distinct_prefix_tokens_is_the_trie_size() -> None:
    assert distinct_prefix_tokens([(1, 2, 3), (1, 2, 4), (1, 5)]) == 5
    assert distinct_prefix_tokens([(1, 2), (1, 2)]) == 2
    assert distinct_prefix_tokens([]) == 0


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("min_shared_tokens", 0),
        ("min_shared_tokens", True),
        ("max_cached_prefixes", 0),
        ("max_cached_prefixes", 2.5),
        ("lone_min_shared_tokens", 0),
        ("lone_min_shared_tokens", "256"),
    ],
)
def test_bad_options_name_themselves(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=option):
        plan_prefix_groups([(1,)], **{option: value})  # type: ignore[arg-type]


def test_packed_rows_fill_each_cache_row_first_fit_and_come_out_widest_first() -> None:
    leaves = [(0, (1,) * 5, [0]), (0, (2,) * 4, [1, 2]), (0, (3,) * 3, [3]), (1, (4,) * 6, [4]), (0, (5,) * 9, [5])]
    rows = packed_rows(leaves, capacity=9)
    assert [(row.cache_row, [len(t) for t, _ in row.segments]) for row in rows] == [
        (0, [9]),
        (0, [5, 4]),
        (1, [6]),
        (0, [3]),
    ]
    assert sorted(i for row in rows for _, members in row.segments for i in members) == [0, 1, 2, 3, 4, 5]
    assert all(row.width <= 9 for row in rows)


def test_a_suffix_longer_than_the_capacity_gets_a_row_of_its_own() -> None:
    rows = packed_rows([(0, (1,) * 12, [0]), (0, (2,), [1])], capacity=10)
    assert [row.width for row in rows] == [12, 1]
    with pytest.raises(ValueError, match="capacity"):
        packed_rows([], capacity=0)


def test_packed_passes_choose_the_row_width_with_the_fewest_token_slots() -> None:
    """Four prompts' suffixes (4 rotations each) of 66, 55, 22 and 19 tokens: packed up to the longest input
    (393 tokens) they make four rows of 264, 220, 88 and 76 tokens, a pass of 4 x 264 slots (1056, 648 real);
    at width 132 six rows of at most 132 (792 slots) in one pass of at most 8 rows."""
    lengths = (66, 55, 22, 19)
    leaves = [(row, (row, k) + (7,) * (n - 2), [4 * row + k]) for row, n in enumerate(lengths) for k in range(4)]
    passes = packed_passes(leaves, capacity=393, rows_per_batch=8)
    assert [[row.width for row in rows] for rows in passes] == [[132, 132, 110, 110, 88, 76]]
    scored = sorted(i for rows in passes for row in rows for _, members in row.segments for i in members)
    assert scored == list(range(16))

    def slots(chosen: list[list[PackedRow]]) -> int:
        return sum(len(rows) * rows[0].width + PADDING_BUDGET for rows in chosen)

    assert slots(passes) < slots(list(chunks(packed_rows(leaves, capacity=393), 8)))
    # never wider than the capacity, never more rows a pass than the batch size
    passes = packed_passes(leaves, capacity=100, rows_per_batch=3)
    assert all(len(rows) <= 3 and all(row.width <= 100 for row in rows) for rows in passes)
