"""Shards carry their run's identity: a merge refuses a mix, ``ingest`` refuses a shard (issue 33 item 1).

Two real shards of one run are made once (a build with ``shards: 2``); each audit case copies them,
changes what the case changes in one shard, and merges: the merge must refuse, naming the field
and both values, before it computes anything.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext.shards.merge import ShardOutput, merge_shards
from logic_consistency.harness_ext.shards.shard import SHARD_KEY
from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.nightly import build, ingest_into
from logic_consistency.leaderboard.run.units import METRICS_FILE

from .conftest import FIXTURE_DATA
from .shard_support import HASH_RUN, hash_lm_eval, model_list, newest_results

NIGHT = "2026-06-03"
TASK = "logic_consistency_summeval"


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[ShardOutput]:
    """The two shards' outputs of one build of ``hash`` (kept read-only: cases copy them)."""
    tmp = tmp_path_factory.mktemp("shards")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA)), ("HF_HUB_OFFLINE", "1")):
            patch.setenv(name, value)
        result = build(
            tmp / "out",
            model_list=model_list(tmp, tasks=[TASK], limit=4),
            overrides={"shards": 2},
            night=NIGHT,
            lm_eval=hash_lm_eval(tmp),
            bootstrap=BootstrapSettings(n_resamples=200),
            progress=False,
            log=lambda _: None,
        )
    assert not result.failed, [outcome.failure for outcome in result.outcomes]
    run = tmp / "out" / "runs" / NIGHT / HASH_RUN
    return [
        ShardOutput(newest_results(run / f"shard-{i}-of-2"), run / f"shard-{i}-of-2" / METRICS_FILE) for i in range(2)
    ]


def _copy(output: ShardOutput, folder: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> ShardOutput:
    """``output`` copied into ``folder`` (samples and metrics too), its results edited by ``edit``."""
    folder.mkdir(parents=True)
    for path in output.results.parent.iterdir():
        if path.is_file():
            shutil.copy(path, folder / path.name)
    shutil.copy(output.metrics, folder / output.metrics.name)
    results = folder / output.results.name
    if edit is not None:
        document = json.loads(results.read_text(encoding="utf-8"))
        edit(document)
        results.write_text(json.dumps(document), encoding="utf-8")
    return ShardOutput(results, folder / output.metrics.name)


def _task(document: dict[str, Any]) -> dict[str, Any]:
    task: dict[str, Any] = document[SHARD_KEY]["identity"]["tasks"][TASK]
    return task


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _option(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        _task(document)["options"][name] = value

    return edit


def _version(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        _task(document)["version"] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "field", "value"),
    [
        (_set(("config", "model"), "dummy"), "config.model", "'dummy'"),
        (_set(("config", "model_args"), "pretrained=other"), "config.model_args", "'pretrained=other'"),
        (_option("data_sha256", "5a33ae0b" * 8), f"task {TASK} option data_sha256", "'5a33ae0b"),
        (_option("max_items", 6), f"task {TASK} option max_items", "6"),
        (_version(0.9), f"task {TASK} version", "0.9"),
        (_set((SHARD_KEY, "identity", "suite_version"), "0.0.9"), "suite_version", "'0.0.9'"),
        (_set(("config", "limit"), 2), "config.limit", "2"),
        (_set((SHARD_KEY, "identity", "build_id"), "another-build"), "build_id", "'another-build'"),
        # issue 46 item 6: how the model was prompted, and which code computed the numbers
        (_set(("system_instruction",), "Answer briefly."), "system_instruction", "'Answer briefly.'"),
        (_set(("system_instruction_sha",), "ab" * 32), "system_instruction_sha", "'abab"),
        (_set(("chat_template",), "{{ messages }}"), "chat_template", "'{{ messages }}'"),
        (_set(("chat_template_sha",), "cd" * 32), "chat_template_sha", "'cdcd"),
        (_set(("fewshot_as_multiturn",), True), "fewshot_as_multiturn", "True"),
        (_set(("config", "gen_kwargs"), {"temperature": 0.7}), "config.gen_kwargs", "{'temperature': 0.7}"),
        (_set(("lm_eval_version",), "0.4.12"), "lm_eval_version", "'0.4.12'"),
        (_set(("transformers_version",), "4.0.0"), "transformers_version", "'4.0.0'"),
    ],
    ids=[
        "models",
        "model args",
        "data folders",
        "max_items",
        "task version",
        "suite version",
        "limit",
        "builds",
        "system instruction",
        "system instruction sha",
        "chat template",
        "chat template sha",
        "fewshot as multiturn",
        "gen_kwargs",
        "lm-eval version",
        "transformers version",
    ],
)
def test_a_merge_of_mixed_shards_is_refused_naming_the_field_and_both_values(
    shards: list[ShardOutput], tmp_path: Path, edit: Callable[[dict[str, Any]], None], field: str, value: str
) -> None:
    first = _copy(shards[0], tmp_path / "a")
    second = _copy(shards[1], tmp_path / "b", edit)
    original = json.loads(shards[1].results.read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="shards 0/2 and 1/2") as refused:
        merge_shards([first, second], tmp_path / "merged", tasks=TASK)
    message = str(refused.value)
    assert f"field {field!r}" in message and f"but {value}" in message, message
    assert str(first.results) in message and str(second.results) in message
    if field == "build_id":
        assert "different builds" in message
    changed = copy.deepcopy(original)
    edit(changed)
    assert changed != original  # the case changed something
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_set(("versions", TASK), 9.9), f"lm-eval versions.{TASK} is"),
        (_set(("configs", TASK, "doc_to_text"), "another prompt"), f"lm-eval configs.{TASK} (SHA-256) is"),
    ],
    ids=["lm-eval task version", "lm-eval task config"],
)
def test_a_merge_compares_what_lm_eval_recorded_of_each_task(
    shards: list[ShardOutput], tmp_path: Path, edit: Callable[[dict[str, Any]], None], field: str
) -> None:
    """Issue 39 item 8: a shard whose lm-eval results record another task version or prompt, under the
    same identity block, is refused naming the field and both files."""
    first = _copy(shards[0], tmp_path / "a")
    second = _copy(shards[1], tmp_path / "b", edit)
    with pytest.raises(ValueError, match="shards 0/2 and 1/2 differ") as refused:
        merge_shards([first, second], tmp_path / "merged", tasks=TASK)
    message = str(refused.value)
    assert field in message and str(first.results) in message and str(second.results) in message, message
    assert not (tmp_path / "merged").exists()


