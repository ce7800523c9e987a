"""Rows measured on different documents (``lm_eval --samples``) never share a board (issue 29, item 5).

lm-eval records ``--samples`` nowhere in its results file, so two models given different documents
in their model-list ``extra_args`` were ranked side by side. The row now records, per task run on a
selection, the id of the evaluated documents (``settings.tasks{task}.documents``, from the samples
file's ``doc_hash`` values), which is part of ``settings_id``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASK = "logic_consistency_summeval"


def _entry(name: str, documents: list[int]) -> str:
    samples = json.dumps({TASK: documents})
    return f"  - {{name: {name}, model: dummy, extra_args: [--samples, {json.dumps(samples)}]}}\n"


def test_a_build_keeps_rows_on_different_documents_on_different_boards(tmp_path: Path, cli: Callable[..., Any]) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "batch_size: 1\nmodels:\n"
        + _entry("first-docs", [0, 2])
        + _entry("other-docs", [1, 2])
        + _entry("same-docs", [2, 0]),  # the first selection, listed in another order
        encoding="utf-8",
    )
    out = tmp_path / "board"
    run = cli(
        "leaderboard", "build", "--models", str(models), "--out", str(out), "--tasks", TASK,
        "--metadata", '{"max_items": 5}', "--n-resamples", "1000", "--no-progress",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {row["model"]["name"]: row for row in board["rows"]}
    assert sorted(rows) == ["first-docs", "other-docs", "same-docs"]
    documents = {name: row["settings"]["tasks"][TASK]["documents"] for name, row in rows.items()}
    assert all(row["settings"]["tasks"][TASK]["n_effective"] == 2 for row in rows.values())
    assert documents["first-docs"] == documents["same-docs"] != documents["other-docs"]
    assert rows["first-docs"]["settings_id"] == rows["same-docs"]["settings_id"] != rows["other-docs"]["settings_id"]
    assert len(board["boards"]) == 2


def test_a_run_on_every_document_or_a_limit_records_no_selection(dummy_run: Path) -> None:
    """``--limit`` says which documents ran (the first N): no ``documents`` key, and ids stay as they were."""
    from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results

    row = ingest_results(dummy_run, night=None, bootstrap=BootstrapSettings(n_resamples=1000))
    assert row["settings"]["limit"] is not None
    assert not any("documents" in entry for entry in row["settings"]["tasks"].values())
