"""Tests of the CaTeRS loader on hand-written brat fixtures (and on the real data when available).

Fixture stories (``tests/fixtures/data/caters``):

- ``train/batch_1/story00`` (Maya): 9 spans, ``baking`` IDENTITY ``baked`` -> 8 events; a
  discontinuous span ``was ... happy``; two flashbacks (``cooled`` BEFORE ``frosted``, ``eaten``
  BEFORE ``saw``).
- ``train/batch_1/story01`` (Tom): 5 events.
- ``dev/part_11/story00`` (Ana): 7 events, 5 of them in BEFORE-type relations.
- ``test/test_15Oct/story00`` (Leo): 7 events, ``ran`` twice in one sentence, one flashback.
- all other documents are empty.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR, DatasetFormatError, _source, caters

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
MAYA = "train/batch_1/story00"
LEO = "test/test_15Oct/story00"
ALL_FILES = [f"{stem}{ext}" for _, stem in caters.DOCUMENTS for ext in (".txt", ".ann")]


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the fixtures; returns its ``caters`` folder."""
    shutil.copytree(FIXTURES / "caters", tmp_path / "caters")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    return tmp_path / "caters"


def rows_by_id(**options: Any) -> dict[str, dict[str, Any]]:
    return {row["instance_id"]: row for row in caters.load(**options)["test"]}


def earliest_first(row: dict[str, Any]) -> list[str]:
    """Item ids sorted by human score, highest (= earliest) first."""
    return [item_id for _, item_id in sorted(zip(row["human_scores"], row["item_ids"]), key=lambda p: -p[0])]


def fixture_stories() -> list[caters.Story]:
    return caters.read_stories({relpath: FIXTURES / "caters" / relpath for relpath in ALL_FILES})


@pytest.mark.usefixtures("local_fixtures")
def test_default_filter_and_schema() -> None:
    test = caters.load()["test"]
    assert set(test.column_names) == {"instance_id", "context", "items", "item_ids", "human_scores", "aspect"}
    assert test["instance_id"] == [MAYA, "dev/part_11/story00", LEO]  # Tom's story has only 5 events
    for row in test:
        n = len(row["items"])
        assert len(row["item_ids"]) == n and len(set(row["item_ids"])) == n
        assert sorted(row["human_scores"]) == [float(-k) for k in reversed(range(n))]
        assert row["aspect"] == "temporal order"


@pytest.mark.usefixtures("local_fixtures")
def test_identity_mentions_are_merged_and_items_are_self_contained() -> None:
    maya = rows_by_id()[MAYA]
    assert sorted(maya["item_ids"], key=lambda t: int(t[1:])) == [f"T{n}" for n in range(1, 9)]  # T9 merged into T1
    items = dict(zip(maya["item_ids"], maya["items"]))
    assert items["T1"] == 'baked (in: "Maya [baked] a cake for her brother\'s birthday.")'
    assert items["T5"] == 'was happy (in: "Her brother arrived at noon and [was] very [happy].")'
    leo = dict(zip(*(rows_by_id()[LEO][key] for key in ("item_ids", "items"))))
    assert leo["T2"] == 'ran (in: "He [ran] and ran until he reached the station.")'
    assert leo["T3"] == 'ran (in: "He ran and [ran] until he reached the station.")'


@pytest.mark.usefixtures("local_fixtures")
def test_narrative_human_order_puts_earlier_events_higher() -> None:
    rows = rows_by_id(order="narrative")  # the default is now the annotated order
    assert earliest_first(rows[MAYA]) == ["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"]
    assert earliest_first(rows[LEO]) == ["T1", "T2", "T3", "T4", "T5", "T6", "T7"]


@pytest.mark.usefixtures("local_fixtures")
def test_annotated_human_order_follows_before_relations() -> None:
    rows = rows_by_id(order="annotated")
    # cooled BEFORE frosted and eaten BEFORE saw move the flashbacks; everything else stays in narrative order.
    assert earliest_first(rows[MAYA]) == ["T1", "T3", "T2", "T4", "T5", "T7", "T6", "T8"]
    assert earliest_first(rows[LEO]) == ["T1", "T2", "T3", "T5", "T4", "T6", "T7"]
    with pytest.raises(ValueError, match="order"):
        caters.load(order="chronological")


