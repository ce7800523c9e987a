"""The shipped JSON Schema accepts what the builder writes and rejects broken files, naming the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from logic_consistency.leaderboard.board.failures import failure_error
from logic_consistency.leaderboard.board.identity import settings_id
from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.board.schema import (
    SCHEMA_VERSION,
    load_document,
    load_schema,
    validate,
)

BOOT = BootstrapSettings(n_resamples=300)


@pytest.fixture(scope="module")
def document(dummy_run: Path) -> dict[str, Any]:
    row = ingest_results(dummy_run, night="2026-02-01", bootstrap=BOOT)
    failure = {
        "name": "broken",
        "backend": "hf",
        "model_args": "pretrained=nowhere",
        "night": "2026-02-01",
        "failed_at": "2026-02-01T03:00:00Z",
        "error": failure_error("lm_eval_failed", returncode=1, error_class="OSError"),
        "log_file": None,
    }
    return make_document("leaderboard", [row], [failure], night="2026-02-01", bootstrap=BOOT)


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["pattern"].startswith("^" + SCHEMA_VERSION.split(".")[0])


def test_a_built_document_validates_and_round_trips(document: dict[str, Any], tmp_path: Path) -> None:
    validate(document)
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load_document(path) == document
    assert document["schema_version"] == SCHEMA_VERSION
    assert document["boards"][0]["n_rows"] == 1


def _set(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value


_DELETE = object()


def _FIRST_TASK(doc: dict[str, Any]) -> str:
    return next(iter(doc["rows"][0]["tasks"]))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("rows", 0, "model", "revision"), _DELETE, r"\$\.rows\[0\]\.model: 'revision' is a required property"),
        (("schema_version",), "4.0", r"\$\.schema_version: '4\.0' does not match"),
        (("rows", 0, "measured_at"), "yesterday", r"\$\.rows\[0\]\.measured_at: 'yesterday' does not match"),
        (
            ("rows", 0, "model", "colour"),
            "blue",
            r"\$\.rows\[0\]\.model: Additional properties are not allowed \('colour'",
        ),
        (("failures", 0, "error", "returncode"), "one", r"\$\.failures\[0\]\.error\.returncode: 'one' is not of type"),
        (("bootstrap", "confidence"), 1.5, r"\$\.bootstrap\.confidence: 1\.5 is greater than or equal to"),
        (("kind",), "board", r"\$\.kind: 'board' is not one of"),
    ],
)
def test_schema_violations_name_the_field(
    document: dict[str, Any], path: tuple[Any, ...], value: Any, message: str
) -> None:
    broken = copy.deepcopy(document)
    _set(broken, path, value)
    with pytest.raises(ValueError, match=message):
        validate(broken, "board.json")


def test_metric_fields_are_checked(document: dict[str, Any]) -> None:
    broken = copy.deepcopy(document)
    task = _FIRST_TASK(broken)
    metrics = broken["rows"][0]["tasks"][task]["metrics"]
    metric = next(iter(metrics))
    metrics[metric]["score"] = "0.5"
    with pytest.raises(
        ValueError, match=rf"\$\.rows\[0\]\.tasks\.{task}\.metrics\.{metric}\.score: '0\.5' is not of type 'number'"
    ):
        validate(broken, "board.json")


def test_cross_field_rules(document: dict[str, Any]) -> None:
    edited = copy.deepcopy(document)
    edited["rows"][0]["settings"]["limit"] = 100.0
    with pytest.raises(ValueError, match=r"\$\.rows\[0\]\.settings_id: .* is not the hash of the row's settings"):
        validate(edited)

    duplicated = copy.deepcopy(document)
    duplicated["rows"].append(copy.deepcopy(duplicated["rows"][0]))
    duplicated["boards"][0]["n_rows"] = 2
    with pytest.raises(ValueError, match=r"\$\.rows: row_id .* appears 2 times"):
        validate(duplicated)

    miscounted = copy.deepcopy(document)
    miscounted["boards"][0]["n_rows"] = 3
    with pytest.raises(ValueError, match=r"n_rows: 3, but 1 row\(s\) use it"):
        validate(miscounted)

    reversed_interval = copy.deepcopy(document)
    for entry in reversed_interval["rows"][0]["tasks"].values():
        for value in entry["metrics"].values():
            if value["ci95"] is not None and value["ci95"][0] < value["ci95"][1]:
                value["ci95"].reverse()
                break
        else:
            continue
        break
    else:
        pytest.fail("the dummy run has no metric with a non-degenerate interval")
    with pytest.raises(ValueError, match=r"ci95: low .* > high"):
        validate(reversed_interval)
    assert settings_id(document["rows"][0]["settings"]) == document["rows"][0]["settings_id"]


def test_not_json_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "leaderboard.json"
    bad.write_text('{"rows": [', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{bad}: not valid JSON \(line 1"):
        load_document(bad)
    with pytest.raises(FileNotFoundError, match="leaderboard file not found"):
        load_document(tmp_path / "nothing.json")
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\$: \[\] is not of type 'object'"):
        load_document(bad)


def test_validate_command(document: dict[str, Any], tmp_path: Path, cli: Callable[..., Any]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    broken = copy.deepcopy(document)
    del broken["rows"][0]["provenance"]["seed"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken), encoding="utf-8")
    ok = cli("leaderboard", "validate", str(good))
    assert ok.returncode == 0 and f"{good}: 1 row(s) on 1 board(s), 1 failure(s), 1 night(s): valid" in ok.stdout
    failed = cli("leaderboard", "validate", str(good), str(bad))
    assert failed.returncode == 2
    assert f"logic-consistency: error: {bad}: not a valid leaderboard" in failed.stderr
    assert "$.rows[0].provenance: 'seed' is a required property" in failed.stderr


def _first_metric(document: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    for task, entry in document["rows"][0]["tasks"].items():
        if name in entry["metrics"]:
            return task, entry["metrics"][name]
    raise AssertionError(f"no {name} in the dummy run")


@pytest.mark.parametrize(
    ("metric", "score", "expected"),
    [
        ("s_comm", 7.5, "7.5 is greater than the maximum of 1"),
        ("s_comm", -0.1, "-0.1 is less than the minimum of 0"),
        ("tau_all", 1.5, "1.5 is greater than the maximum of 1"),
        ("tau_all", -1.5, "-1.5 is less than the minimum of -1"),
        ("s_comm", float("nan"), "NaN or infinite number"),
        ("tau_all", float("inf"), "NaN or infinite number"),
    ],
)
def test_scores_out_of_their_range_are_rejected_naming_row_task_and_metric(
    hand_board: dict[str, Any], metric: str, score: float, expected: str, tmp_path: Path
) -> None:
    broken = copy.deepcopy(hand_board)
    task, entry = _first_metric(broken, metric)
    entry["score"] = score
    with pytest.raises(ValueError) as error:
        validate(broken, "board.json")
    message = str(error.value)
    assert expected in message and "board.json" in message
    assert f"task {task!r}" in message and f"metric {metric!r}" in message
    assert f"model {broken['rows'][0]['model']['name']!r}" in message and "row 0" in message
    validate(hand_board)  # the untouched board is valid
    # What a user meets: a file with NaN is refused by validate and render, naming the file.
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ValueError, match=str(path)):
        load_document(path)


def test_count_totals_may_not_be_negative_and_rates_keep_their_interval_bounds(hand_board: dict[str, Any]) -> None:
    broken = copy.deepcopy(hand_board)
    entry = next(e for e in broken["rows"][0]["tasks"].values() if e["counts"])
    name = next(iter(entry["counts"]))
    entry["counts"][name]["total"] = -1
    with pytest.raises(ValueError, match=f"count {name!r}"):
        validate(broken)
    broken = copy.deepcopy(hand_board)
    _, metric = _first_metric(broken, "s_comm")
    metric["ci95"] = [0.2, 1.2]
    with pytest.raises(ValueError, match="ci95"):
        validate(broken)


def test_render_of_a_nan_board_names_the_file_and_field(
    hand_board: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from logic_consistency.cli import main

    hand_board["rows"][0]["tasks"]["logic_consistency_causal"]["metrics"]["tau_all"]["score"] = float("nan")
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(hand_board), encoding="utf-8")  # Python writes NaN as a bare NaN token
    for command in (["render", str(path), "--out", str(tmp_path / "index.html")], ["validate", str(path)]):
        assert main(["leaderboard", *command]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and "metrics.tau_all.score" in err and "NaN or infinite" in err
    assert not (tmp_path / "index.html").exists()


def test_the_failure_codes_table_of_the_docs_is_the_schema_vocabulary() -> None:
    """Issue 46: the codes, stages and fixed sentences are declared once (the schema); the docs' table copies them."""
    from logic_consistency.leaderboard.board.failures import FAILURE_CODES

    text = (Path(__file__).resolve().parents[2] / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    section = text.split("### Failure codes", 1)[1].split("\n### ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| `")]
    assert {code.strip("` "): (stage, message.rstrip(" |")) for code, stage, message in rows} == dict(FAILURE_CODES)


