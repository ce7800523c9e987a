"""The board cannot be fooled: future dates, repeated samples lines, unbounded resamples, duplicate
rows, control characters, deep nesting, changed data, and an endpoint answering as another model."""

from __future__ import annotations

import copy
import json
import logging
import shutil
import sys
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bad_input_board import tiny_run  # noqa: E402

from logic_consistency.harness_ext.task import data_files  # noqa: E402
from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results  # noqa: E402
from logic_consistency.leaderboard.board.merge import make_document, merge_documents  # noqa: E402
from logic_consistency.leaderboard.board.nights import check_night, check_timestamp  # noqa: E402
from logic_consistency.leaderboard.board.results import json_depth  # noqa: E402
from logic_consistency.leaderboard.board.schema import validate  # noqa: E402

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
BOOT = BootstrapSettings(n_resamples=1000)


def test_a_night_is_canonical_and_at_most_one_day_ahead() -> None:
    today = date(2026, 3, 10)
    assert check_night("2026-03-11", today=today) == date(2026, 3, 11)  # clocks a little apart
    assert check_night("2020-02-29", today=today) == date(2020, 2, 29)
    for text, message in [
        ("2026-03-12", "in the future"),
        ("9999-12-31", "in the future"),
        ("2026-3-5", "YYYY-MM-DD"),
        ("20260305", "YYYY-MM-DD"),
        ("2026-03-05 ", "YYYY-MM-DD"),
        ("2026-02-30", "no such day"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_night(text, today=today)


def test_a_run_date_beyond_the_skew_or_out_of_range_is_refused() -> None:
    now = datetime(2026, 3, 10, tzinfo=timezone.utc)
    assert check_timestamp(now.timestamp() + 3600, where="f", now=now) > now
    for seconds in (now.timestamp() + 2 * 86400, 1e300, -1e300):
        with pytest.raises(ValueError, match=r"^f: "):
            check_timestamp(seconds, where="f", now=now)


def test_a_row_dated_in_the_future_no_longer_pins_the_board(tmp_path: Path) -> None:
    """The audit's case: a future row kept every later measurement off the board. Now it is refused,
    and a row of today replaces yesterday's."""
    with pytest.raises(ValueError, match="'date'.*in the future"):
        ingest_results(tiny_run(tmp_path / "ahead", lambda r: r.update(date=time.time() + 30 * 86400)), bootstrap=BOOT)
    older = ingest_results(tiny_run(tmp_path / "old", lambda r: r.update(date=time.time() - 86400)), bootstrap=BOOT)
    newer = ingest_results(tiny_run(tmp_path / "new"), bootstrap=BOOT)
    merged = merge_documents(
        make_document("leaderboard", [older], bootstrap=BOOT), make_document("night", [newer], bootstrap=BOOT)
    )
    assert [row["measured_at"] for row in merged["rows"]] == [newer["measured_at"]]


def test_a_repeated_samples_line_is_refused_but_one_line_per_filter_is_not(tmp_path: Path) -> None:
    lines = [{"doc_id": i, "acc": float(i % 2)} for i in range(4)]
    with pytest.raises(ValueError, match=r"samples_toy_.*line 3: doc_id 1 already on line 2"):
        ingest_results(tiny_run(tmp_path / "twice", lines=[lines[0], lines[1], lines[1], lines[2]]), bootstrap=BOOT)
    per_filter = [{**line, "filter": name} for name in ("none", "strict") for line in lines]
    row = ingest_results(tiny_run(tmp_path / "filters", lines=per_filter), bootstrap=BOOT)
    assert row["tasks"]["toy"]["metrics"]["acc"]["n"] == 4  # each document once under the filter 'none'


@pytest.mark.parametrize("value", ["0", "999", "100001", "2000000000"])
def test_n_resamples_is_bounded(value: str, tmp_path: Path, cli: Callable[..., Any]) -> None:
    result = cli("leaderboard", "ingest", str(tiny_run(tmp_path)), "--out", str(tmp_path / "b"), "--n-resamples", value)
    assert result.returncode == 2, result.stderr
    bound = "at least 1,000" if int(value) < 1000 else "at most 100,000"  # the declared bounds
    assert result.stderr.strip().count("\n") == 0 and f"--n-resamples must be {bound}" in result.stderr
    assert not (tmp_path / "b" / "leaderboard.json").exists()


def test_validate_finds_a_duplicate_row_however_it_is_disguised(hand_board: dict[str, Any]) -> None:
    validate(hand_board)
    renamed = copy.deepcopy(hand_board)
    renamed["rows"].append(copy.deepcopy(renamed["rows"][0]))
    renamed["rows"][1]["row_id"] = "0123456789abcdef"
    renamed["boards"][0]["n_rows"] = 2
    with pytest.raises(ValueError, match=r"rows\[1\]\.row_id: 0123456789abcdef is not the hash"):
        validate(renamed)


def test_names_with_control_characters_are_refused(tmp_path: Path, hand_board: dict[str, Any]) -> None:
    for name in ("a\tb", "a\x00", "a\x7f", "a\x9b[31m"):
        with pytest.raises(ValueError, match="--name.*control character"):
            ingest_results(tiny_run(tmp_path / f"n{ord(name[-1])}"), name=name, bootstrap=BOOT)
    broken = copy.deepcopy(hand_board)
    broken["rows"][0]["model"]["name"] = "tiny\nok  other-model"
    with pytest.raises(ValueError, match=r"\$\.rows\[0\]\.model\.name"):
        validate(broken)
    assert ingest_results(tiny_run(tmp_path / "ok"), name="ünïcode ✓ model", bootstrap=BOOT)["model"]["name"]


def test_nesting_depth_is_measured_without_recursion() -> None:
    value: Any = 1
    for _ in range(50_000):
        value = {"k": value}
    assert json_depth(value) == 50_000
    assert json_depth([1, [2, {"a": []}]]) == 4 and json_depth(7) == 0


def _load_summeval(root: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    from logic_consistency.tasks.data import summeval

    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(root))
    with data_files.collecting() as files:
        summeval.load()
    assert list(files) == ["summeval/summeval_hub_format.jsonl"]
    return data_files.files_sha256(files.items())


def test_the_data_hash_follows_the_bytes_not_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(FIXTURE_DATA, first)
    shutil.copytree(FIXTURE_DATA, second)
    digest = _load_summeval(first, monkeypatch)
    assert digest is not None and len(digest) == 64
    assert _load_summeval(second, monkeypatch) == digest  # same data elsewhere: same board
    target = second / "summeval" / "summeval_hub_format.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    record["id"] = f"{record.get('id', '')}-edited"  # same number of documents, different content
    lines[0] = json.dumps(record) + "\n"
    target.write_text("".join(lines), encoding="utf-8")
    assert _load_summeval(second, monkeypatch) != digest
    with data_files.collecting() as files:
        pass
    assert data_files.files_sha256(files.items()) is None


def test_a_run_records_its_data_hash_and_changed_data_starts_a_new_board(
    dummy_run: Path, run_copy: Callable[..., Path]
) -> None:
    """The real run (fixture data) carries the data hash of each task that reads files in its configs,
    hence in the settings; tasks whose items are generated (GV arithmetic) read no file and have none."""
    results = json.loads(dummy_run.read_text(encoding="utf-8"))
    row = ingest_results(dummy_run, bootstrap=BOOT)
    hashed = set()
    for task, entry in row["settings"]["tasks"].items():
        recorded = results["configs"][task]["metadata"].get(data_files.DATA_HASH_KEY)
        assert entry["options"].get(data_files.DATA_HASH_KEY) == recorded
        if recorded is not None:
            hashed.add(task)
            assert len(recorded) == 64
    assert {"logic_consistency_summeval", "logic_consistency_causal_ranking", "logic_consistency_gv_triviaqa"} <= hashed
    assert "logic_consistency_gv_arithmetic" not in hashed

    def changed(edited: dict[str, Any]) -> None:
        edited["configs"]["logic_consistency_summeval"]["metadata"][data_files.DATA_HASH_KEY] = "f" * 64

    other = ingest_results(run_copy(changed), bootstrap=BOOT)
    assert other["settings_id"] != row["settings_id"] and other["row_id"] != row["row_id"]


def test_the_model_an_endpoint_reports_is_recorded_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def asked(reported: Any) -> Callable[[dict[str, Any]], None]:
        def edit(results: dict[str, Any]) -> None:
            results["config"].update(model="lc-chat", model_args="model=gpt-big,base_url=http://127.0.0.1:9/v1")
            if reported is not None:
                results["config"]["endpoint_model"] = reported

        return edit

    with caplog.at_level(logging.WARNING, logger="logic_consistency.leaderboard.board.provenance"):
        same = ingest_results(tiny_run(tmp_path / "same", asked("gpt-big")), bootstrap=BOOT)
        assert same["provenance"]["endpoint_model"] == "gpt-big" and not caplog.records
        other = ingest_results(tiny_run(tmp_path / "other", asked("gpt-small")), bootstrap=BOOT)
    assert other["provenance"]["endpoint_model"] == "gpt-small"
    assert "answered as 'gpt-small'" in caplog.text and "model='gpt-big'" in caplog.text
    old = ingest_results(tiny_run(tmp_path / "old", asked(None)), bootstrap=BOOT)
    assert old["provenance"]["endpoint_model"] is None
    with pytest.raises(ValueError, match="config.endpoint_model"):
        ingest_results(tiny_run(tmp_path / "bad", asked({"name": "x"})), bootstrap=BOOT)
    validate(make_document("leaderboard", [same, other], bootstrap=BOOT))


def test_a_2_0_board_without_the_new_fields_still_reads(hand_board: dict[str, Any], tmp_path: Path) -> None:
    from logic_consistency.leaderboard.board.schema import load_document

    hand_board["schema_version"] = "2.0"
    assert "endpoint_model" not in hand_board["rows"][0]["provenance"]
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(hand_board), encoding="utf-8")
    assert load_document(path)["rows"][0]["row_id"] == hand_board["rows"][0]["row_id"]


@pytest.mark.slow
def test_a_night_long_before_the_run_needs_allow_backfill(tmp_path: Path, cli: Callable[..., Any]) -> None:
    """Issue 29: ``--night 1970-01-01`` filed a run measured today; 7 days before it is the limit."""
    results = tiny_run(tmp_path)
    measured = datetime.fromtimestamp(json.loads(results.read_text())["date"], timezone.utc).date()
    out = tmp_path / "lb"

    def ingest(night: date, *extra: str) -> Any:
        return cli("leaderboard", "ingest", str(results), "--out", str(out), "--night", night.isoformat(), *extra)

    refused = ingest(measured - timedelta(days=8))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert str(results) in refused.stderr and "8 days before the run" in refused.stderr
    assert not (out / "leaderboard.json").exists()  # refused before anything is written
    assert ingest(measured - timedelta(days=7)).returncode == 0  # at the limit: accepted
    backfilled = ingest(date(2020, 1, 1), "--allow-backfill")
    assert backfilled.returncode == 0, backfilled.stderr
    board = json.loads((out / "leaderboard.json").read_text())
    assert [night["night"] for night in board["nights"]] == ["2020-01-01", (measured - timedelta(days=7)).isoformat()]