@pytest.mark.usefixtures("local_fixtures")
def test_context_lists_the_items_in_shuffled_order_without_story_text() -> None:
    test = caters.load()["test"]
    story_text = (FIXTURES / "caters" / "caters_evaluation" / "train" / "batch_1.txt").read_text()
    story_lines = [line for line in story_text.splitlines() if line and line != "***"]
    for row in test:
        assert row["context"].split("\n") == [f"- {item}" for item in row["items"]]
        # No two consecutive story sentences appear together as plain text.
        for first, second in zip(story_lines, story_lines[1:]):
            assert f"{first}\n{second}" not in row["context"] and f"{first} {second}" not in row["context"]
    # The item order is a shuffle, not the narrative order, for at least one story.
    assert any(row["human_scores"] != sorted(row["human_scores"], reverse=True) for row in test)
    orders = {tuple(caters.load(seed=seed)["test"][0]["item_ids"]) for seed in range(5)}
    assert len(orders) > 1


@pytest.mark.usefixtures("local_fixtures")
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"min_events": 5}, ["train/batch_1/story00", "train/batch_1/story01", "dev/part_11/story00", LEO]),
        ({"min_events": 8}, [MAYA]),
        ({"count_events": "temporal"}, [MAYA, "dev/part_11/story00", LEO]),
        ({"count_events": "before"}, [MAYA, LEO]),
        ({"min_events": 5, "count_events": "before"}, [MAYA, "train/batch_1/story01", "dev/part_11/story00", LEO]),
    ],
)
def test_instance_filter_options(options: dict[str, Any], expected: list[str]) -> None:
    assert caters.load(**options)["test"]["instance_id"] == expected


@pytest.mark.usefixtures("local_fixtures")
@pytest.mark.parametrize(
    "options", [{"min_events": 1}, {"min_events": "7"}, {"count_events": "some"}, {"max_items": 1}]
)
def test_bad_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError)):
        caters.load(**options)


@pytest.mark.usefixtures("local_fixtures")
def test_max_items_keeps_aligned_seeded_subsets_and_context() -> None:
    full = rows_by_id(seed=11)
    capped = caters.load(max_items=4, seed=11)["test"]
    assert capped.to_list() == caters.load(max_items=4, seed=11)["test"].to_list()
    for row in capped:
        original = full[row["instance_id"]]
        assert len(row["items"]) == len(row["item_ids"]) == len(row["human_scores"]) == 4
        positions = [original["item_ids"].index(item_id) for item_id in row["item_ids"]]
        assert positions == sorted(positions)
        assert row["items"] == [original["items"][p] for p in positions]
        assert row["human_scores"] == [original["human_scores"][p] for p in positions]
        assert row["context"] == "\n".join(f"- {item}" for item in row["items"])
    assert set(full) == set(capped["instance_id"])
    subsets = {tuple(caters.load(max_items=3, seed=s)["test"][0]["item_ids"]) for s in range(6)}
    assert len(subsets) > 1


def test_helpers_on_fixture_stories() -> None:
    stories = fixture_stories()
    assert [story.instance_id for story in stories] == [MAYA, "train/batch_1/story01", "dev/part_11/story00", LEO]
    # BEFORE-type relations whose Arg1 is mentioned first: Maya 4/6, Tom 4/4, Ana 3/3, Leo 5/6.
    assert caters.narrative_order_agreement(stories) == (16, 19)
    assert caters.count_kept_stories(stories) == 3
    assert caters.count_kept_stories(stories, 7, "before") == 2
    representatives, canonical = caters.distinct_events(stories[0])
    assert len(representatives) == 8 and canonical["T9"] == "T1"


def test_missing_file_names_path(data_copy: Path) -> None:
    (data_copy / "caters_evaluation" / "dev" / "part_12.ann").unlink()
    with pytest.raises(FileNotFoundError) as info:
        caters.load()
    assert str(data_copy / "caters_evaluation" / "dev" / "part_12.ann") in str(info.value)
    assert DATA_ENV_VAR in str(info.value)


def replace_ann_line(path: Path, prefix: str, new: str) -> int:
    """Replace the line starting with ``prefix + '\\t'``; returns its 1-based number."""
    lines = path.read_text().split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith(prefix + "\t"))
    lines[number] = new
    path.write_text("\n".join(lines))
    return number + 1


