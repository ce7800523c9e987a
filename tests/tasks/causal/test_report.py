"""The confusion-matrix report on hand-written lm-eval sample logs, and its command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.cli import causal_confusion
from logic_consistency.tasks.causal import report

PERFECT = [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]
SWAPPED = [-5, -4, -3, -2, 1, -1, 2, 3, 4, 5]
TASK = "logic_consistency_causal_ranking"


def sample(
    ranked: list[int] | None = None, *, generation_error: bool = False, ranking_error: bool = False
) -> dict[str, Any]:
    """One line of an lm-eval samples file of a causal task (only the fields the report reads)."""
    stages: dict[str, Any] = {"generation": {"parsed": {"intermediates": {}, "shown_labels": []}}}
    if generation_error:
        stages["generation"]["parsed"] = {"error": "weaker_defeaters: expected 2 arguments (one per line), found 1"}
    elif ranking_error:
        stages["ranking"] = {"parsed": {"error": "no ranking found"}}
    else:
        stages["ranking"] = {"parsed": {"ranking": list(range(1, 11)), "ranked_labels": ranked}}
    return {"doc_id": 0, "doc": {"id": "x", "stages": stages}, "arguments": {}, "resps": [], "filtered_resps": []}


def write_samples(path: Path, samples: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def test_task_name_from_the_lm_eval_file_name() -> None:
    assert report.task_name(Path(f"samples_{TASK}_2025-01-31T10-20-30.123456.jsonl")) == TASK
    assert report.task_name(Path("samples_logic_consistency_causal_ctp_so_2025-01-31T10-20-30.123456.jsonl")) == (
        "logic_consistency_causal_ctp_so"
    )
    assert report.task_name(Path("my_samples.jsonl")) == "my_samples"


def test_report_pools_files_of_a_task_and_separates_tasks(tmp_path: Path) -> None:
    first = write_samples(
        tmp_path / f"samples_{TASK}_2025-01-01T00-00-00.000001.jsonl",
        [sample(PERFECT), sample(SWAPPED), sample(generation_error=True)],
    )
    second = write_samples(
        tmp_path / f"samples_{TASK}_2025-01-02T00-00-00.000001.jsonl", [sample(PERFECT), sample(ranking_error=True)]
    )
    ctp = write_samples(
        tmp_path / "samples_logic_consistency_causal_ctp_so_2025-01-01T00-00-00.000001.jsonl", [sample(PERFECT[::-1])]
    )
    written = report.confusion_report([first, second, ctp], tmp_path / "out")
    assert set(written) == {TASK, "logic_consistency_causal_ctp_so"}
    data = json.loads(written[TASK]["json"].read_text(encoding="utf-8"))
    assert data["source_files"] == [str(first), str(second)]
    assert (data["n_samples"], data["n_rankings"]) == (5, 3)
    assert (data["n_unparseable_generation"], data["n_unparseable_ranking"]) == (1, 1)
    assert data["labels"] == PERFECT
    counts = data["counts"]
    assert counts[0][0] == 3 and counts[4][4] == 2 and counts[4][5] == 1 and counts[5][4] == 1
    assert data["row_percent"][4][4] == pytest.approx(200 / 3, abs=1e-3)
    assert data["diagonal_percent"] == pytest.approx(100 * 28 / 30, abs=1e-3)
    reversed_counts = json.loads(written["logic_consistency_causal_ctp_so"]["json"].read_text(encoding="utf-8"))[
        "counts"
    ]
    assert reversed_counts[0][9] == 1 and reversed_counts[9][0] == 1
    for files in written.values():
        assert files["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # atomic writes leave no temporary files behind
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"confusion_{task}.{ext}" for task in written for ext in ("json", "png")
    )


def test_a_task_without_parsed_rankings_still_gets_a_report(tmp_path: Path) -> None:
    path = write_samples(tmp_path / f"samples_{TASK}_2025-01-01T00-00-00.000001.jsonl", [sample(generation_error=True)])
    data = json.loads(report.confusion_report([path], tmp_path)[TASK]["json"].read_text(encoding="utf-8"))
    assert data["n_rankings"] == 0 and data["diagonal_percent"] is None
    assert data["counts"] == [[0] * 10 for _ in range(10)]


def test_rewriting_replaces_the_old_report(tmp_path: Path) -> None:
    path = write_samples(tmp_path / f"samples_{TASK}_2025-01-01T00-00-00.000001.jsonl", [sample(PERFECT)])
    report.confusion_report([path], tmp_path / "out")
    write_samples(path, [sample(PERFECT), sample(PERFECT)])
    written = report.confusion_report([path], tmp_path / "out")
    assert json.loads(written[TASK]["json"].read_text(encoding="utf-8"))["n_rankings"] == 2


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"doc_id": 0, "doc": {"id": "x"}}\n', "line 1: not a causal task sample (no doc.stages)"),
        ('{"doc": {"stages": {"validator": {}}}}\n', "line 1: not a causal task sample (no 'generation' stage)"),
        ("\n" + json.dumps(sample(PERFECT)) + "\n{not json\n", "line 3: not valid JSON"),
        ("[1, 2]\n", "line 1: must be a JSON object"),
    ],
)
def test_bad_samples_files_name_file_and_line(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "samples_other_2025-01-01T00-00-00.000001.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        report.confusion_report([path], tmp_path / "out")
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_missing_or_no_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        report.confusion_report([tmp_path / "nope.jsonl"], tmp_path)
    with pytest.raises(ValueError, match="samples_paths is empty"):
        report.confusion_report([], tmp_path)


def test_cli_subcommand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_samples(tmp_path / f"samples_{TASK}_2025-01-01T00-00-00.000001.jsonl", [sample(PERFECT)])
    parser = argparse.ArgumentParser(prog="logic-consistency")
    causal_confusion.add_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["causal-confusion", str(path), "--out", str(tmp_path / "cli")])
    assert args.run(args) == 0
    assert (tmp_path / "cli" / f"confusion_{TASK}.png").is_file()
    assert f"{TASK}: " in capsys.readouterr().out
    assert causal_confusion.main([str(path), "--out", str(tmp_path / "main")]) == 0
    assert (tmp_path / "main" / f"confusion_{TASK}.json").is_file()