def test_a_failure_holds_no_free_text_and_an_old_one_is_migrated() -> None:
    """Issue 46: a 2.x failure's text (a URL with a token in its path, stderr lines) is dropped when read."""
    from logic_consistency.leaderboard.board.failures import failure_error
    from logic_consistency.leaderboard.board.migrate import upgrade

    old = {
        "schema_version": "2.2",
        "failures": [
            {
                "name": "judge",
                "backend": "lc-chat",
                "model_args": "model=j,base_url=http://127.0.0.1:9/t/gw-TOKEN-123/v1",
                "night": "2026-02-01",
                "failed_at": "2026-02-01T03:00:00Z",
                "error": {
                    "message": "404 for http://127.0.0.1:9/t/gw-TOKEN-123/v1",
                    "returncode": 1,
                    "stderr_tail": "x",
                },
                "log_file": "/home/op/board/runs/2026-02-01/judge/lm_eval.log",
            }
        ],
    }
    (failure,) = upgrade(old)["failures"]
    # issue 54: an old board cannot say its model list declared the host public: a label stands for it
    assert "gw-TOKEN-123" not in json.dumps(failure) and failure["model_args"] == "model=j,base_url=private:judge"
    assert failure["error"]["code"] == "recorded_as_text" and failure["error"]["returncode"] == 1
    assert failure["log_file"] == "runs/2026-02-01/judge/lm_eval.log"
    assert failure_error("lm_eval_failed", error_class="GatewaySaidTOKENError")["error_class"] == "other"
