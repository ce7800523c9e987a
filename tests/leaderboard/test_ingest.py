"""Results + samples files -> a leaderboard row: scores, intervals, counts, provenance, errors."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logic_consistency.leaderboard.board.identity import settings_id
from logic_consistency.leaderboard.board.ingest import (
    BootstrapSettings,
    group_statistic,
    ingest_results,
    is_count,
    leaf_tasks,
)
from logic_consistency.metrics import CAUSAL_LABELS, bootstrap_ci

BOOT = BootstrapSettings(n_resamples=2000, seed=7)


def _results(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _samples(results_path: Path, task: str) -> list[dict[str, Any]]:
    stamp = results_path.name[len("results_") : -len(".json")]
    path = results_path.with_name(f"samples_{task}_{stamp}.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def row(dummy_run: Path) -> dict[str, Any]:
    return ingest_results(dummy_run, night="2026-01-02", bootstrap=BOOT)


def test_every_task_and_metric_has_score_interval_and_instance_count(dummy_run: Path, row: dict[str, Any]) -> None:
    results = _results(dummy_run)
    groups = {name for name, children in results["group_subtasks"].items() if children}
    tasks = [name for name in results["results"] if name not in groups]
    assert tasks and set(row["tasks"]) == set(results["results"])
    for task in tasks:
        lines = _samples(dummy_run, task)
        entry = row["tasks"][task]
        assert entry["kind"] == "task"
        assert entry["n_instances"] == len(lines) == results["n-samples"][task]["effective"]
        keys = [k for k in results["results"][task] if "," in k and "_stderr," not in k]
        assert keys, task
        for key in keys:
            metric = key.split(",")[0]
            values = [line[metric] for line in lines if line.get(metric) is not None]
            if is_count(metric):
                assert entry["counts"][metric] == {"total": sum(values), "n": len(values)}
                continue
            value = entry["metrics"][metric]
            assert value["score"] == results["results"][task][key]
            assert value["n"] == len(values)
            if len(values) >= 2:
                expected = bootstrap_ci(values, n_resamples=BOOT.n_resamples, seed=BOOT.seed)
                assert value["ci95"] == list(expected)
                assert min(values) <= value["ci95"][0] <= value["ci95"][1] <= max(values)
            else:
                assert value["ci95"] is None
        assert entry["unparseable"] == sum(count["total"] for count in entry["counts"].values())


def test_groups_aggregate_their_leaf_tasks(dummy_run: Path, row: dict[str, Any]) -> None:
    results = _results(dummy_run)
    groups = {name: children for name, children in results["group_subtasks"].items() if children}
    assert "logic_consistency" in groups
    for group in groups:
        entry = row["tasks"][group]
        leaves = leaf_tasks(group, groups)
        assert entry["kind"] == "group" and entry["subtasks"] == leaves
        assert entry["n_instances"] == sum(row["tasks"][task]["n_instances"] for task in leaves)
        assert entry["unparseable"] == sum(row["tasks"][task]["unparseable"] for task in leaves)
        for metric, value in entry["metrics"].items():
            assert value["score"] == results["results"][group][f"{metric},none"]
            per_task = [row["tasks"][t]["metrics"][metric] for t in leaves if metric in row["tasks"][t]["metrics"]]
            assert value["n"] == sum(v["n"] for v in per_task)
            if value["ci95"] is not None:
                lows = [_samples(dummy_run, t) for t in leaves]
                all_values = [line[metric] for lines in lows for line in lines if line.get(metric) is not None]
                assert min(all_values) <= value["ci95"][0] <= value["ci95"][1] <= max(all_values)


def test_group_statistic_reproduces_the_mean_of_task_means() -> None:
    rng = np.random.default_rng(3)
    values = [rng.random(5), rng.random(2), rng.random(9)]
    flat = np.concatenate(values)
    task_of = np.concatenate([np.full(v.size, i) for i, v in enumerate(values)])
    for weights in (np.full(3, 1 / 3), np.array([5, 2, 9]) / 16):
        statistic = group_statistic(flat, task_of, weights)
        identity = np.arange(flat.size, dtype=float)[None, :]
        expected = sum(w * v.mean() for w, v in zip(weights, values))
        assert statistic(identity, axis=1)[0] == pytest.approx(expected)
    # a resample drawing nothing from a task renormalises over the others (as lm-eval skips it)
    only_first = np.zeros((1, flat.size))
    assert group_statistic(flat, task_of, np.full(3, 1 / 3))(only_first, axis=1)[0] == pytest.approx(flat[0])


def test_causal_tasks_get_a_confusion_matrix(dummy_run: Path, row: dict[str, Any]) -> None:
    results = _results(dummy_run)
    causal = [t for t in results["results"] if "unparseable_ranking,none" in results["results"][t]]
    assert causal, "the suite has a causal ranking task"
    assert set(row["confusion"]) == set(causal)
    for task in causal:
        matrix = row["confusion"][task]
        n = len(CAUSAL_LABELS)
        assert matrix["labels"] == list(CAUSAL_LABELS)
        assert len(matrix["counts"]) == n and all(len(r) == n for r in matrix["counts"])
        assert matrix["n_samples"] == len(_samples(dummy_run, task))
        assert (
            matrix["n_rankings"] + matrix["n_unparseable_generation"] + matrix["n_unparseable_ranking"]
            == matrix["n_samples"]
        )
        assert sum(map(sum, matrix["counts"])) == n * matrix["n_rankings"]


def test_provenance_comes_from_the_results_file(dummy_run: Path, row: dict[str, Any]) -> None:
    results = _results(dummy_run)
    provenance = row["provenance"]
    assert provenance["lm_eval_version"] == results["lm_eval_version"]
    assert provenance["limit"] == results["config"]["limit"] == 2
    assert provenance["items_per_instance"] == 5  # the --metadata of the run
    seeds = {config["metadata"]["seed"] for config in results["configs"].values()}
    assert len(seeds) == 1 and provenance["seed"] == seeds.pop()
    assert provenance["date"] == datetime.fromtimestamp(results["date"], timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert provenance["run_time_seconds"] == pytest.approx(float(results["total_evaluation_time_seconds"]))
    assert set(provenance["task_config_hashes"]) == set(row["settings"]["tasks"])
    assert provenance["task_hashes"] == results["task_hashes"]
    assert provenance["chat_template_sha"] == results["chat_template_sha"]
    assert row["settings_id"] == settings_id(row["settings"])
    assert row["night"] == "2026-01-02" and row["measured_at"] == provenance["date"]
    assert row["model"]["backend"] == "dummy" and row["model"]["revision"] == "unpinned"


def test_the_row_publishes_no_path_of_the_machine(dummy_run: Path, row: dict[str, Any]) -> None:
    """Issue 46 (fifth audit): the provenance never holds the folder a run lies in (a home folder): the results
    file is published as ``local:<SHA-256 of its path>/<file name>`` (allowlist.public_path)."""
    published = json.dumps(row)
    assert str(dummy_run.parent) not in published and f"{Path.home()}/" not in published
    assert re.fullmatch(r"local:[0-9a-f]{12}/results_[^/]+\.json", row["provenance"]["results_file"])


def test_different_settings_give_a_different_board(run_copy: Callable[..., Path], row: dict[str, Any]) -> None:
    def more_items(results: dict[str, Any]) -> None:
        for config in results["configs"].values():
            config["metadata"]["max_items"] = 6

    def later(results: dict[str, Any]) -> None:
        results["date"] += 3600

    changed = ingest_results(run_copy(more_items), night="2026-01-02", bootstrap=BOOT)
    assert changed["settings_id"] != row["settings_id"] and changed["row_id"] != row["row_id"]
    same = ingest_results(run_copy(later), night="2026-01-03", bootstrap=BOOT)
    assert (same["settings_id"], same["row_id"]) == (row["settings_id"], row["row_id"])
    renamed = ingest_results(run_copy(), name="other", bootstrap=BOOT)
    assert renamed["row_id"] != row["row_id"] and renamed["settings_id"] == row["settings_id"]


def test_a_model_run_with_its_chat_template_shares_the_board(
    run_copy: Callable[..., Path], row: dict[str, Any]
) -> None:
    def chat(results: dict[str, Any]) -> None:
        results["chat_template"] = "{% for m in messages %}{{ m.content }}{% endfor %}"
        results["chat_template_sha"] = "ab" * 32

    instruct = ingest_results(run_copy(chat), name="instruct", bootstrap=BOOT)
    assert instruct["settings_id"] == row["settings_id"]
    assert instruct["provenance"]["chat_template_applied"] is True
    assert instruct["provenance"]["chat_template_sha"] == "ab" * 32
    assert row["provenance"]["chat_template_applied"] is False


def test_counts_named_n_are_summed_and_kept_out_of_unparseable(run_copy: Callable[..., Path]) -> None:
    """A count other than unparseable answers (self-agreement's ``n_majority_ties``) is a sum, not a rate."""
    task = "logic_consistency_caters"
    copied = run_copy(lambda results: results["results"][task].update({"n_majority_ties,none": 4}))
    samples_path = next(copied.parent.glob(f"samples_{task}_*.jsonl"))
    lines = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 2
    for line, ties in zip(lines, (3, 1), strict=True):
        line["n_majority_ties"] = ties
    samples_path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    entry = ingest_results(copied, bootstrap=BOOT)["tasks"][task]
    assert entry["counts"]["n_majority_ties"] == {"total": 4, "n": 2}
    assert "n_majority_ties" not in entry["metrics"]
    assert entry["unparseable"] == sum(
        c["total"] for name, c in entry["counts"].items() if name.startswith("unparseable")
    )


def test_unreadable_results_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "results_2026-01-01T00-00-00.000001.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"results_2026-01-01T00-00-00\.000001\.json: not valid JSON"):
        ingest_results(bad)
    with pytest.raises(FileNotFoundError, match="results file not found"):
        ingest_results(tmp_path / "results_missing.json")


def test_missing_field_is_named(run_copy: Callable[..., Path]) -> None:
    copied = run_copy(lambda results: results.pop("configs"))
    with pytest.raises(ValueError, match=rf"{copied.name}: field 'configs' missing"):
        ingest_results(copied)
    copied = run_copy(lambda results: results.__setitem__("date", "yesterday"))
    with pytest.raises(ValueError, match=r"field 'date'"):
        ingest_results(copied)


def test_missing_samples_file_names_task_and_file(run_copy: Callable[..., Path]) -> None:
    copied = run_copy()
    victim = min(copied.parent.glob("samples_*.jsonl"))
    task = victim.name[len("samples_") :].rsplit("_", 1)[0]
    victim.unlink()
    with pytest.raises(
        ValueError, match=rf"{copied.name}: no samples file {victim.name} for task '{task}'.*--log_samples"
    ):
        ingest_results(copied)


def test_samples_that_do_not_match_the_results_are_rejected(run_copy: Callable[..., Path], dummy_run: Path) -> None:
    results = _results(dummy_run)
    task, key = next(
        (t, k)
        for t, metrics in results["results"].items()
        for k in metrics
        if "," in k and "_stderr," not in k and not is_count(k.split(",")[0]) and t in results["n-samples"]
    )

    def shifted(edited: dict[str, Any]) -> None:
        edited["results"][task][key] = edited["results"][task][key] + 0.125

    with pytest.raises(ValueError, match=rf"field 'results\.{task}\.{key}' is .* does not belong to this results file"):
        ingest_results(run_copy(shifted))


def test_malformed_samples_lines_are_located(run_copy: Callable[..., Path]) -> None:
    copied = run_copy()
    victim = min(copied.parent.glob("samples_*.jsonl"))
    lines = victim.read_text(encoding="utf-8").splitlines()
    victim.write_text("\n".join([lines[0], lines[1][: len(lines[1]) // 2]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{victim.name} line 2: not valid JSON"):
        ingest_results(copied)
    record = json.loads(lines[0])
    metric = next(name for name in record["metrics"])
    record[metric] = "high"
    victim.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{victim.name} record 1 .*field '{metric}' must be a finite number"):
        ingest_results(copied)


def test_cli_reports_bad_results_with_exit_status_2(tmp_path: Path, cli: Callable[..., Any]) -> None:
    bad = tmp_path / "results_2026-01-01T00-00-00.000001.json"
    bad.write_text(json.dumps({"results": {}}), encoding="utf-8")
    run = cli("leaderboard", "ingest", str(bad), "--out", str(tmp_path / "board"), "--no-progress")
    assert run.returncode == 2
    assert run.stderr.startswith("logic-consistency: error: ") and f"{bad}: field 'configs' missing" in run.stderr
    assert not (tmp_path / "board" / "leaderboard.json").exists()


def test_ingest_command_writes_a_valid_board(dummy_run: Path, tmp_path: Path, cli: Callable[..., Any]) -> None:
    run = cli(
        "leaderboard",
        "ingest",
        str(dummy_run.parent),
        "--out",
        str(tmp_path),
        "--night",
        "2026-01-05",
        "--allow-backfill",  # the run was measured today
        "--name",
        "dummy-model",
        "--no-progress",
        "--n-resamples",
        "1000",
    )
    assert run.returncode == 0, run.stderr
    board = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    assert [r["model"]["name"] for r in board["rows"]] == ["dummy-model"]
    assert board["bootstrap"]["n_resamples"] == 1000
    assert board["nights"] == [
        {"night": "2026-01-05", "rows": 1, "failures": 0, "history_file": "history/2026-01-05.json"}
    ]
    assert math.isfinite(board["rows"][0]["tasks"]["logic_consistency_pairwise"]["metrics"]["s_comm"]["score"])


def test_model_arguments_copied_into_task_metadata_do_not_change_the_board(
    run_copy: Callable[..., Path], row: dict[str, Any]
) -> None:
    """lm-eval copies --model_args into every task's metadata; that must not split the board per model."""

    def as_embedded(results: dict[str, Any]) -> None:
        results["config"]["model_args"] = "model=some-model,dtype=float32"
        for config in results["configs"].values():
            config["metadata"].update({"model": "some-model", "dtype": "float32"})

    def overridden(results: dict[str, Any]) -> None:
        as_embedded(results)
        for config in results["configs"].values():
            config["metadata"]["dtype"] = "bfloat16"  # --metadata overrode a model argument: a real setting

    embedded = ingest_results(run_copy(as_embedded), name="dummy", bootstrap=BOOT)
    assert embedded["settings_id"] == row["settings_id"]
    assert "model" not in embedded["provenance"]["run_options"]
    changed = ingest_results(run_copy(overridden), name="dummy", bootstrap=BOOT)
    assert changed["settings_id"] != row["settings_id"]
    assert changed["provenance"]["run_options"]["dtype"] == "bfloat16"


def test_position_bias_reaches_the_board_without_a_direction(row: dict[str, Any]) -> None:
    for task in ("logic_consistency_summeval", "logic_consistency_pairwise"):  # the suite's group: no metric
        metrics = row["tasks"][task]["metrics"]
        for name in ("position_bias", "p_first_mean"):
            assert 0.0 <= metrics[name]["score"] <= 1.0, (task, name)
            # 0.5 is ideal: neither higher nor lower is better
            assert metrics[name]["higher_is_better"] is None, (task, name)


def test_gv_strict_consistency_is_carried_for_every_gv_task_and_its_group(dummy_run: Path, row: dict[str, Any]) -> None:
    """``gv_consistency_strict`` is defined on every document (unparseable = inconsistent), so its
    instance count is the task's, while ``gv_consistency`` covers only the parsed documents."""
    results = _results(dummy_run)
    gv_tasks = [name for name in results["results"] if name.startswith("logic_consistency_gv_")]
    assert gv_tasks
    for task in gv_tasks:
        entry = row["tasks"][task]
        strict = entry["metrics"]["gv_consistency_strict"]
        assert strict["n"] == entry["n_instances"], task
        assert strict["score"] == results["results"][task]["gv_consistency_strict,none"]
        parsed = entry["metrics"].get("gv_consistency", {"n": 0})["n"]
        assert parsed == entry["n_instances"] - entry["unparseable"], task
        assert entry["metrics"]["gv_left_out"]["score"] == pytest.approx(entry["unparseable"] / entry["n_instances"])
    assert "gv_consistency_strict" in row["tasks"]["logic_consistency_gv"]["metrics"]
    assert row["tasks"]["logic_consistency"]["metrics"] == {}  # the families share no metric