@pytest.mark.parametrize(
    ("prefix", "new", "field", "fragment"),
    [
        ("T1", "T1\tEvent 5 10\tbaker", "text", "offsets 5 10 select 'baked'"),
        ("T1", "T1\tEvent 5 9999\tbaked", "offsets", "is not a span inside the text"),
        ("T1", "T1\tEvent 5-10\tbaked", "offsets", "is not '<start> <end>"),
        ("T5", "T5\tEvent 125 130;116 119\thappy was", "offsets", "sorted and disjoint"),
        ("T1", "T1\tTimex 5 10\tbaked", "type", "expected 'Event'"),
        ("T1", "T1\tEvent 5 10", None, "expected 3"),
        ("T2", "T1\tEvent 5 10\tbaked", "id", "repeats span id 'T1'"),
        ("R1", "R1\tLATER Arg1:T1 Arg2:T2\t", "type", "'LATER' is not a CaTeRS relation type"),
        ("R1", "R1\tBEFORE Arg1:T1 Arg2:T99\t", "Arg2", "refers to T99, which is not defined"),
        ("R1", "R1\tBEFORE Arg1:T1 Arg3:T2\t", "Arg2", "expected 'Arg2:T<n>'"),
        ("R1", "R1\tBEFORE Arg1:T1 Arg2:T10\t", "Arg2", "T10 is in another story than T1"),
        ("R1", "A1\tNegation T1", "id", "expected an event span"),
    ],
)
def test_malformed_annotation_names_file_line_and_field(
    data_copy: Path, prefix: str, new: str, field: str | None, fragment: str
) -> None:
    ann = data_copy / "caters_evaluation" / "train" / "batch_1.ann"
    number = replace_ann_line(ann, prefix, new)
    with pytest.raises(DatasetFormatError) as info:
        caters.load()
    message = str(info.value)
    assert f"{ann} line {number}:" in message and fragment in message
    if field is not None:
        assert f"field '{field}'" in message


def test_span_outside_or_across_stories_is_rejected(data_copy: Path) -> None:
    ann = data_copy / "caters_evaluation" / "train" / "batch_1.ann"
    text = (data_copy / "caters_evaluation" / "train" / "batch_1.txt").read_text()
    separator = text.index("***")
    number = replace_ann_line(ann, "T9", f"T9\tEvent {separator} {separator + 3}\t***")
    with pytest.raises(DatasetFormatError, match=f"line {number}: field 'offsets' start {separator} is in no story"):
        caters.load()
    # A discontinuous span whose second fragment lies in the next story.
    anyway, tom = text.index("anyway"), text.index("Tom")
    replace_ann_line(ann, "T9", f"T9\tEvent {anyway} {anyway + 6};{tom} {tom + 3}\tanyway Tom")
    with pytest.raises(DatasetFormatError, match=f"line {number}: field 'offsets' span .* crosses the end of story 0"):
        caters.load()


def test_before_cycle_is_reported_in_annotated_order(data_copy: Path) -> None:
    ann = data_copy / "caters_evaluation" / "train" / "batch_1.ann"
    ann.write_text(ann.read_text() + "R99\tBEFORE Arg1:T8 Arg2:T1\t\n")
    assert caters.load(order="narrative")["test"].num_rows == 3  # narrative order does not need the relations
    with pytest.raises(DatasetFormatError, match="story 0: BEFORE-type relations form a cycle"):
        caters.load(order="annotated")


def test_online_path_downloads_pinned_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))
    offline = caters.load(max_items=5)["test"].to_list()
    monkeypatch.delenv(DATA_ENV_VAR)
    requested: dict[str, str] = {}

    def fake_download(urls: dict[str, str]) -> dict[str, Path]:
        requested.update(urls)
        return {key: FIXTURES / "caters" / key for key in urls}

    monkeypatch.setattr(_source, "download", fake_download)
    assert caters.load(max_items=5)["test"].to_list() == offline
    base = "https://raw.githubusercontent.com/phosseini/CREST/994f0aaa74476370f8c4d7ad05209fabe3c95537/data/caters"
    assert requested == {relpath: f"{base}/{relpath}" for relpath in ALL_FILES}
    assert len(requested) == 28 and f"{base}/caters_test/test/test_15Oct.ann" in requested.values()


