"""CaTeRS (Mostafazadeh et al., 2016): which of two events of a short story happened earlier?

The brat release in ``phosseini/CREST`` (``data/caters/``, or ``$LOGIC_CONSISTENCY_DATA/caters/``).
One row per story (``instance_id`` ``"train/batch_1/story00"``): ``items`` are its distinct events,
each written as its span within its sentence (``slipped (in: "She [slipped] on ...")``), in a seeded
random order; ``context`` lists them, never the story text; ``human_scores`` is ``-k`` for the event
at position ``k`` of the human order, so the EARLIER event wins (mentions linked by ``IDENTITY``
are one event); ``aspect`` is ``"temporal order"``.

Option ``order``: ``"annotated"`` (default) is a topological order of the BEFORE-type relations,
narrative order breaking the ties they leave open (Kahn's algorithm taking the event mentioned
first; a cycle is a format error); ``"narrative"`` is the order of mention. Options ``min_events``
(default 7) and ``count_events`` (``all``, ``temporal``, ``before``) choose the stories kept (the
paper's "70 instances" rule is unknown). Counts and reasons: docs/data.md.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.options import check_option
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import _source
from ._common import (
    DatasetFormatError,
    check_options,
    instance_rng,
    pairwise_dataset,
)
from .brat import BEFORE_RELATIONS, RELATION_TYPES, Event, Relation, Story, parse_document

__all__ = [
    "BASE_URL",
    "BEFORE_RELATIONS",
    "COMMIT",
    "DOCUMENTS",
    "Event",
    "Relation",
    "Story",
    "count_kept_stories",
    "distinct_events",
    "human_order",
    "load",
    "narrative_order_agreement",
    "order_disagreements",
    "read_stories",
]

REPO = "phosseini/CREST"
COMMIT = "994f0aaa74476370f8c4d7ad05209fabe3c95537"
BASE_URL = _source.github_raw_url(REPO, COMMIT, "data/caters")
LOCAL_DIR = "caters"
logger = logging.getLogger(__name__)

#: (document name used in instance ids, file path without extension under ``data/caters/``).
DOCUMENTS: tuple[tuple[str, str], ...] = (
    *((f"train/batch_{n}", f"caters_evaluation/train/batch_{n}") for n in range(1, 11)),
    *((f"dev/part_{n}", f"caters_evaluation/dev/part_{n}") for n in range(11, 14)),
    ("test/test_15Oct", "caters_test/test/test_15Oct"),
)

ORDERS: tuple[str, ...] = ("narrative", "annotated")
COUNT_EVENTS: tuple[str, ...] = ("all", "temporal", "before")


def read_stories(paths: dict[str, Path]) -> list[Story]:
    """Parse every document of :data:`DOCUMENTS`, given ``relative path -> local path``."""
    stories: list[Story] = []
    for document, stem in DOCUMENTS:
        stories.extend(parse_document(paths[f"{stem}.txt"], paths[f"{stem}.ann"], document))
    return stories


# --------------------------------------------------------------------------------------------------
# Events and orders


def distinct_events(story: Story) -> tuple[list[Event], dict[str, str]]:
    """Merge duplicate spans and IDENTITY-linked mentions into events.

    Returns:
        The representative spans (first mention of each event) in narrative order, and a mapping
        from every span id of the story to its representative's id.
    """
    parent = {event.span_id: event.span_id for event in story.events}
    position = {event.span_id: rank for rank, event in enumerate(story.events)}

    def root(span_id: str) -> str:
        while parent[span_id] != span_id:
            span_id = parent[span_id]
        return span_id

    def union(first: str, second: str) -> None:
        a, b = root(first), root(second)
        if a != b:
            # The mention that comes first in the story represents the event.
            keep, drop = (a, b) if position[a] <= position[b] else (b, a)
            parent[drop] = keep

    by_offsets: dict[tuple[tuple[int, int], ...], str] = {}
    for event in story.events:
        if event.fragments in by_offsets:
            union(by_offsets[event.fragments], event.span_id)
        else:
            by_offsets[event.fragments] = event.span_id
    for relation in story.relations:
        if relation.kind == "IDENTITY":
            union(relation.arg1, relation.arg2)
    canonical = {event.span_id: root(event.span_id) for event in story.events}
    representatives = [event for event in story.events if canonical[event.span_id] == event.span_id]
    return representatives, canonical


def _before_edges(story: Story, canonical: dict[str, str]) -> set[tuple[str, str]]:
    edges = set()
    for relation in story.relations:
        if relation.kind in BEFORE_RELATIONS:
            first, second = canonical[relation.arg1], canonical[relation.arg2]
            if first != second:
                edges.add((first, second))
    return edges


def human_order(story: Story, order: str = "annotated") -> list[str]:
    """Ids of the story's distinct events from earliest to latest.

    Args:
        story: The story.
        order: ``"annotated"`` (default: a topological order of the BEFORE-type relations, ties
            broken by narrative position; see the module docstring) or ``"narrative"`` (order of
            mention).

    Raises:
        DatasetFormatError: ``order="annotated"`` and the BEFORE-type relations form a cycle.
    """
    check_option("order", order)  # checked by its declaration (tasks/data/_options_yaml)
    representatives, canonical = distinct_events(story)
    narrative = [event.span_id for event in representatives]
    if order == "narrative":
        return narrative
    result, stuck = _stable_topological_order(narrative, _before_edges(story, canonical))
    if stuck:
        lines = sorted(  # the relations to look at: every BEFORE-type one between two stuck events
            r.line
            for r in story.relations
            if r.kind in BEFORE_RELATIONS and {canonical[r.arg1], canonical[r.arg2]} <= set(stuck)
        )
        raise DatasetFormatError(
            story.ann_path,
            f"lines {', '.join(map(str, lines))}",
            None,
            f"story {story.index}: BEFORE-type relations form a cycle among {stuck}, so the human order is undefined",
        )
    return result


def _stable_topological_order(narrative: list[str], edges: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Kahn's algorithm, always taking the available event mentioned first (a stable topological sort):
    the order, and the events left on a cycle (sorted; empty when there is none)."""
    position = {span_id: rank for rank, span_id in enumerate(narrative)}
    successors, indegree = _before_graph(narrative, edges)
    ready = [(position[span_id], span_id) for span_id in narrative if indegree[span_id] == 0]
    heapq.heapify(ready)
    result: list[str] = []
    while ready:
        _, span_id = heapq.heappop(ready)
        result.append(span_id)
        for successor in successors[span_id]:
            indegree[successor] -= 1
            if indegree[successor] == 0:
                heapq.heappush(ready, (position[successor], successor))
    stuck = sorted(span_id for span_id in narrative if indegree[span_id] > 0) if len(result) != len(narrative) else []
    return result, stuck


