"""Bad-input cases of what reaches the board: nights and dates in the future, repeated samples lines,
unbounded ``--n-resamples``, duplicate rows, names with control characters, deeply nested files.

The runs here are written by hand (one task ``toy`` with one metric ``acc``), so no model is loaded;
each message must name the file, line, field or argument at fault, on one line.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable, cli

from logic_consistency.leaderboard.board.identity import row_id
from logic_consistency.leaderboard.board.ingest import ingest_results
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.board.schema import load_document

CASES = CaseTable()
STAMP = "2026-01-01T00-00-00.000000"


class _MultiLine(AssertionError):
    """A message that should have been one line."""


def tiny_run(
    tmp: Path,
    edit: Callable[[dict[str, Any]], None] | None = None,
    lines: list[dict[str, Any]] | None = None,
) -> Path:
    """A hand-written lm-eval run: ``results_<STAMP>.json`` and the samples of its one task ``toy``."""
    lines = lines if lines is not None else [{"doc_id": i, "acc": float(i % 2)} for i in range(4)]
    results = {
        "results": {"toy": {"alias": "toy", "acc,none": sum(line["acc"] for line in lines) / len(lines)}},
        "configs": {"toy": {"task": "toy", "metadata": {"version": 1}}},
        "config": {"model": "dummy", "model_args": "", "limit": None},
        "n-samples": {"toy": {"original": len(lines), "effective": len(lines)}},
        "date": time.time() - 60,
    }
    if edit is not None:
        edit(results)
    folder = tmp / "run"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    samples = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / f"samples_toy_{STAMP}.jsonl").write_text(samples, encoding="utf-8")
    return folder / f"results_{STAMP}.json"


def _one_line(run: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """The case, with its message also required to be a single line (no traceback, no forged line)."""

    def checked(tmp: Path) -> Any:
        try:
            return run(tmp)
        except ValueError as error:
            if "\n" in str(error):
                raise _MultiLine(str(error)) from error
            raise

    return checked


def _ingest(edit: Callable[[dict[str, Any]], None] | None = None, **options: Any) -> Callable[[Path], Any]:
    return _one_line(lambda tmp: ingest_results(tiny_run(tmp, edit), **options))


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(results: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = results
        for key in parents:
            target = target[key]
        target[last] = value

    return edit


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


CASES.add("results dated 3 days ahead", _ingest(_set("date", time.time() + 3 * 86400)), "'date'", "in the future")
CASES.add("results dated 1e300", _ingest(_set("date", 1e300)), "'date'", "not a date")
CASES.add("results nested 200 levels deep", _ingest(_set("config.gen_kwargs", _nested(200))), "results_", "nested")
CASES.add("results nested 100000 levels deep", _one_line(lambda tmp: _deep_file(tmp)), "results_", "nested")
CASES.add("results task name with a newline", _ingest(lambda r: r["results"].update({"t\noy": {}})), "task name")
CASES.add("ingest --name with an escape", _ingest(name="evil\x1b[2Jmodel"), "--name", "control character")
CASES.add(
    "results model_args naming a model with a newline",
    _ingest(_set("config.model_args", "pretrained=org/model\nFAILED other")),
    "config.model_args",
    "control character",
)


def _predict_only(results: dict[str, Any]) -> None:  # lm_eval --predict_only: every metric is 'bypass'
    results["results"]["toy"] = {"alias": "toy", "bypass,none": 999, "bypass_stderr,none": "N/A"}


CASES.add(  # issue 42: it was "the samples file does not belong to this results file"
    "results of a --predict_only run",
    _ingest(_predict_only),
    "results_",
    "results.toy",
    "--predict_only",
    "no scores to publish",
)


def _deep_file(tmp: Path) -> Any:
    path = tiny_run(tmp)
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return ingest_results(path)


@CASES.case("samples file with every line twice", "samples_toy_", "line 5", "doc_id 0", "already on line 1")
def _(tmp: Path) -> Any:
    lines = [{"doc_id": i, "acc": float(i % 2)} for i in range(4)]
    return ingest_results(tiny_run(tmp, lines=lines + lines))


def _cli_in(tmp: Path, *argv: str) -> Any:
    return cli("leaderboard", *argv, "--out", str(tmp / "board"), "--no-progress")


for _argv, _expect in [
    (("--night", "9999-12-31"), ("--night", "in the future")),
    (("--night", "2026-1-5"), ("--night", "YYYY-MM-DD", "'2026-01-05'")),
    (("--n-resamples", "1"), ("--n-resamples", "1,000")),
    (("--n-resamples", "2000000000"), ("--n-resamples", "100,000")),
    # issue 29: a run measured today was accepted under these nights
    (("--night", "1970-01-01"), ("results_", "--night 1970-01-01", "days before the run", "--allow-backfill")),
    (("--night", "0001-01-01"), ("results_", "--night 0001-01-01", "days before the run", "--allow-backfill")),
    (("--allow-backfill",), ("--allow-backfill", "--night YYYY-MM-DD")),
]:
    CASES.add(
        f"ingest {' '.join(_argv)}",
        _one_line(lambda tmp, argv=_argv: _cli_in(tmp, "ingest", str(tiny_run(tmp)), *argv)),
        *_expect,
    )


def _board_with(tmp: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Any:
    from conftest import hand_row  # tests/conftest.py (imported here: test modules elsewhere import tiny_run)

    document = make_document("leaderboard", [hand_row()], [], night="2026-01-01")
    edit(document["rows"])
    document["boards"][0]["n_rows"] = len(document["rows"])
    path = tmp / "leaderboard.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return load_document(path)


def _copy_with_new_id(rows: list[dict[str, Any]]) -> None:
    rows.append(copy.deepcopy(rows[0]))
    rows[1]["row_id"] = "f" * 16


def _copy_under_new_name(rows: list[dict[str, Any]]) -> None:
    twin = copy.deepcopy(rows[0])
    twin["model"]["name"] = "tiny-twin"
    model = twin["model"]
    twin["row_id"] = row_id(model["name"], model["revision"], model["precision"], "0" * 16, twin["settings_id"])
    rows.append(twin)


CASES.add(
    "board validate: duplicate row with a new row_id",
    lambda tmp: _board_with(tmp, _copy_with_new_id),
    "leaderboard.json",
    "rows[1].row_id",
    "not the hash",
)
CASES.add(
    "board validate: one run listed under two names",
    lambda tmp: _board_with(tmp, _copy_under_new_name),
    "leaderboard.json",
    "same run",
    "'tiny-twin'",
)
CASES.add(
    "board validate: model name with a control character",
    lambda tmp: _board_with(tmp, lambda rows: rows[0]["model"].update(name="tiny\u0085")),
    "leaderboard.json",
    "model.name",
)
CASES.add(
    "board validate: task name with a newline",
    lambda tmp: _board_with(
        tmp, lambda rows: rows[0]["tasks"].update({"x\ny": rows[0]["tasks"]["logic_consistency_causal"]})
    ),
    "leaderboard.json",
    "rows[0].tasks",
)
CASES.add(
    "board validate: row measured in the future",
    lambda tmp: _board_with(tmp, lambda rows: rows[0].update(measured_at="9999-01-01T00:00:00Z")),
    "leaderboard.json",
    "rows[0].measured_at",
    "in the future",
)


# ------------------------------------------------------------------------------------ documents (--samples)
class _Boards(Exception):  # noqa: N818 - carries what a case observed, for the table to check
    """Raised by a case that checks where rows land rather than an error."""


def _selection(tmp: Path, documents: list[int], *, hashes: bool = True) -> dict[str, Any]:
    """A row of a run on ``documents`` of 10 (as ``lm_eval --samples`` runs them: no limit)."""
    lines = [{"doc_id": i, "acc": float(i % 2)} | ({"doc_hash": f"hash-of-{i}"} if hashes else {}) for i in documents]

    def selected(results: dict[str, Any]) -> None:
        results["n-samples"]["toy"] = {"original": 10, "effective": len(documents)}

    return ingest_results(tiny_run(tmp / str(documents), selected, lines=lines))


@CASES.case("rows on different documents (--samples)", "2 boards", "· documents ", error=_Boards)
def _(tmp: Path) -> Any:  # issue 29: --samples was recorded nowhere, both rows shared one board
    rows = [_selection(tmp, [0, 1, 2, 3]), _selection(tmp, [4, 5, 6, 7])]
    boards = make_document("leaderboard", rows, night="2026-01-01")["boards"]
    raise _Boards(f"{len(boards)} boards: {[board['label'] for board in boards]}")


CASES.add(
    "a selection of documents without doc_hash",
    lambda tmp: _selection(tmp, [0, 1], hashes=False),
    "samples_toy_",
    "'doc_hash'",
    "2 of 10 documents",
)
