"""Brat standoff parsing of the CaTeRS release: ``.txt`` + ``.ann`` pairs into stories, events, relations.

A CaTeRS ``.txt`` holds five-sentence stories separated by ``***`` lines; its ``.ann`` holds brat
standoff annotations: ``T<n>\t<type> <start> <end>[;<start> <end>...]\t<text>`` event spans (character
offsets into the ``.txt`` as stored) and ``R<n>\t<TYPE> Arg1:T<a> Arg2:T<b>`` temporal/causal
relations of the CaTeRS scheme (:data:`RELATION_TYPES`). :func:`parse_document` splits one pair into
:class:`Story` objects and checks that every span and relation stays within one story; malformed
input raises :class:`DatasetFormatError` naming the file, the line and the field. Which stories
and events make instances, and in which order, is decided in :mod:`.caters`.
"""

from __future__ import annotations

import re
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from logic_consistency.common import read_text, text_lines

from ._common import DatasetFormatError

__all__ = ["BEFORE_RELATIONS", "RELATION_TYPES", "Event", "Relation", "Story", "parse_document"]

#: Relations that say Arg1 happened (or started) before Arg2.
BEFORE_RELATIONS: frozenset[str] = frozenset(
    {"BEFORE", "CAUSE_BEFORE", "ENABLE_BEFORE", "PREVENT_BEFORE", "CAUSE_TO_END_BEFORE"}
)
#: Every relation type of the CaTeRS scheme (anything else in a file is a format error).
RELATION_TYPES: frozenset[str] = BEFORE_RELATIONS | frozenset(
    {
        "OVERLAPS",
        "DURING",
        "CAUSE_OVERLAPS",
        "ENABLE_OVERLAPS",
        "PREVENT_OVERLAPS",
        "CAUSE_TO_END_OVERLAP",
        "IDENTITY",
        "TEMP",
    }
)
_SPAN_ID = re.compile(r"T\d+")
_RELATION_ID = re.compile(r"R\d+")
_OFFSETS = re.compile(r"\d+ \d+(?:;\d+ \d+)*")
_SEPARATOR = "***"


@dataclass(frozen=True)
class Event:
    """One annotated event span (``T`` line of a brat ``.ann`` file).

    Attributes:
        span_id: Brat id, e.g. ``"T2"``.
        fragments: ``(start, end)`` character offsets into the document ``.txt``; several for a
            discontinuous span.
        text: The span text as written in the ``.ann`` file (fragments joined by a space).
        line: Line number in the ``.ann`` file.
    """

    span_id: str
    fragments: tuple[tuple[int, int], ...]
    text: str
    line: int

    @property
    def start(self) -> int:
        """Offset of the first character (fragments are sorted)."""
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        """Offset after the last character."""
        return self.fragments[-1][1]


@dataclass(frozen=True)
class Relation:
    """One relation (``R`` line): ``kind`` holds between ``arg1`` and ``arg2`` (span ids)."""

    relation_id: str
    kind: str
    arg1: str
    arg2: str
    line: int


@dataclass(frozen=True)
class Story:
    """One story of a CaTeRS document with its annotations.

    Attributes:
        document: Document name, e.g. ``"train/batch_1"``.
        index: 0-based position of the story in its document.
        ann_path: Path of the ``.ann`` file (for error messages).
        doc_text: Text of the whole document (offsets refer to it).
        start: Offset where the story's text begins.
        end: Offset where it ends.
        events: All event spans of the story, in narrative order (by start offset).
        relations: All relations whose arguments are in the story, in file order.
    """

    document: str
    index: int
    ann_path: str
    doc_text: str = field(repr=False)
    start: int
    end: int
    events: tuple[Event, ...]
    relations: tuple[Relation, ...]

    @property
    def instance_id(self) -> str:
        """Stable identifier used as the row's ``instance_id``."""
        return f"{self.document}/story{self.index:02d}"


# --------------------------------------------------------------------------------------------------
# Parsing