def test_the_merged_record_keeps_what_every_shard_recorded(
    shards: list[ShardOutput], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46 item 6: shards of one run made with a system instruction and a chat template merge into a
    record that keeps them (not null), with the versions every shard recorded."""
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    prompted = {
        "system_instruction": "Answer briefly.",
        "system_instruction_sha": "ab" * 32,
        "chat_template": "{{ messages }}",
        "chat_template_sha": "cd" * 32,
        "fewshot_as_multiturn": True,
    }

    def edit(document: dict[str, Any]) -> None:
        document.update(prompted)

    outputs = [_copy(shard, tmp_path / f"s{i}", edit) for i, shard in enumerate(shards)]
    merged = json.loads(merge_shards(outputs, tmp_path / "merged", tasks=TASK).read_text(encoding="utf-8"))
    first = json.loads(shards[0].results.read_text(encoding="utf-8"))
    assert {key: merged[key] for key in prompted} == prompted
    for key in ("lm_eval_version", "transformers_version"):
        assert merged[key] == first[key] and isinstance(merged[key], str), key


def test_a_repeated_or_missing_shard_is_refused(shards: list[ShardOutput], tmp_path: Path) -> None:
    first = _copy(shards[0], tmp_path / "a")
    again = _copy(shards[0], tmp_path / "b")
    with pytest.raises(ValueError, match=r"shard 0/2 given twice: .*a/results_.*b/results_"):
        merge_shards([first, again], tmp_path / "merged", tasks=TASK)
    with pytest.raises(ValueError, match=r"shard\(s\) 1/2 missing"):
        merge_shards([first], tmp_path / "merged", tasks=TASK)


def test_ingest_refuses_a_shard_and_points_to_the_merge(shards: list[ShardOutput], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"field '{SHARD_KEY}': the results of shard 1/2 only") as refused:
        ingest_into(tmp_path / "board", [shards[1].results], night=NIGHT)
    assert "shards.merge" in str(refused.value) and str(shards[1].results) in str(refused.value)
    assert not (tmp_path / "board" / "leaderboard.json").exists()
