"""Shards merge exactly: one process against three shards merged, for every score, interval and sample line.

The model is ``lc-test-hash`` (tests/fixtures/hash_lm.py), whose answers are functions of the
request, so a document gets the same answers whichever process asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext.shards.merge import CORE_KEYS, MERGED_KEY
from logic_consistency.harness_ext.shards.shard import Shard
from logic_consistency.harness_ext.shards.values import loads
from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.modellist import load_model_list
from logic_consistency.leaderboard.run.nightly import build

from .conftest import FIXTURE_DATA
from .shard_support import (
    ECHO_ENV,
    HASH_RUN,
    comparable,
    files_holding,
    hash_lm_eval,
    model_list,
    newest_results,
    samples_lines,
    scrubbed_echoes,
)

NIGHT = "2026-06-01"
BOOT = BootstrapSettings(n_resamples=200)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _build(tmp_path: Path, out: str, **overrides: Any) -> Any:
    return build(
        tmp_path / out,
        model_list=model_list(tmp_path, limit=4, entry=ECHO_ENV),
        cache_dir=tmp_path / "caches" / out,  # the request cache's own redaction is tested elsewhere
        overrides=overrides,
        night=NIGHT,
        lm_eval=hash_lm_eval(tmp_path),
        bootstrap=BOOT,
        progress=False,
        embedded_sha=lambda name: "0" * 64,
    )


def test_three_shards_merge_to_exactly_the_one_process_run(tmp_path: Path, offline: None) -> None:
    """Also: through both local paths, the model's echoed key is in no file the build keeps."""
    one = _build(tmp_path, "one")
    three = _build(tmp_path, "three", shards=3)
    assert not one.failed and not three.failed, [o.failure for o in (*one.outcomes, *three.outcomes)]
    run = tmp_path / "three" / "runs" / NIGHT / HASH_RUN
    whole, merged = newest_results(tmp_path / "one" / "runs" / NIGHT / HASH_RUN), newest_results(run / "merged")
    a, b = (json.loads(path.read_text(encoding="utf-8")) for path in (whole, merged))
    assert a["results"], "the one-process run scored nothing"
    for key in (*CORE_KEYS, "task_hashes"):
        assert a.get(key) == b.get(key), key
    assert b[MERGED_KEY] == {"count": 3}
    assert samples_lines(whole) == samples_lines(merged)
    # each shard evaluated its own documents: disjoint, and together every one
    shard_docs = []
    for index in range(3):
        metrics = loads((run / f"shard-{index}-of-3" / "shard_metrics.json").read_text(encoding="utf-8"), "metrics")
        shard_docs.append({(task, doc) for task, entries in metrics["tasks"].items() for _, doc, _ in entries})
    assert all(docs for docs in shard_docs)
    assert sum(len(docs) for docs in shard_docs) == len(set().union(*shard_docs))
    everything = {(task, json.loads(line)["doc_id"]) for task, lines in samples_lines(whole).items() for line in lines}
    assert set().union(*shard_docs) == everything
    # the rows: every score, interval and count
    assert [comparable(row) for row in one.document["rows"]] == [comparable(row) for row in three.document["rows"]]
    # the key the model echoed (generations, log): redacted in every run, shard, merged and log file
    for out, units in (("one", 1), ("three", 3)):
        assert scrubbed_echoes(tmp_path / out / "runs") == units, out
        assert files_holding(tmp_path / out) == [], out


def test_a_failing_shard_names_itself_and_keeps_the_model_off_the_board(tmp_path: Path, offline: None) -> None:
    models = model_list(tmp_path, tasks=["logic_consistency_summeval"], limit=3)
    # an lm_eval that fails for shard 1 only
    (tmp_path / "wrapper").write_text(
        f'#!/bin/sh\n[ "$LOGIC_CONSISTENCY_SHARD" = "1/2" ] && exit 7\nexec "{hash_lm_eval(tmp_path)}" "$@"\n',
        encoding="utf-8",
    )
    (tmp_path / "wrapper").chmod(0o755)
    result = build(
        tmp_path / "out",
        model_list=models,
        overrides={"shards": 2},
        night=NIGHT,
        lm_eval=str(tmp_path / "wrapper"),
        bootstrap=BOOT,
        progress=False,
    )
    (failure,) = result.document["failures"]
    assert (failure["error"]["code"], failure["error"]["shard"], failure["error"]["returncode"]) == (
        "lm_eval_failed",
        "1/2",
        7,
    )
    assert result.document["rows"] == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [("3", "expected i/N"), ("1/x", "expected i/N"), ("3/3", "0 <= i < N"), ("0/0", "N >= 1")],
)
def test_a_malformed_shard_variable_is_named(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"LOGIC_CONSISTENCY_SHARD={text!r}: .*{problem}"):
        Shard.parse(text)


def test_shard_sizes_partition_the_documents() -> None:
    for n_docs in range(7):
        assert sum(Shard(index, 3).size(n_docs) for index in range(3)) == n_docs


@pytest.mark.parametrize(
    ("extra", "entry", "message"),
    [
        ("shards: 0", "", "'shards' must be at least 1"),
        ("", ", shards: 2.5", r"models\[0\] \(hash\): 'shards' must be an integer"),
        ("", ", resources: {num_gpu: 1}", r"models\[0\] \(hash\): resources: unknown key.*'num_gpu' -> 'num_gpus'"),
        ("", ", resources: {memory: -1}", r"\(hash\): resources.memory must be a positive"),
        ("", ", resources: {custom: {a100: 0}}", r"\(hash\): resources.custom must map"),
        ("api_limits: {'http://h:1/v1': 2}", "", "api_limits: key 'http://h:1/v1' must be a host"),
        ("api_limits: {'h:1': 0}", "", r"api_limits\['h:1'\] must be a positive integer"),
        (
            "api_limits: {'h:1': 2}",
            ", model_args: 'base_url=http://h:1/v1/chat/completions,num_concurrent=4'",
            r"\(hash\): num_concurrent=4 exceeds api_limits\['h:1'\] = 2",
        ),
    ],
)
def test_bad_cluster_fields_name_the_model_and_key(tmp_path: Path, extra: str, entry: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_model_list(model_list(tmp_path, extra=extra, entry=entry))


def test_cluster_fields_are_read(tmp_path: Path) -> None:
    entry = ", shards: 2, resources: {num_gpus: 1, custom: {a100: 1}}, model_args: 'base_url=http://H:1/v1,num_concurrent=2'"
    (spec,) = load_model_list(model_list(tmp_path, extra="api_limits: {'h:1': 3}", entry=entry))
    assert (spec.shards, spec.resources, spec.endpoint, spec.api_limit, spec.slots) == (
        2,
        {"num_gpus": 1.0, "custom": {"a100": 1.0}},
        "h:1",
        3,
        2,
    )
    (spec,) = load_model_list(model_list(tmp_path), {"shards": 4})
    assert spec.shards == 4