def _story_regions(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the non-blank regions between ``***`` separator lines."""
    regions: list[tuple[int, int]] = []
    region_start = offset = 0
    for line in text.splitlines(keepends=True):
        if line.strip() == _SEPARATOR:
            regions.append((region_start, offset))
            region_start = offset + len(line)
        offset += len(line)
    regions.append((region_start, len(text)))
    return [(start, end) for start, end in regions if text[start:end].strip()]


def _parse_span(fields: list[str], *, source: str, location: str, text: str, number: int) -> Event:
    if len(fields) < 3:
        raise DatasetFormatError(source, location, None, f"has {len(fields)} tab-separated fields, expected 3")
    # A tab inside the span text would split it; rejoin so that the text check below reports it.
    span_id, spec, span_text = fields[0], fields[1], "\t".join(fields[2:])
    kind, _, offsets = spec.partition(" ")
    if kind != "Event":
        raise DatasetFormatError(source, location, "type", f"is {kind!r}, expected 'Event'")
    if not _OFFSETS.fullmatch(offsets):
        raise DatasetFormatError(source, location, "offsets", f"{offsets!r} is not '<start> <end>[;<start> <end>...]'")
    fragments = tuple((int(start), int(end)) for start, end in (piece.split(" ") for piece in offsets.split(";")))
    _check_fragments(fragments, offsets, source=source, location=location, text=text)
    # brat writes a discontinuous span's text as its fragments joined by single spaces.
    selected = " ".join(text[start:end] for start, end in fragments)
    if span_text != selected:
        raise DatasetFormatError(
            source, location, "text", f"is {span_text!r}, but offsets {offsets} select {selected!r}"
        )
    return Event(span_id, fragments, span_text, number)


def _check_fragments(
    fragments: tuple[tuple[int, int], ...], offsets: str, *, source: str, location: str, text: str
) -> None:
    """A span's fragments lie inside the text, sorted and disjoint."""
    previous_end = 0
    for start, end in fragments:
        if not start < end <= len(text):
            raise DatasetFormatError(
                source, location, "offsets", f"{start}-{end} is not a span inside the text ({len(text)} characters)"
            )
        if start < previous_end:
            raise DatasetFormatError(source, location, "offsets", f"{offsets!r}: fragments must be sorted and disjoint")
        previous_end = end


def _parse_relation(fields: list[str], *, source: str, location: str, number: int) -> Relation:
    # brat writes a trailing tab after relations; any further field must be empty.
    if len(fields) < 2 or any(extra.strip() for extra in fields[2:]):
        raise DatasetFormatError(source, location, None, "must be 'R<n>\\t<TYPE> Arg1:T<a> Arg2:T<b>'")
    parts = fields[1].split()
    if len(parts) != 3:
        raise DatasetFormatError(source, location, None, "must be 'R<n>\\t<TYPE> Arg1:T<a> Arg2:T<b>'")
    kind, arg1, arg2 = parts
    if kind not in RELATION_TYPES:
        raise DatasetFormatError(source, location, "type", f"{kind!r} is not a CaTeRS relation type")
    args = []
    for name, value in (("Arg1", arg1), ("Arg2", arg2)):
        prefix = f"{name}:"
        if not value.startswith(prefix) or not _SPAN_ID.fullmatch(value[len(prefix) :]):
            raise DatasetFormatError(source, location, name, f"is {value!r}, expected '{prefix}T<n>'")
        args.append(value[len(prefix) :])
    return Relation(fields[0], kind, args[0], args[1], number)


def _parse_ann(ann_path: Path, text: str) -> tuple[dict[str, Event], list[Relation]]:
    """Read and check every line of a brat ``.ann`` file against its ``.txt`` text."""
    source = str(ann_path)
    events: dict[str, Event] = {}
    relations: list[Relation] = []
    relation_ids: set[str] = set()
    with closing(text_lines(ann_path)) as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            location = f"line {number}"
            fields = line.split("\t")
            ann_id = fields[0]
            if _SPAN_ID.fullmatch(ann_id):
                if ann_id in events:
                    raise DatasetFormatError(source, location, "id", f"repeats span id {ann_id!r}")
                events[ann_id] = _parse_span(fields, source=source, location=location, text=text, number=number)
            elif _RELATION_ID.fullmatch(ann_id):
                if ann_id in relation_ids:
                    raise DatasetFormatError(source, location, "id", f"repeats relation id {ann_id!r}")
                relation_ids.add(ann_id)
                relations.append(_parse_relation(fields, source=source, location=location, number=number))
            else:
                raise DatasetFormatError(
                    source, location, "id", f"{ann_id!r:.40}: expected an event span 'T<n>' or a relation 'R<n>'"
                )
    # Relations may name spans defined further down, so arguments are checked after the whole file.
    for relation in relations:
        for name, arg in (("Arg1", relation.arg1), ("Arg2", relation.arg2)):
            if arg not in events:
                raise DatasetFormatError(
                    source, f"line {relation.line}", name, f"refers to {arg}, which is not defined"
                )
    return events, relations


def _story_of(event: Event, regions: list[tuple[int, int]], source: str) -> int:
    """The index of the story whose region holds ``event``'s span, else an error naming its line."""
    index = next((i for i, (start, end) in enumerate(regions) if start <= event.start < end), None)
    if index is None:
        raise DatasetFormatError(source, f"line {event.line}", "offsets", f"start {event.start} is in no story")
    if event.end > regions[index][1]:
        raise DatasetFormatError(
            source,
            f"line {event.line}",
            "offsets",
            f"span {event.start}-{event.end} crosses the end of story {index}",
        )
    return index


def parse_document(txt_path: Path, ann_path: Path, document: str) -> list[Story]:
    """Split one ``.txt``/``.ann`` pair into stories with their events and relations.

    Raises:
        DatasetFormatError: A line is malformed, a span lies outside every story or crosses a story
            boundary, or a relation links two stories.
    """
    # newline="" keeps the characters exactly as stored: brat offsets count them that way.
    text = read_text(txt_path, strip_bom=False)
    if not text.strip() and read_text(ann_path).strip():
        raise DatasetFormatError(
            str(txt_path), None, None, f"is empty: no story text for the annotations of {ann_path}"
        )
    events, relations = _parse_ann(ann_path, text)
    regions = _story_regions(text)
    source = str(ann_path)
    if regions and not events:
        raise DatasetFormatError(
            source,
            None,
            None,
            f"holds no event annotations for the {len(regions)} stories of {txt_path} (an emptied or truncated .ann file?)",
        )

    story_of = {event.span_id: _story_of(event, regions, source) for event in events.values()}
    for relation in relations:
        if story_of[relation.arg1] != story_of[relation.arg2]:
            raise DatasetFormatError(
                source, f"line {relation.line}", "Arg2", f"{relation.arg2} is in another story than {relation.arg1}"
            )
    return [
        Story(document, index, source, text, start, end, *_story_annotations(index, events, relations, story_of))
        for index, (start, end) in enumerate(regions)
    ]


def _story_annotations(
    index: int, events: dict[str, Event], relations: list[Relation], story_of: dict[str, int]
) -> tuple[tuple[Event, ...], tuple[Relation, ...]]:
    """Story ``index``'s events (in text order) and relations."""
    story_events = sorted(
        (event for event in events.values() if story_of[event.span_id] == index),
        key=lambda event: (event.fragments, event.line),
    )
    story_relations = tuple(relation for relation in relations if story_of[relation.arg1] == index)
    return tuple(story_events), story_relations
