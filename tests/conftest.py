"""Fixtures shared by every test folder."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from hypothesis import settings

from logic_consistency import credentials
from logic_consistency.leaderboard.board.identity import row_id, settings_id
from logic_consistency.leaderboard.board.merge import make_document

# Test modules anywhere under tests/ import this folder's helpers by name (``import children``: the
# tests' one starter of child processes); pytest's importlib mode puts no test folder on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import children  # noqa: E402

_SHA = "0" * 64

# A shell that starts a job in the background (`bash .ci/run &`, nohup, cron) starts it with SIGINT
# ignored, and an ignored signal is inherited across exec: the Ctrl-C tests' children would then never
# see their SIGINT. A Python handler is reset to the default at exec, so this gives every child of this
# process (and of the xdist workers, which import this file) Ctrl-C back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Every process of this run reads lm-eval's built-in task index from one file (tests/site/sitecustomize.py):
# this process and the xdist workers through the import below, child processes through PYTHONPATH.
# The controller chooses the file; the workers inherit its environment.
_SITE = Path(__file__).resolve().parent / "site"
_INDEX_FOLDER: Path | None = None  # made by this process, removed at its end (the controller's)
if not os.environ.get("LC_TEST_LM_EVAL_INDEX"):
    _INDEX_FOLDER = Path(tempfile.mkdtemp(prefix="lc-lm-eval-index-"))
    os.environ["LC_TEST_LM_EVAL_INDEX"] = str(_INDEX_FOLDER / "index.json")
if str(_SITE) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(_SITE), os.environ.get("PYTHONPATH")) if p)
_spec = importlib.util.spec_from_file_location("lc_test_sitecustomize", _SITE / "sitecustomize.py")
assert _spec is not None and _spec.loader is not None
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _INDEX_FOLDER is not None:
        shutil.rmtree(_INDEX_FOLDER, ignore_errors=True)


# Tests check results, not wall-clock time: no per-example deadline (under two pytest workers on two
# cores an example can take several times its quiet-machine time).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

#: Fixtures that start a process (an lm_eval run, the CLI, llama.cpp's server, a browser): a test that
#: uses one is ``slow`` (the full tier), whether or not it is marked itself.
_PROCESS_FIXTURES = frozenset({"dummy_run", "run_copy", "cli", "chat_server", "counting_proxy", "chromium", "browser"})


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)`` once per pytest run, whatever the number of xdist workers: the first worker
    to ask builds it (under a file lock) in a folder all workers share and records what it returned;
    the others wait for the lock and read the record. For expensive fixtures that tests only read."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common folder
    record = root / f"built-{name}.json"
    with FileLock(str(root / f"built-{name}.lock")):
        if not record.exists():
            folder = root / f"built-{name}"
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            record.write_text(json.dumps({"path": str(build(folder))}), encoding="utf-8")
    return Path(json.loads(record.read_text(encoding="utf-8"))["path"])


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark ``slow`` each test that uses a fixture starting a process (:data:`_PROCESS_FIXTURES`), as it
    is collected (before ``-m "not slow"`` deselects)."""
    if _PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules with ``slow`` tests go first: under ``pytest -n N --dist loadfile`` (scripts/test.sh) a
    module is one unit of work, handed out in this order, so the longest ones start at once instead of
    ending the run on one busy worker (without xdist only the order of modules changes)."""
    slow_modules = {_module(item) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: _module(item) not in slow_modules)


def hand_row(model: str = "tiny", *, score: float = 0.75, tau: float = 0.5) -> dict[str, Any]:
    """A small, valid leaderboard row written by hand (no lm_eval run): one pairwise and one causal task."""
    settings = {
        "suite_version": "0.1.0",
        "lm_eval_version": "0.4.13",
        "limit": 2.0,
        "gen_kwargs": None,
        "seeds": {"random_seed": 0},
        "tasks": {
            task: {
                "config_hash": _SHA,
                "version": 1,
                "num_fewshot": 0,
                "n_original": 4,
                "n_effective": 2,
                "options": {"max_items": 5},
            }
            for task in ("logic_consistency_summeval", "logic_consistency_causal")
        },
    }
    sid = settings_id(settings)

    def metric(value: float) -> dict[str, Any]:
        return {"score": value, "ci95": [value, value], "n": 2, "higher_is_better": True, "lm_eval_stderr": None}

    def entry(metrics: dict[str, Any]) -> dict[str, Any]:
        return {
            "kind": "task",
            "alias": "x",
            "version": 1,
            "subtasks": [],
            "n_instances": 2,
            "n_original": 4,
            "unparseable": 0,
            "metrics": metrics,
            "counts": {"unparseable_judgement": {"total": 0, "n": 2}},
        }

    return {
        "row_id": row_id(model, "unpinned", "n/a", "0" * 16, sid),
        "model": {
            "name": model,
            "backend": "dummy",
            "model_args": "",
            "revision": "unpinned",
            "revision_source": "unpinned",
            "precision": "n/a",
        },
        "prompt_set": {"id": "0" * 16, "tasks": {}},
        "settings_id": sid,
        "settings": settings,
        "night": "2026-01-01",
        "measured_at": "2026-01-01T00:00:00Z",
        "tasks": {
            "logic_consistency_summeval": entry({"s_comm": metric(score), "s_tran_3": metric(score)}),
            "logic_consistency_causal": entry({"tau_all": metric(tau), "cgp": metric(score)}),
        },
        "confusion": {},
        "provenance": {
            "suite_version": "0.1.0",
            "lm_eval_version": "0.4.13",
            "transformers_version": None,
            "git_hash": None,
            "task_config_hashes": {},
            "task_hashes": {},
            "chat_template_applied": False,
            "chat_template_sha": None,
            "system_instruction_sha": None,
            "fewshot_as_multiturn": False,
            "limit": 2.0,
            "items_per_instance": 5,
            "seed": 0,
            "run_options": {},
            "date": "2026-01-01T00:00:00Z",
            "run_time_seconds": 1.0,
            "results_file": "results.json",
            "batch_size": 1,
            "device": None,
        },
    }


@pytest.fixture
def hand_board() -> dict[str, Any]:
    """A valid leaderboard document with one hand-written row (see :func:`hand_row`)."""
    return make_document("leaderboard", [hand_row()], [], night="2026-01-01")


@pytest.fixture(autouse=True)
def _credentials_registered_by_one_test_stay_in_it() -> Iterator[None]:
    """A backend or model list registers the credentials it sends for the rest of its process
    (``credentials.register_secret``); one test's key must not redact another test's output."""
    saved = dict(credentials._REGISTERED)
    yield
    credentials._REGISTERED.clear()
    credentials._REGISTERED.update(saved)


#: The small run used everywhere: 2 instances per task, 5 items per instance.
RUN_ARGS = ("--limit", "2", "--metadata", json.dumps({"max_items": 5}))


@pytest.fixture(scope="session")
def dummy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results file of ``lm_eval --model dummy --tasks logic_consistency`` on the fixture data (with
    samples; its log is ``lm_eval.log`` two folders up): one real run per pytest run, shared by every
    test that reads or copies it."""
    root = Path(__file__).resolve().parents[1]
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    env = {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(root / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }

    def run(out: Path) -> Path:
        command = [lm_eval, "--model", "dummy", "--tasks", "logic_consistency", *RUN_ARGS]
        command += ["--output_path", str(out), "--log_samples"]
        done = children.run(command, capture_output=True, text=True, env=env, timeout=900, cwd=root)
        assert done.returncode == 0, done.stderr[-4000:]
        (out / "lm_eval.log").write_text(done.stderr, encoding="utf-8")  # its log, read by tests (quiet run)
        files = sorted(out.glob("*/results_*.json"))
        assert len(files) == 1, files
        return files[0]

    return built_once(tmp_path_factory, "dummy_run", run)