@pytest.mark.usefixtures("real_data")
def test_real_data_counts() -> None:
    test = caters.load()["test"]
    assert test.num_rows == 228
    assert all(len(items) >= 7 for items in test["items"])
    assert all(sorted(s) == [float(-k) for k in reversed(range(len(s)))] for s in test["human_scores"])
    assert caters.load(count_events="temporal")["test"].num_rows == 222
    assert caters.load(count_events="before")["test"].num_rows == 78
    assert caters.load(order="annotated")["test"].num_rows == 228
    paths = _source.resolve_files(caters.LOCAL_DIR, ALL_FILES, caters.BASE_URL)
    stories = caters.read_stories(paths)
    assert len(stories) == 280
    assert sum(len(story.events) for story in stories) == 2353
    assert sum(len(story.relations) for story in stories) == 2502
    assert caters.narrative_order_agreement(stories) == (1017, 1108)


@pytest.mark.usefixtures("local_fixtures")
def test_annotated_order_is_the_default_and_wins_where_the_narrative_disagrees(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Maya's story tells two flashbacks: "frosted" (T2) is mentioned before "cooled" (T3) but the
    annotation says cooled BEFORE frosted; "saw" (T6) is mentioned before "eaten" (T7), annotated
    eaten BEFORE saw. The default human order follows the annotation on exactly those pairs."""
    with caplog.at_level("INFO", logger=caters.__name__):
        default = rows_by_id()
    assert default == rows_by_id(order="annotated")
    maya = dict(zip(default[MAYA]["item_ids"], default[MAYA]["human_scores"]))
    narrative = dict(zip(*(rows_by_id(order="narrative")[MAYA][key] for key in ("item_ids", "human_scores"))))
    for earlier, later in (("T3", "T2"), ("T7", "T6")):  # annotated BEFORE, mentioned after
        assert maya[earlier] > maya[later]  # higher score = earlier = wins "which happened earlier?"
        assert narrative[earlier] < narrative[later]
    # every other pair keeps the narrative order (narrative position only breaks ties)
    flipped = {(a, b) for a in maya for b in maya if a < b and (maya[a] > maya[b]) != (narrative[a] > narrative[b])}
    assert flipped == {("T2", "T3"), ("T6", "T7")}
    # the loader's log counts the disagreeing pairs over the kept stories: Maya 2 of C(8, 2) = 28,
    # Leo 1 of 21 (T5 before T4), Ana's relations all follow her story's order (0 of 21)
    stories = {story.instance_id: story for story in fixture_stories()}
    assert caters.order_disagreements(stories[MAYA]) == (2, 28)
    assert caters.order_disagreements(stories[LEO]) == (1, 21)
    assert caters.order_disagreements(stories["dev/part_11/story00"]) == (0, 21)
    message = next(r.getMessage() for r in caplog.records if "disagree" in r.getMessage())
    assert (
        "human order = annotated" in message
        and "disagree on 3 of 70 event pairs (4.3%) of the 3 kept stories" in message
    )


@pytest.mark.usefixtures("real_data")
def test_real_data_order_disagreements() -> None:
    """The module docstring's 147 of 7,899 pairs (1.9 %) over the 228 default instances."""
    stories = caters.read_stories(_source.resolve_files(caters.LOCAL_DIR, ALL_FILES, caters.BASE_URL))
    kept = [story for story in stories if len(caters.distinct_events(story)[0]) >= 7]
    counts = [caters.order_disagreements(story) for story in kept]
    assert len(kept) == 228
    assert (sum(d for d, _ in counts), sum(t for _, t in counts)) == (147, 7899)


def test_an_emptied_ann_file_is_named(data_copy: Path) -> None:
    ann = data_copy / "caters_test" / "test" / "test_15Oct.ann"
    ann.write_text("")
    with pytest.raises(DatasetFormatError, match="no event annotations") as info:
        caters.load()
    assert str(ann) in str(info.value)


def test_stories_without_annotations_are_dropped_with_a_warning(
    data_copy: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A story whose events are all unannotated is dropped, and the log says how many and why."""
    ann = data_copy / "caters_test" / "test" / "test_15Oct.ann"
    txt = ann.with_suffix(".txt")
    # A second story after the separator, with no annotation in the .ann file.
    txt.write_text(txt.read_text(encoding="utf-8") + "\n***\nA story nobody annotated.\n", encoding="utf-8")
    assert [len(story.events) == 0 for story in caters.parse_document(txt, ann, "test/test_15Oct")][-1]
    with caplog.at_level("WARNING", logger=caters.__name__):
        caters.load(min_events=2)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("1 stories have no annotated events and are dropped" in w and str(ann) in w for w in warnings), warnings
