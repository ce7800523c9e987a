"""``improve repair --train-data``: its values, Summarize-from-Feedback posts as pairwise documents
(``--limit`` bounding the posts), the prompt check and the train/test text check."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext.training.trainer import TrainingError
from logic_consistency.tasks.pairwise.improve_data import (
    TrainData,
    check_contexts_disjoint,
    check_prompt_shows_context,
    load_feedback,
    parse_train_data,
)

FEEDBACK = Path(__file__).resolve().parents[2] / "fixtures" / "data" / "summarize_from_feedback"
FILE = FEEDBACK / "comparisons_validation.jsonl"


def test_the_train_data_values() -> None:
    assert parse_train_data("task") == TrainData()
    assert parse_train_data("summarize_feedback") == TrainData("summarize_feedback", None)
    assert parse_train_data("summarize_feedback:/d/c.jsonl") == TrainData("summarize_feedback", Path("/d/c.jsonl"))
    for wrong in ("summarize_from_feedback", "task:x", "summarize_feedback:", ""):
        with pytest.raises(ValueError, match="--train-data"):
            parse_train_data(wrong)


def test_limit_bounds_the_posts_and_the_source_is_the_file_read() -> None:
    one = load_feedback(FILE, 1)
    # the fixture: post t3_post1 (3 comparisons of 3 summaries), then a CNN/DM article (1 comparison)
    assert [d["instance_id"] for d in one.docs] == ["t3_post1"]
    assert one.docs[0]["context"] == "Roommate problem\n\nMy roommate keeps eating my food and denies it."
    assert len(one.docs[0]["items"]) == len(one.docs[0]["item_ids"]) == 3
    assert (one.source["posts"], one.source["comparisons"], one.source["comparisons_read"]) == (1, 3, 4)
    assert one.source["sha256"] == hashlib.sha256(FILE.read_bytes()).hexdigest()
    assert one.source["bytes"] == FILE.stat().st_size and one.source["split"] is None
    every = load_feedback(FILE, None)
    assert (every.source["posts"], every.source["comparisons"]) == (2, 4)
    assert sum(len(inst.comparisons) for inst in every.prefs.values()) == 4


def test_the_loaders_copy_is_its_train_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "summarize_from_feedback").mkdir()
    copy = tmp_path / "summarize_from_feedback" / "comparisons_train.jsonl"
    copy.write_bytes(FILE.read_bytes())
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(tmp_path))
    data = load_feedback(None, None)
    assert (data.source["split"], data.source["file"], data.source["posts"]) == ("train", str(copy.resolve()), 2)


class _Task:
    def __init__(self, template: str) -> None:
        self.template = template

    def render(self, variant: str, doc: dict[str, Any], i: int, j: int) -> str:
        return self.template.format(**doc, item_a=doc["items"][i], item_b=doc["items"][j])


def test_the_prompt_must_show_the_post() -> None:
    check_prompt_shows_context(_Task("Source text: {context}\nA: {item_a}\nB: {item_b}"), "summeval_like")
    with pytest.raises(TrainingError, match="caters_like.*does not show a source text"):
        check_prompt_shows_context(_Task("Event A: {item_a}\nEvent B: {item_b}"), "caters_like")


ARTICLE = " ".join(f"word{n}" for n in range(30))


@pytest.mark.parametrize(
    ("post", "shared"),
    [
        (ARTICLE, True),  # the same text
        (f"A title\n\n{ARTICLE}", True),  # the article under a post's title
        # issue 39 item 7: content, not the whole text: one word changed, another case, no last word
        ("A title\n\n" + ARTICLE.replace("word29", "other"), True),
        (ARTICLE.replace("word15", "changed"), True),
        (ARTICLE.upper().replace(" ", ", "), True),  # upper case, punctuation between the words
        (ARTICLE.rsplit(" ", 1)[0], True),
        (" ".join(ARTICLE.split()[:12]) + " and then something else entirely", False),  # 12 words: under 13
        ("short query and more words", False),  # a short test context is compared whole only
        ("Short query!", True),  # ... lower-cased, without punctuation
    ],
)
def test_posts_that_hold_a_test_document_are_refused(post: str, shared: bool) -> None:
    tests = [{"instance_id": "art-1", "context": ARTICLE}, {"instance_id": "q-1", "context": "short query"}]
    docs = [{"instance_id": "t3_x", "context": post}]
    if shared:
        with pytest.raises(
            TrainingError,
            match=r"post 't3_x' holds the text of task's test document '(art|q)-1' \(a shared passage of 13 words",
        ):
            check_contexts_disjoint(docs, "task", tests)
    else:
        assert check_contexts_disjoint(docs, "task", tests) == 2


def test_no_test_context_to_compare_is_an_error() -> None:
    with pytest.raises(TrainingError, match="no context to compare"):
        check_contexts_disjoint([{"instance_id": "t3_x", "context": "text"}], "task", [{"instance_id": "s1"}])
