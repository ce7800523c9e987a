"""``improve repair --train-data summarize_feedback:PATH`` at a tiny size on the tiny random model of
tests/tiny_model.py (the embedded SmolLM2's own study is tests/test_improve_study.py's): the
REPAIR-ed row trains on Summarize-from-Feedback comparisons (a small file in the hub's schema, written
here), posed with SummEval's own prompt under the chat template, and is evaluated on SummEval's test
split; ``--limit`` bounds the posts; the source's hash and size are in the study and the manifest."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.cli import main  # noqa: E402
from logic_consistency.harness_ext.models.adapter_manifest import data_sha256, read_manifest  # noqa: E402

FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
#: Per post, its summaries best first; every pair is compared once (the first-listed shown first for
#: even pairs, second for odd ones), so the human order is total and REPAIR keeps all 3 pairs.
POSTS = {
    "t3_alpha": ("My landlord raised the rent twice this year without notice.", ["Landlord raised rent twice without notice.", "Rent went up.", "I have a landlord."]),
    "t3_beta": ("Our dog learned to open the fridge and now eats everything.", ["Dog opens the fridge and eats the food.", "Dog is clever.", "We own a dog."]),
    "t3_gamma": ("I lost my keys on the train and a stranger mailed them back.", ["Stranger mailed back keys lost on a train.", "Keys were lost."]),
}  # fmt: skip


def _records() -> Iterator[dict[str, Any]]:
    for post_id, (post, ranked) in POSTS.items():
        pairs = [(i, j) for i in range(len(ranked)) for j in range(i + 1, len(ranked))]
        for n, (better, worse) in enumerate(pairs):
            shown = (better, worse) if n % 2 == 0 else (worse, better)
            yield {
                "info": {"id": post_id, "post": post, "title": None, "subreddit": "test"},
                "summaries": [{"text": ranked[k], "policy": "ref", "note": None} for k in shown],
                "choice": shown.index(better),
                "worker": "w",
                "batch": "b",
                "split": "train",
                "extra": {},
            }


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("improve_feedback")
    data = root / "comparisons.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    out = root / "study"
    with pytest.MonkeyPatch.context() as patch:  # SummEval from the fixture copy; the lm_eval child inherits it
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        patch.setenv("HF_HUB_OFFLINE", "1")
        code = main(
            ["improve", "repair", "--base", str(tiny_base(root / "base")), "--out", str(out), "--tasks",
             "logic_consistency_summeval", "--train-data", f"summarize_feedback:{data}", "--limit", "2",
             "--flip", "1.0", "--max-steps", "1", "--rows", "repaired",
             "--metadata", json.dumps({"max_items": 3, "ks": [3]}), "--train-args", "batch_size=4,grad_accum=1"]
        )  # fmt: skip
    assert code == 0
    return out, data


def _pair(prompt: str) -> tuple[str, str]:
    found = re.search(r"Summary A: (.*)\n\nSummary B: (.*)\n", prompt)
    assert found, prompt
    return found.group(1), found.group(2)


@pytest.mark.slow
def test_the_repaired_row_trains_on_the_feedback_posts_with_summevals_prompt(study: tuple[Path, Path]) -> None:
    out, _ = study
    lines = (out / "rows" / "repaired" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    prompts = [r["messages"][0]["content"] for r in records]
    # --limit 2: the first two posts (3 comparisons each), never the third
    assert all(POSTS["t3_alpha"][0] in p or POSTS["t3_beta"][0] in p for p in prompts)
    assert any(POSTS["t3_beta"][0] in p for p in prompts) and not any(POSTS["t3_gamma"][0] in p for p in prompts)
    assert all("Which summary is more coherent?" in p and "<assistant>" in p for p in prompts)  # tiny_model's template
    # REPAIR-ed: 3 ordered pairs per post, each in both orders; --flip 1.0 reversed every human label,
    # so the answer is always the letter of the summary the human ranked lower
    assert len(records) == 12
    rank = {text: k for _, ranked in POSTS.values() for k, text in enumerate(ranked)}
    for prompt, record in zip(prompts, records, strict=True):
        a, b = _pair(prompt)
        assert record["messages"][1]["content"] == ("A" if rank[a] > rank[b] else "B")
    row = json.loads((out / "rows" / "repaired" / "row.json").read_text())
    assert row["flipped_labels"] == 6
    manifest = read_manifest(out / "rows" / "repaired" / "adapter")
    assert manifest["data_examples"] == 12 and manifest["data_sha256"] == data_sha256(records)


@pytest.mark.slow
def test_the_study_and_the_manifest_record_the_source(study: tuple[Path, Path]) -> None:
    out, data = study
    expected = {
        "name": "summarize_feedback",
        "file": str(data.resolve()),
        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
        "bytes": data.stat().st_size,
        "comparisons_read": 7,  # gamma: 2 summaries, 1 comparison
        "comparisons": 6,
        "posts": 2,
    }
    identity = json.loads((out / "study.json").read_text())["train_data"]
    manifest = read_manifest(out / "rows" / "repaired" / "adapter")["data_source"]
    assert {k: identity[k] for k in expected} == expected == {k: manifest[k] for k in expected}
    assert str(data.resolve()) in (out / "README.md").read_text()
    rows = json.loads((out / "table.json").read_text())["rows"]
    assert [r["row"] for r in rows] == ["repaired"] and rows[0]["metrics"]["human_agreement"]["n"] == 1
