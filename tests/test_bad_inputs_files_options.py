"""The bad-input table, second part (issue 17): encodings and permissions of every dataset file,
option typos, types and huge values of every family, corrupt request caches, conflicting REPAIR
inputs. Same contract as ``tests/test_bad_inputs.py``: each case raises, and the message names the
file, line, option or argument at fault. Every task's loader refuses a ``dataset_kwargs`` key it does
not name. Inputs given twice and empty inputs are not errors: the tests at the end check that they
are used once and said so, or warned about.
"""

from __future__ import annotations

import json
import logging
import pathlib
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.common import files_or_folders
from logic_consistency.harness_ext.publish.request_cache import RequestCacheError, check_request_cache
from logic_consistency.harness_ext.task.base import loader_name, loader_parameter_names
from logic_consistency.options import OptionError, declared_options
from logic_consistency.tasks.pairwise.options import PairwiseOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bad_input_options import PROMPTS  # noqa: E402
from bad_inputs_support import (  # noqa: E402
    DATA_FILES,
    Case,
    CaseTable,
    build_task,
    cli,
    copy_data,
    loader,
    run_case,
    suite_tasks,
    task_config,
)

CASES = CaseTable()


# ------------------------------------------------------------------------------------ encodings
def _bad_byte(dataset: str, relative: str, how: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        target = copy_data(tmp) / relative
        data = target.read_bytes()
        if how == "latin-1 byte":
            cut = data.index(b"\n", len(data) // 3) + 1  # start of a line in the middle
            target.write_bytes(data[:cut] + b"caf\xe9 " + data[cut:])
        elif how == "UTF-16":
            target.write_bytes(data.decode("utf-8").encode("utf-16"))
        elif how == "cut in a character":
            target.write_bytes(data + "é".encode()[:1])
        return loader(dataset)()

    return run


for _dataset, _relative, _ in DATA_FILES:
    _name = Path(_relative).name
    CASES.add(
        f"encoding {_dataset} {_name} latin-1 byte",
        _bad_byte(_dataset, _relative, "latin-1 byte"),
        _name,
        "line",
        "byte offset",
        "not valid UTF-8",
    )
for _dataset, _relative in [
    ("summeval", "summeval/summeval_hub_format.jsonl"),
    ("advbench", "advbench/harmful_behaviors.csv"),
    ("triviaqa", "triviaqa/triviaqa.json"),
]:
    CASES.add(
        f"encoding {_dataset} UTF-16 file", _bad_byte(_dataset, _relative, "UTF-16"), Path(_relative).name, "line 1"
    )
CASES.add(
    "encoding delta_causal cut in a character",
    _bad_byte("delta_causal", "delta_causal/shuffled_test_extended.csv", "cut in a character"),
    "shuffled_test_extended.csv",
    "byte offset",
)


# ------------------------------------------------------------------------------------ permissions
def _unreadable(dataset: str, relative: str) -> Callable[[Path], Any]:
    """Tests run as root, where chmod 000 does not stop reading: the open itself is made to fail."""

    def run(tmp: Path) -> Any:
        target = (copy_data(tmp) / relative).resolve()
        original = pathlib.Path.open

        def refusing(self: Path, *args: Any, **kwargs: Any) -> Any:
            if self.resolve() == target:
                raise PermissionError(13, "Permission denied", str(self))
            return original(self, *args, **kwargs)

        pathlib.Path.open = refusing  # type: ignore[method-assign]
        try:
            return loader(dataset)()
        finally:
            pathlib.Path.open = original  # type: ignore[method-assign]

    return run


for _dataset, _relative, _ in DATA_FILES:
    CASES.add(
        f"permission {_dataset} {Path(_relative).name}",
        _unreadable(_dataset, _relative),
        Path(_relative).name,
        "permission denied",
        error=PermissionError,
    )


# ------------------------------------------------------------------------------------ options
for _metadata, _message in [
    ({"pairs_runs": 10**9}, f"pairs_runs must be at most {declared_options()['pairs_runs'].maximum:,}"),
    ({"transitivity_samples": 10**12}, "transitivity_samples must be at most"),
    ({"transitivity_samples": True}, "transitivity_samples"),
    ({"pairs_runs": 1.5}, "pairs_runs"),
    ({"max_items": 1e9}, "max_items"),
    ({"ks": [3, 1e3]}, "ks"),
    ({"ordr": "narrative"}, "'order'"),
    ({"n_doc": 5}, "'n_docs'"),
    ({"sample": 3}, "'samples'"),
    ({"pair_runs": 3}, "'pairs_runs'"),
    ({"transitivity_sample": 3}, "'transitivity_samples'"),
]:
    CASES.add(
        f"pairwise metadata {_metadata}",
        lambda tmp, md=_metadata: PairwiseOptions.from_config(PROMPTS, md, task="t"),
        "task 't'",
        _message,
    )


def _gv(module: str, function: str = "load", **options: Any) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        import importlib

        copy_data(tmp)
        return getattr(importlib.import_module(f"logic_consistency.tasks.gv.{module}"), function)(**options)

    return run


for _module, _options, _message in [
    ("arithmetic", {"n_docs": 10**8}, f"n_docs must be at most {declared_options()['n_docs'].maximum:,}"),
    ("arithmetic", {"n_docs": 1e8}, "n_docs must be an integer"),
    ("arithmetic", {"n_docs": 0}, "n_docs"),
    ("arithmetic", {"max_digits": 10}, "max_digits"),
    ("arithmetic", {"max_digits": "5"}, "max_digits"),
    ("arithmetic", {"operations": "/"}, "operations"),
    *[("arithmetic", {"generator_shots": bad}, "generator_shots") for bad in (-1, 99, "2", 2.0, True)],
    ("arithmetic", {"operations": "++"}, "operations"),
    ("arithmetic", {"seed": -1}, "seed"),
    ("plan_arithmetic", {"negation": "nope"}, "negation"),
    ("plan_arithmetic", {"n_docs": 10**9}, "n_docs must be at most"),
    ("style_transfer", {"style_split": "trian"}, "'train'"),
    ("triviaqa", {"n_docs": 10**7}, "n_docs must be at most"),
    ("harmful", {"n_docs": -5}, "n_docs"),
    ("prompt_prioritization", {"seed": "1"}, "seed"),
]:
    CASES.add(f"gv {_module} {_options}", _gv(_module, **_options), _message, error=OptionError)


def _causal(**options: Any) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from logic_consistency.tasks.causal.hooks import load_ctp

        copy_data(tmp)
        return load_ctp(**options)

    return run


CASES.add("causal conjunction 'bcause'", _causal(conjunction="bcause"), "conjunction", "'because'", error=OptionError)
CASES.add("causal split 'dev'", _causal(conjunction="so", split="dev"), "split", error=OptionError)
CASES.add("causal one_per_pair 'yes'", _causal(conjunction="so", one_per_pair="yes"), "one_per_pair", error=OptionError)


def _model_list(text: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from logic_consistency.leaderboard.run.modellist import load_model_list

        path = tmp / "models.yaml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return load_model_list(path)

    return run


CASES.add(
    "model list metadata near miss",
    _model_list("metadata: {max_digit: 3}\nmodels:\n  - {name: a, model: dummy}\n"),
    "models.yaml",
    "'max_digit'",
    "'max_digits'",
)
CASES.add(
    "model list entry metadata near miss",
    _model_list("models:\n  - {name: a, model: dummy, metadata: {sed: 3}}\n"),
    "models.yaml",
    "'sed'",
    "'seed'",
)
CASES.add(
    "model list not UTF-8",
    _model_list(b"models:\n  - {name: caf\xe9, model: dummy}\n"),  # type: ignore[arg-type]
    "models.yaml",
    "line 2",
    "not valid UTF-8",
)


# ------------------------------------------------------------------------------------ request cache
def _cache(content: Callable[[Path], None]) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        path = tmp / "cache_rank0.db"
        content(path)
        return check_request_cache(path)

    return run


def _truncated_db(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
        connection.executemany("INSERT INTO unnamed VALUES (?, ?)", [(str(i), b"x" * 3000) for i in range(200)])
    connection.close()
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\x00" * 5000 + data[5100:])


for _name, _content in [
    ("text", lambda path: path.write_text("not a database " * 100)),
    ("empty header", lambda path: path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)),
    ("folder", lambda path: path.mkdir()),
    ("damaged pages", _truncated_db),
]:
    CASES.add(
        f"request cache {_name}",
        _cache(_content),
        "--use_cache",
        "cache_rank0.db",
        "delete it",
        error=RequestCacheError,
    )


def _locked_cache(tmp: Path) -> Any:
    """A sound cache that a second connection (another run) holds an exclusive lock on."""
    path = tmp / "cache_rank0.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
    connection.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        return check_request_cache(path, timeout=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


CASES.add(
    "request cache locked by another run",
    _locked_cache,
    "--use_cache",
    "cache_rank0.db",
    "in use by another run",
    "wait",
    error=RequestCacheError,
)
CASES.add(
    "request cache in an unwritable folder",
    lambda tmp: check_request_cache("/proc/logic_consistency_cache/c_rank0.db"),
    "--use_cache",
    "/proc",
    "writable folder",
    error=RequestCacheError,
)


def _pickled_cache(path: Path) -> None:
    """lm-eval's own format: a pickled answer (never unpickled: issue 46)."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB)")
        connection.execute("INSERT INTO unnamed VALUES (?, ?)", ("0" * 64, b"\x80\x04\x95planted"))
    connection.close()


CASES.add(
    "request cache holding a pickle (lm-eval's format, or planted)",
    _cache(_pickled_cache),
    "--use_cache",
    "cache_rank0.db",
    "not JSON text",
    "never read",
    error=RequestCacheError,
)


# ------------------------------------------------------------------------------------ REPAIR inputs
def _prefs(lines: list[dict[str, Any]]) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        path = tmp / "prefs.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return cli("repair", str(path), "--out", str(tmp / "out"))

    return run


ROW = {"instance_id": "q1", "item_a": "a", "item_b": "b", "winner": "a", "text_a": "first", "text_b": "second"}
CASES.add(
    "repair two texts for one item",
    _prefs([ROW, {**ROW, "item_a": "a", "item_b": "c", "text_a": "other", "text_b": "x"}]),
    "prefs.jsonl line 2",
    "'a'",
    "two different texts",
)
CASES.add(
    "repair two contexts for one instance",
    _prefs([{**ROW, "context": "c1"}, {**ROW, "context": "c2"}]),
    "prefs.jsonl line 2",
    "'q1'",
    "two different contexts",
)


def _bytes_file(name: str, data: bytes, *argv: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        path = tmp / name
        path.write_bytes(data)
        return cli(*[arg.replace("FILE", str(path)).replace("TMP", str(tmp)) for arg in argv])

    return run


CASES.add(
    "repair preferences not UTF-8",
    _bytes_file("prefs.jsonl", b'{"instance_id": "q\xff"}\n', "repair", "FILE", "--out", "TMP/o"),
    "prefs.jsonl line 1",
    "byte offset 18",
)
CASES.add(
    "causal-confusion samples not UTF-8",
    _bytes_file(
        "samples_logic_consistency_causal_ranking_2026-01-01T00-00-00.0.jsonl",
        b"\xc3(\n",
        "causal-confusion",
        "FILE",
        "--out",
        "TMP/o",
    ),
    "line 1",
    "byte offset 0",
)
CASES.add(
    "export-gv samples not UTF-8",
    _bytes_file(
        "samples_logic_consistency_gv_arithmetic_2026-01-01T00-00-00.0.jsonl",
        b"\x80\n",
        "export-gv",
        "FILE",
        "--out",
        "TMP/o",
    ),
    "samples_logic_consistency_gv_arithmetic",
    "line 1",
)
CASES.add(
    "correlate results not UTF-8",
    _bytes_file("results_2026-01-01T00-00-00.json", b'{"results": "\xfe"}', "correlate", "FILE"),
    "results_2026-01-01T00-00-00.json",
    "line 1",
)


# ------------------------------------------------------------------------------------ the tests
def test_this_part_of_the_table_holds_at_least_60_cases() -> None:
    assert len(CASES) >= 60, len(CASES)
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("bad", CASES, ids=CASES.ids())
def test_bad_input_is_named(bad: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(bad, tmp_path, monkeypatch)


LOADER_TASKS = sorted(
    name
    for name in suite_tasks().all_subtasks
    if name.startswith("logic_consistency") and callable(task_config(name).get("custom_dataset"))
)


def test_the_loader_check_covers_every_family() -> None:
    for family in ("_summeval", "_gv_", "_causal_"):  # pairwise, generator-validator, causal
        assert any(family in task for task in LOADER_TASKS), (family, LOADER_TASKS)


@pytest.mark.parametrize("task", LOADER_TASKS)
def test_every_loader_refuses_an_unknown_dataset_kwargs_key(task: str) -> None:
    """A typo of the loader's last parameter in ``dataset_kwargs``: refused before any data loads."""
    loader = task_config(task)["custom_dataset"]
    parameter = loader_parameter_names(loader)[-1]
    typo = parameter + parameter[-1]
    with pytest.raises(OptionError) as raised:
        build_task(task, **{typo: 1})
    message = str(raised.value)
    for part in (f"task {task!r}", loader_name(loader), f"{typo!r} -> {parameter!r}"):
        assert part in message, f"{part!r} not in {message}"


def test_a_file_given_twice_or_inside_a_given_folder_is_used_once_and_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    first, second = folder / "results_1.json", folder / "results_2.json"
    first.write_text("{}")
    second.write_text("{}")
    (tmp_path / "link.json").symlink_to(first)
    with caplog.at_level(logging.WARNING, logger="logic_consistency"):
        found = files_or_folders([first, folder, first, tmp_path / "link.json"], "results_*.json")
    assert found == [first, second]
    assert "3 input file(s) given more than once, used once" in caplog.text and str(first) in caplog.text


def test_empty_samples_files_are_warned_about(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    causal = tmp_path / "samples_logic_consistency_causal_ranking_2026-01-01T00-00-00.0.jsonl"
    gv = tmp_path / "samples_logic_consistency_gv_arithmetic_2026-01-01T00-00-00.0.jsonl"
    causal.write_text("")
    gv.write_text("")
    with caplog.at_level(logging.WARNING, logger="logic_consistency"):
        cli("causal-confusion", str(causal), "--out", str(tmp_path / "figures"))
        cli("export-gv", str(gv), "--out", str(tmp_path / "pairs"))
    assert f"{causal}: no samples in this file" in caplog.text
    assert "no parsed ranking" in caplog.text and "confusion matrix is empty" in caplog.text
    assert f"{gv}: no samples in this file" in caplog.text


def test_correlate_counts_a_file_given_twice_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for index in range(3):
        results = {
            f"logic_consistency_summeval_para0{index + 1}": {"s_comm,none": 0.1 * index, "human_agreement,none": 0.2}
        }
        path = tmp_path / f"m{index}" / f"results_2026-01-0{index + 1}T00-00-00.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"results": results, "model_name": f"m{index}", "config": {}}))
    cli("correlate", str(tmp_path))
    once = capsys.readouterr().out
    cli("correlate", str(tmp_path), str(tmp_path / "m0"), str(tmp_path / "m0" / "results_2026-01-01T00-00-00.json"))
    assert capsys.readouterr().out == once
