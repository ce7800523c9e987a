"""``logic-consistency wrap``: a benchmark's leaves planned before any file, the files, and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager
from lm_eval.tasks._index import Entry, Kind

from logic_consistency.options import OptionError
from logic_consistency.tasks.invariance.wrap import benchmark_leaves, wrap_benchmark

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"


def test_wrap_reports_each_leaf_then_writes_tasks_and_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
    lines: list[str] = []

    def report(line: str) -> None:
        assert not list(tmp_path.iterdir())  # reported before any file is written
        lines.append(line)

    result = wrap_benchmark("mmlu_anatomy", ["cyclic", "swap_gold"], tmp_path, report=report)
    # the fixture's 5 anatomy questions: one has "All of the above" (excluded); 4 x 4 variants x 4 letters
    assert lines == [
        f"mmlu_anatomy_{t}: options field 'choices', answer field 'answer', 4 options, 4 questions (1 excluded), "
        "64 requests"
        for t in ("cyclic", "swap_gold")
    ]
    assert sorted(p.name for p in result.files) == [
        "mmlu_anatomy_cyclic.yaml",
        "mmlu_anatomy_cyclic_swap_gold.yaml",
        "mmlu_anatomy_swap_gold.yaml",
    ]
    manager = TaskManager(include_path=str(tmp_path))
    loaded = manager.load(["mmlu_anatomy_cyclic_swap_gold"])["tasks"]
    assert sorted(loaded) == ["mmlu_anatomy_cyclic", "mmlu_anatomy_swap_gold"]
    assert loaded["mmlu_anatomy_swap_gold"].transform == "swap_gold"


def test_a_group_member_with_overrides_is_refused(tmp_path: Path) -> None:
    group = tmp_path / "g.yaml"
    group.write_text("group: g\ntask:\n  - {task: mmlu_stem_tasks, num_fewshot: 5}\n")
    index = {
        "g": Entry("g", Kind.GROUP, group),
        "mmlu_stem_tasks": Entry("mmlu_stem_tasks", Kind.TAG, None, tags={"t"}),
    }
    with pytest.raises(OptionError, match=r"lists 'mmlu_stem_tasks' with overrides \['num_fewshot'\]"):
        benchmark_leaves(index, "g")


def test_leaves_of_groups_and_tags_in_order_once() -> None:
    index = {
        "t1": Entry("t1", Kind.TASK, None),
        "t2": Entry("t2", Kind.TASK, None),
        "tag": Entry("tag", Kind.TAG, None, tags={"t2", "t1"}),
    }
    assert benchmark_leaves(index, "tag") == ["t1", "t2"]
    with pytest.raises(OptionError, match="'nope' is no task, group or tag"):
        benchmark_leaves(index, "nope")


def test_a_bad_transform_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"--transforms must be one of .*got 'rotate'"):
        wrap_benchmark("mmlu_anatomy", ["rotate"], tmp_path)