def _before_graph(
    narrative: list[str], edges: Iterable[tuple[str, str]]
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Each event's successors (in edge order) and its number of predecessors."""
    successors: dict[str, list[str]] = {span_id: [] for span_id in narrative}
    indegree = dict.fromkeys(narrative, 0)
    for first, second in edges:
        successors[first].append(second)
        indegree[second] += 1
    return successors, indegree


def _counted_events(story: Story, count_events: str) -> int:
    check_option("count_events", count_events)  # checked by its declaration (tasks/data/_options_yaml)
    representatives, canonical = distinct_events(story)
    if count_events == "all":
        return len(representatives)
    kinds = RELATION_TYPES - {"IDENTITY"} if count_events == "temporal" else BEFORE_RELATIONS
    involved = {
        canonical[arg]
        for relation in story.relations
        if relation.kind in kinds
        for arg in (relation.arg1, relation.arg2)
    }
    return len(involved)


def count_kept_stories(stories: Iterable[Story], min_events: int = 7, count_events: str = "all") -> int:
    """How many stories the instance filter keeps (for documentation and tests)."""
    return sum(_counted_events(story, count_events) >= min_events for story in stories)


def narrative_order_agreement(stories: Iterable[Story]) -> tuple[int, int]:
    """How many annotated BEFORE-type relations have Arg1 mentioned before Arg2.

    Computed on the raw spans (before IDENTITY merging), over all given stories.

    Returns:
        ``(agreeing, total)``; on the full release ``(1017, 1108)``.
    """
    agreeing = total = 0
    for story in stories:
        start = {event.span_id: event.start for event in story.events}
        for relation in story.relations:
            if relation.kind in BEFORE_RELATIONS:
                total += 1
                agreeing += start[relation.arg1] < start[relation.arg2]
    return agreeing, total


# --------------------------------------------------------------------------------------------------
# Rows


def describe_event(story: Story, event: Event) -> str:
    """``<span> (in: "<sentence with the span in [brackets]>")``.

    The sentence is the story line(s) holding the span (ROCStories have one sentence per line).
    """
    text = story.doc_text
    line_start = text.rfind("\n", story.start, event.start) + 1 or story.start
    line_end = text.find("\n", event.end, story.end)
    if line_end == -1:
        line_end = story.end
    pieces, cursor = [], line_start
    for start, end in event.fragments:
        pieces += [text[cursor:start], "[", text[start:end], "]"]
        cursor = end
    pieces.append(text[cursor:line_end])
    sentence = " ".join("".join(pieces).split())  # one line, single spaces
    return f'{event.text} (in: "{sentence}")'


def _context(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def order_disagreements(story: Story) -> tuple[int, int]:
    """Event pairs on which the annotated and the narrative order disagree.

    Returns:
        ``(disagreeing pairs, all pairs)`` over the story's distinct events.

    Raises:
        DatasetFormatError: the BEFORE-type relations form a cycle.
    """
    annotated = {span_id: rank for rank, span_id in enumerate(human_order(story, "annotated"))}
    narrative = human_order(story, "narrative")
    disagreeing = sum(
        annotated[earlier] > annotated[later]
        for position, earlier in enumerate(narrative)
        for later in narrative[position + 1 :]
    )
    return disagreeing, len(narrative) * (len(narrative) - 1) // 2


def _log_order_disagreements(stories: Sequence[Story], order: str) -> None:
    """Log the disagreement count. With ``order="annotated"`` a cycle has already raised in the
    row building; with ``"narrative"`` a story whose relations are cyclic is left out of the count
    and named in the log instead (the narrative order does not need the relations)."""
    disagreeing = total = 0
    cyclic: list[str] = []
    for story in stories:
        try:
            story_disagreeing, story_total = order_disagreements(story)
        except DatasetFormatError:
            if order == "annotated":
                raise
            cyclic.append(story.instance_id)
            continue
        disagreeing += story_disagreeing
        total += story_total
    share = disagreeing / total if total else 0.0
    logger.info(
        "CaTeRS: human order = %s; annotated (BEFORE-type relations) and narrative order disagree on "
        "%d of %d event pairs (%.1f%%) of the %d kept stories%s",
        order,
        disagreeing,
        total,
        100 * share,
        len(stories),
        f"; annotated order undefined (cyclic BEFORE relations) for {cyclic}" if cyclic else "",
    )


def _story_row(story: Story, order: str, seed: int) -> dict[str, Any]:
    representatives, _ = distinct_events(story)
    rank = {span_id: k for k, span_id in enumerate(human_order(story, order))}
    # Seeded shuffle so that neither the item order nor the context order reveals the story order.
    permutation = instance_rng(seed, story.instance_id, "shuffle").permutation(len(representatives))
    events = [representatives[int(index)] for index in permutation]
    items = [describe_event(story, event) for event in events]
    return {
        "instance_id": story.instance_id,
        "context": _context(items),
        "items": items,
        "item_ids": [event.span_id for event in events],
        # Higher score = earlier event = winner of "which event happened earlier?".
        "human_scores": [float(-rank[event.span_id]) for event in events],
        "aspect": "temporal order",
    }


def load(
    *,
    max_items: int | None = None,
    seed: int = DEFAULT_SEED,
    min_events: int = 7,
    count_events: str = "all",
    order: str = "annotated",
) -> datasets.DatasetDict:
    """Load CaTeRS as pairwise-judgement instances (lm-eval ``custom_dataset`` entry point).

    Args:
        max_items: Keep at most this many events per story: a random subset drawn from ``seed``
            and the instance id (stable across runs), in the (shuffled) item order. ``None`` keeps
            all. Applied after the instance filter.
        seed: Seed of the item shuffle and of the ``max_items`` subset.
        min_events: Keep stories with at least this many counted events (see ``count_events``).
        count_events: Which distinct events count for ``min_events``: ``"all"`` (default),
            ``"temporal"`` (in a non-IDENTITY relation) or ``"before"`` (in a BEFORE-type relation).
        order: Human order: ``"annotated"`` (default; the annotated BEFORE-type relations, narrative
            order breaking ties) or ``"narrative"``; see the module docstring. The pairs on which
            the two disagree are counted in the log (over the kept stories, before ``max_items``).

    Returns:
        ``DatasetDict`` with one split ``"test"`` (228 rows with the defaults on the full data).

    Raises:
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but a file is missing.
        DatasetFormatError: A line is malformed (the message names file, line and field).
    """
    check_options(max_items, seed)
    for name, value in (("min_events", min_events), ("count_events", count_events), ("order", order)):
        check_option(name, value)
    relpaths = [f"{stem}{extension}" for _, stem in DOCUMENTS for extension in (".txt", ".ann")]
    stories = read_stories(_source.resolve_files(LOCAL_DIR, relpaths, BASE_URL))
    kept = [story for story in stories if _counted_events(story, count_events) >= min_events]
    unannotated = [story for story in stories if not story.events]
    if unannotated:
        logger.warning(
            "CaTeRS: %d stories have no annotated events and are dropped (first: %s story %d); "
            "%d of %d stories kept with at least %d %s events",
            len(unannotated),
            unannotated[0].ann_path,
            unannotated[0].index,
            len(kept),
            len(stories),
            min_events,
            count_events,
        )
    _log_order_disagreements(kept, order)
    rows = [_story_row(story, order, seed) for story in kept]
    return pairwise_dataset(rows, max_items, seed, context_of=_context)
